// The audit as CSV (--csv): one row per input and algorithm, RFC 4180 quoting, values as decimal and hex-float.
#pragma once

#include <ostream>
#include <vector>

#include "report.hpp"

namespace detred::audit {

void write_csv(std::ostream& out, const std::vector<input_report>& reports);

}  // namespace detred::audit
