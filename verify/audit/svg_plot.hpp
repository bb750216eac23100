// The picture numerical analysts expect of a sweep (--sweep --plot FILE.svg): relative error against condition
// number on log-log axes, one series per algorithm, with the line u * condition of each accumulation type as a guide
// (a sum correct to working precision in the inputs' backward sense sits on or below it). A self-contained SVG file.
#pragma once

#include <ostream>
#include <vector>

#include "report.hpp"

namespace detred::audit {

void write_svg_plot(std::ostream& out, const std::vector<input_report>& sweep);

}  // namespace detred::audit
