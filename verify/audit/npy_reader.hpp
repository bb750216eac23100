// NumPy .npy input (format versions 1.0, 2.0 and 3.0): float16, float32 or float64 in either byte order, any shape,
// read in C order. https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "dataset.hpp"

namespace detred::audit {

// The six bytes every .npy file starts with.
inline constexpr std::string_view npy_magic{"\x93NUMPY", 6};

// Reads a whole .npy file. Errors (input_error naming `source`, the byte offset and the problem): empty file, wrong
// magic, unknown format version, a header that runs past the end of the file or is not the dict numpy writes, an
// unsupported dtype (anything but <f2 >f2 <f4 >f4 <f8 >f8), Fortran order (unless it coincides with C order, as for
// 1-D arrays), zero elements, and data that is shorter (truncated) or longer than the shape says.
read_result parse_npy(std::span<const std::byte> bytes, std::string_view source);

}  // namespace detred::audit
