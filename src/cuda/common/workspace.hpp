// Layout of the caller's device workspace for cuda::sum: a 256-byte header (the host-result staging slot of
// sum_to_host), then one accumulator per chunk or tail-tile root. Its size bound, sum_workspace_bytes(n), holds for
// every type pair, method and launch configuration: the smallest tile (fp64: 2^11 elements) with one tile per chunk
// gives the most roots, n / 2^11, plus fewer than 16 tail tiles; the largest accumulator is 16 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/cuda/exact/exact_sum.hpp"

namespace detred::cuda::detail {

inline constexpr std::size_t workspace_header_bytes = 256;
inline constexpr std::size_t max_accumulator_bytes = 16;
inline constexpr int smallest_tile_level = 11;

inline constexpr std::size_t workspace_bytes_for(std::uint64_t n) {
  const std::size_t canonical = ((n >> smallest_tile_level) + 16) * max_accumulator_bytes;
  const std::size_t exact = exact_workspace_bytes(n);  // sum_method::exact's block states (src/cuda/exact/)
  return workspace_header_bytes + (canonical > exact ? canonical : exact);
}

template <class Acc>
Acc* workspace_roots(void* workspace) {
  return reinterpret_cast<Acc*>(static_cast<unsigned char*>(workspace) + workspace_header_bytes);
}

inline void* workspace_result_slot(void* workspace) { return workspace; }

// The single-pass sum's arrival word (header bytes 64..71): (tag << 24) | blocks arrived, left at (clean tag, 0) by
// each call's last block; a word with another tag (an unused workspace) counts as zero arrivals, so the workspace
// needs no initialisation (canonical_sum_kernels.cuh, arrive_last).
inline unsigned long long* workspace_arrivals(void* workspace) {
  return reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(workspace) + 64);
}

}  // namespace detred::cuda::detail
