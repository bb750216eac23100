// Raw binary input: a file that is nothing but values of one type, back to back (--dtype names the type; little-endian
// unless --endian big says otherwise).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "byte_order.hpp"
#include "dataset.hpp"

namespace detred::audit {

// Reads every value of `bytes` as `type`. Errors (input_error naming `source` and the offset): an empty file, and a
// size that is not a whole number of values (a truncated last value).
read_result parse_raw(std::span<const std::byte> bytes, element_type type, byte_order order, std::string_view source);

}  // namespace detred::audit
