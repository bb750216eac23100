// The picture of one audited input (--plot FILE.svg without --sweep): every algorithm a row, every distinct result it
// gave over the --repeat runs and the configurations a dot, placed at its signed error in ulps of the exact sum
// (rounded to the row's accumulation type) on a symmetric log axis. Deterministic rows (one result, whatever the
// run or configuration) are grouped above the rows without that promise, so a reader sees the single canonical dot
// beside the spread of the atomics and the classic ladder. A self-contained SVG file.
#pragma once

#include <ostream>
#include <vector>

#include "report.hpp"

namespace detred::audit {

void write_spread_plot(std::ostream& out, const std::vector<input_report>& reports);

}  // namespace detred::audit
