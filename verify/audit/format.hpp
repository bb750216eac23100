// How the audit tool spells numbers: decimal (shortest that reads back to the same bits), C99 hex-float (exact), and
// short scientific notation for tables.
#pragma once

#include <string>

#include "algorithms.hpp"

namespace detred::audit {

// C99 hex-float of the value in its own type ("0x1.8p+1", "-0x0p+0", "inf", "-inf", "nan"): exact, and read back by
// strtod, Python's float.fromhex and the audit tool's text reader.
std::string hex_string(double x);
std::string hex_string(float x);
std::string hex_string(const sum_value& x);

// The shortest decimal that reads back to the same value in its own type ("0.1", "1e+300", "inf", "nan").
std::string decimal_string(double x);
std::string decimal_string(float x);
std::string decimal_string(const sum_value& x);

// `digits` significant digits in scientific notation ("1.23e-04"), for tables.
std::string short_string(double x, int digits = 3);

double as_double(const sum_value& x);  // exact

}  // namespace detred::audit
