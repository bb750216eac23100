// Thread- and block-level canonical subtrees, usable inside users' kernels.
//
// Both compute T(a, 2^level) of docs/ORDER.md, the complete pairwise tree over 2^level consecutive items, items
// delivered by a loader: load(i) returns item i (0 <= i < 2^level) as an accumulator (e.g.
// Acc::from_value(widen<A>(x[first + i])) for inputs, or a stored subtree root). The result is a node of the
// canonical tree of the whole input whenever the items are an aligned block of it.
#pragma once

#include <cstdint>

#include "detred/accumulators/pairwise.hpp"
#include "detred/cuda/detail/registers.cuh"
#include "detred/cuda/warp/warp_reduce.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/order.hpp"

namespace detred::cuda {

// One thread: T(first, 2^level) over load(first), load(first + 1), ... Groups of 8 loads are issued together (two
// groups together at level 4); up to 32 group roots are joined in registers, more by a binary counter (in local
// memory).
template <class Acc, class Load>
__device__ Acc thread_subtree_root(const Load& load, std::uint64_t first, int level) {
  if (level < 3) {
    Acc v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (i < (1 << level)) v[i] = load(first + i);
    if (level >= 1) v[0] = detail::merged(v[0], v[1]), v[2] = detail::merged(v[2], v[3]);
    if (level == 2) v[0] = detail::merged(v[0], v[2]);
    return v[0];
  }
  const auto group_root = [&](std::uint64_t g) {
    Acc v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = load(first + 8 * g + i);
#pragma unroll
    for (int width = 8; width > 1; width /= 2) {
#pragma unroll
      for (int i = 0; i < width / 2; ++i) v[i] = detail::merged(v[2 * i], v[2 * i + 1]);
    }
    return v[0];
  };
  const std::uint64_t groups = std::uint64_t{1} << (level - 3);
  // 16 items (the one-warp finishing block of a small sum: 512 roots): straight-line, so that both groups' loads are
  // in flight before the first merge (one memory latency, not two); the same tree as the register_tree below.
  if (groups == 2) return detail::merged(group_root(0), group_root(1));
  if (groups <= 32) {
    register_tree32<Acc> joined;
    Acc root{};
    for (int g = 0; g < int(groups); ++g) root = joined.push(group_root(g), g);
    return root;
  }
  binary_counter<Acc, merge_accumulators> counter;
  for (std::uint64_t g = 0; g < groups; ++g) counter.push(group_root(g), 3);
  return counter.fold();
}

// The whole block (BlockThreads, a power of two from 32 to 1024, all threads calling with the same level):
// T(0, 2^level) over load(0 .. 2^level). Each thread first reduces 2^(level - log2 BlockThreads) consecutive items
// when the block has fewer threads than items, then a warp butterfly and a tree over the warp roots join them.
// warp_roots: shared memory for BlockThreads / 32 accumulators. The root is returned in thread 0.
template <int BlockThreads, class Acc, class Load>
__device__ Acc block_subtree_root(const Load& load, int level, Acc* warp_roots) {
  static_assert(BlockThreads >= 32 && BlockThreads <= 1024 && (BlockThreads & (BlockThreads - 1)) == 0);
  constexpr int block_level = BlockThreads == 32    ? 5
                              : BlockThreads == 64  ? 6
                              : BlockThreads == 128 ? 7
                              : BlockThreads == 256 ? 8
                              : BlockThreads == 512 ? 9
                                                    : 10;
  const int thread = threadIdx.x, lane = thread & 31, warp = thread >> 5;
  const int thread_levels = level < block_level ? 0 : level - block_level;  // levels inside one thread
  const int across = level - thread_levels;                                 // levels across threads
  Acc v{};
  if (thread < (1 << across)) v = thread_subtree_root<Acc>(load, std::uint64_t(thread) << thread_levels, thread_levels);
  const int lane_levels = across < 5 ? across : 5;
  v = warp_tree_reduce(v, lane_levels);
  const int warp_levels = across - lane_levels;
  if (warp_levels == 0) return v;
  if (lane == 0) warp_roots[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (1 << warp_levels) ? warp_roots[lane] : Acc{};
    v = warp_tree_reduce(v, warp_levels);
  }
  __syncthreads();  // warp_roots may be reused by the next call
  return v;
}

}  // namespace detred::cuda
