// Layout of the caller's device workspace for cuda::sum: a 256-byte header (the single pass's arrival word), then the
// method's data: one accumulator per chunk or tail-tile root (tree, tree_neumaier) or one state per block (exact,
// src/cuda/exact/exact_sum.hpp). The tree methods' bound holds for every type pair and launch shape: the smallest
// tile (fp64: 2^11 elements) with one tile per chunk gives the most roots, n / 2^11, plus fewer than 16 tail tiles;
// the largest accumulator is 16 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "detred/sum_method.hpp"
#include "src/cuda/exact/exact_sum.hpp"

namespace detred::cuda::detail {

inline constexpr std::size_t workspace_header_bytes = 256;
inline constexpr std::size_t max_accumulator_bytes = 16;
inline constexpr int smallest_tile_level = 11;

// Bytes a sum of n terms with `method` needs (tree, tree_neumaier or exact).
inline constexpr std::size_t workspace_bytes_for(std::uint64_t n, sum_method method) {
  if (method == sum_method::exact) return workspace_header_bytes + exact_workspace_bytes(n);
  return workspace_header_bytes + ((n >> smallest_tile_level) + 16) * max_accumulator_bytes;
}

template <class Acc>
Acc* workspace_roots(void* workspace) {
  return reinterpret_cast<Acc*>(static_cast<unsigned char*>(workspace) + workspace_header_bytes);
}

// The single pass's arrival word (header bytes 64..71): (tag << 24) | blocks arrived, left at (clean tag, 0) by
// each call's last block; a word with another tag (an unused workspace) counts as zero arrivals, so the workspace
// needs no initialisation (arrivals.cuh, arrive_last).
inline unsigned long long* workspace_arrivals(void* workspace) {
  return reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(workspace) + 64);
}

}  // namespace detred::cuda::detail
