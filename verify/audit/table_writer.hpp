// The audit for people: per input its facts, then one aligned row per algorithm, then the broken promises.
#pragma once

#include <ostream>
#include <vector>

#include "report.hpp"

namespace detred::audit {

void write_table(std::ostream& out, const std::vector<input_report>& reports);

// A sweep (--sweep) as one matrix: a row per condition number, a column per algorithm, relative errors.
void write_sweep_table(std::ostream& out, const std::vector<input_report>& reports);

}  // namespace detred::audit
