// CPU launch tuning, apart from the algorithms. Changing any value here changes speed, never a result bit: chunks are
// aligned power-of-two blocks, hence complete canonical subtrees (docs/ORDER.md).
#pragma once

#include <cstddef>

namespace detred::detail {

// Inputs are cut into aligned chunks of 2^cpu_chunk_level elements, one task each.
inline constexpr int cpu_chunk_level = 16;
inline constexpr std::size_t cpu_chunk_size = std::size_t{1} << cpu_chunk_level;

}  // namespace detred::detail
