// Warp-level canonical reduction, usable inside users' kernels.
//
// Order: lane l's value is leaf l; the result is the complete pairwise tree over each aligned group of 2^levels
// consecutive lanes, T(g, 2^levels) in docs/ORDER.md: level 1 joins lanes (2j, 2j+1), level 2 joins those pairs, and
// so on, the lower lanes always the left operand. It is a node of the canonical tree of the whole input whenever the
// group's leaves are an aligned block of the input. Accumulators: any detred mergeable accumulator (plain_accumulator,
// neumaier_accumulator, or a user's with from_value/merge), float or double.
#pragma once

#include "detred/cuda/detail/registers.cuh"

namespace detred::cuda {

// Every lane returns the root of its group of 2^levels lanes (0 <= levels <= 5), identical bits in each lane of the
// group. All 32 lanes must call it (values in lanes outside the groups of interest are combined only among
// themselves).
template <class Acc>
__device__ __forceinline__ Acc warp_tree_reduce(Acc value, int levels = 5) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int level = 0; level < 5; ++level) {
    if (level >= levels) break;
    const int mask = 1 << level;
    const Acc other = detail::shuffle_xor(value, mask);
    // The partner with bit `level` clear holds the left subtree.
    value = detail::merged_with_partner(value, other, lane & mask);
  }
  return value;
}

}  // namespace detred::cuda
