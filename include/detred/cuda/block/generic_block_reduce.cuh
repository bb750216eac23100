// Block-level canonical subtrees for ANY associative operator (commutative or not), usable inside users' kernels;
// predicated, never padded, so no identity is needed.
//
// block_subtree_reduce computes T(0, 2^level) of docs/ORDER.md over load(0), ..., load(2^level - 1) with the whole
// block; block_prefix_reduce computes the canonical reduce of count < 2^63 items (the left fold of the complete trees
// of count's binary digits, largest first). Both are nodes of the canonical tree of the whole input when the items
// are an aligned block of it (for block_prefix_reduce: when they start at a multiple of the largest digit block).
#pragma once

#include <cstdint>

#include "detred/cuda/warp/generic_warp_reduce.cuh"
#include "detred/order.hpp"

namespace detred::cuda {
namespace detail {
template <class T, class Op>
struct combine_into {
  Op op;
  __device__ void operator()(T& left, const T& right) const { left = op(left, right); }
};
}  // namespace detail

// The whole block (BlockThreads a power of two, 32..1024; every thread calls with the same level): T(0, 2^level),
// returned in thread 0 (other threads: unspecified). When there are more items than threads, thread t first reduces
// the 2^(level - log2 BlockThreads) consecutive items starting at t * 2^(level - log2 BlockThreads) (in registers up
// to 256 items, else a binary counter in local memory); then warps, then the warp roots. Threads, lanes and warps
// without items do not call op. scratch: shared memory for BlockThreads / 32 values, reusable after the call.
// batched: a thread's items (up to 256) are loaded 8 at a time before they are joined (more loads in flight; the
// same combines in the same order).
template <int BlockThreads, class T, class Load, class Op>
__device__ T block_subtree_reduce(const Load& load, int level, const Op& op, T* scratch, bool batched = false) {
  static_assert(BlockThreads >= 32 && BlockThreads <= 1024 && (BlockThreads & (BlockThreads - 1)) == 0);
  constexpr int block_level = BlockThreads == 32    ? 5
                              : BlockThreads == 64  ? 6
                              : BlockThreads == 128 ? 7
                              : BlockThreads == 256 ? 8
                              : BlockThreads == 512 ? 9
                                                    : 10;
  const int thread = threadIdx.x, lane = thread & 31, warp = thread >> 5;
  const int thread_levels = level < block_level ? 0 : level - block_level;
  const int across = level - thread_levels;  // levels across threads: 2^across threads hold one subtree each
  T v{};
  if (thread < (1 << across)) {
    const std::uint64_t first = std::uint64_t(thread) << thread_levels;
    if (thread_levels == 0) {
      v = load(first);
    } else if (thread_levels <= 8 && batched) {  // up to 256 items, loaded 8 at a time (independent loads)
      register_counter<T, Op, 8> joined(op);
      for (int i = 0, end = 1 << thread_levels; i < end; i += 8) {
        const int m = end - i < 8 ? end - i : 8;
        T batch[8];
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (j < m) batch[j] = load(first + i + j);
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (j < m) v = joined.push(batch[j], i + j);
      }
    } else if (thread_levels <= 8) {  // up to 256 items: joined in registers
      register_counter<T, Op, 8> joined(op);
      for (int i = 0, end = 1 << thread_levels; i < end; ++i) v = joined.push(load(first + i), i);
    } else {
      binary_counter<T, detail::combine_into<T, Op>> counter{detail::combine_into<T, Op>{op}};
      for (std::uint64_t i = 0, end = std::uint64_t{1} << thread_levels; i < end; ++i) counter.push(load(first + i));
      v = counter.fold();
    }
  }
  const int lane_levels = across < 5 ? across : 5;
  const int active_warps = across <= 5 ? 1 : 1 << (across - 5);
  if (warp < active_warps) v = warp_subtree_reduce(v, op, lane_levels, 1 << lane_levels);
  const int warp_levels = across - lane_levels;
  if (warp_levels == 0) return v;
  if (lane == 0 && warp < active_warps) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    if (lane < active_warps) v = scratch[lane];
    v = warp_subtree_reduce(v, op, warp_levels, active_warps);
  }
  __syncthreads();  // scratch may be reused by the next call
  return v;
}

// The canonical reduce of load(0), ..., load(count - 1) with the whole block, pushed into `counter` (thread 0's) at
// levels level_offset + k for each binary digit k of count, largest first. Use it to append a run of items (or of
// equal-size subtree roots, level_offset = their level) to a binary counter that already holds the preceding ones.
template <int BlockThreads, class T, class Load, class Op, class Counter>
__device__ void block_push_digits(const Load& load, std::uint64_t count, int level_offset, const Op& op, T* scratch,
                                  Counter& counter, bool batched = false) {
  std::uint64_t first = 0;
  for (int k = 63; k >= 0; --k) {
    if (!((count >> k) & 1u)) continue;
    const auto shifted = [&](std::uint64_t i) { return load(first + i); };
    const T root = block_subtree_reduce<BlockThreads, T>(shifted, k, op, scratch, batched);
    if (threadIdx.x == 0) counter.push(root, level_offset + k);
    first += std::uint64_t{1} << k;
  }
}

}  // namespace detred::cuda
