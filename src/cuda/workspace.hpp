// Layout of the caller's device workspace for cuda::sum: a 256-byte header (the host-result staging slot of
// sum_to_host), then one accumulator per chunk or tail-tile root. Its size bound, sum_workspace_bytes(n), holds for
// every type pair, method and launch configuration: the smallest tile (fp64: 2^11 elements) with one tile per chunk
// gives the most roots, n / 2^11, plus fewer than 16 tail tiles; the largest accumulator is 16 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace detred::cuda::detail {

inline constexpr std::size_t workspace_header_bytes = 256;
inline constexpr std::size_t max_accumulator_bytes = 16;
inline constexpr int smallest_tile_level = 11;

inline constexpr std::size_t workspace_bytes_for(std::uint64_t n) {
  return workspace_header_bytes + ((n >> smallest_tile_level) + 16) * max_accumulator_bytes;
}

template <class Acc>
Acc* workspace_roots(void* workspace) {
  return reinterpret_cast<Acc*>(static_cast<unsigned char*>(workspace) + workspace_header_bytes);
}

inline void* workspace_result_slot(void* workspace) { return workspace; }

}  // namespace detred::cuda::detail
