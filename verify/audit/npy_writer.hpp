// Writes a data set as a .npy file (format 1.0, little-endian, C order), so that generated inputs can be saved
// (--save) and read back by numpy or by the audit tool. bfloat16, which numpy lacks, is refused.
#pragma once

#include <string>

#include "dataset.hpp"

namespace detred::audit {

// The whole file's bytes. Throws std::invalid_argument for bfloat16 data.
std::string npy_bytes(const dataset& data);

}  // namespace detred::audit
