// Text input: numbers separated by whitespace, newlines or commas, each a C decimal ("-1.5e-3"), a C99 hex-float
// ("0x1.8p-3"), "inf" or "nan" (as strtod spells them); '#' starts a comment that runs to the end of the line. A
// leading UTF-8 byte order mark is skipped.
#pragma once

#include <string_view>

#include "dataset.hpp"

namespace detred::audit {

// Reads every number of `text` as `type`, each correctly rounded (round to nearest, ties to even) from the exact value
// written: f64 and f32 through strtod/strtof, f16 and bf16 through round-to-odd so that no double rounding occurs.
// Overflow gives +-Inf and tiny values subnormals or zero, as IEEE conversion does. Errors (input_error naming
// `source`, the line and column): an empty file, a file without numbers, a token that is not a number, an empty
// field between commas.
read_result parse_text(std::string_view text, element_type type, std::string_view source);

// The same correct rounding for one token (the whole of `token` must be a number); nullopt if it is not one.
// Exposed for tests.
std::optional<double> parse_number_as_double(std::string_view token);
template <class T>
std::optional<T> parse_number(std::string_view token);

}  // namespace detred::audit
