// Register-level helpers for accumulators of any trivially copyable type (plain or compensated, float or double):
// warp shuffles and a branch-free select, one 32-bit word at a time.
#pragma once

#include <cstring>
#include <type_traits>

namespace detred::cuda::detail {

template <class Acc>
inline constexpr int words_of = int(sizeof(Acc) / 4);

// __shfl_xor_sync of every 32-bit word of v: the value lane (lane ^ mask) holds. All 32 lanes must take part.
template <class Acc>
__device__ __forceinline__ Acc shuffle_xor(const Acc& v, int mask) {
  static_assert(std::is_trivially_copyable_v<Acc> && sizeof(Acc) % 4 == 0);
  unsigned w[words_of<Acc>];
  std::memcpy(w, &v, sizeof(Acc));
#pragma unroll
  for (int i = 0; i < words_of<Acc>; ++i) w[i] = __shfl_xor_sync(0xffffffffu, w[i], mask);
  Acc out;
  std::memcpy(&out, w, sizeof(Acc));
  return out;
}

// first ? a : b, written as bit operations so that the compiler cannot turn it into a select between the addresses
// of two register-array elements (which would move the array to local memory).
template <class Acc>
__device__ __forceinline__ Acc pick(bool first, const Acc& a, const Acc& b) {
  unsigned wa[words_of<Acc>], wb[words_of<Acc>];
  std::memcpy(wa, &a, sizeof(Acc));
  std::memcpy(wb, &b, sizeof(Acc));
  const unsigned mask = 0u - unsigned(first);
#pragma unroll
  for (int i = 0; i < words_of<Acc>; ++i) wa[i] = (wa[i] & mask) | (wb[i] & ~mask);
  Acc out;
  std::memcpy(&out, wa, sizeof(Acc));
  return out;
}

// left.merge(right) as a value: the node of the canonical tree with these children, left = lower indices.
template <class Acc>
__device__ __forceinline__ Acc merged(Acc left, const Acc& right) {
  left.merge(right);
  return left;
}

// Whether Acc declares that its merge gives the same bits in either operand order (a static member
// `commutative_merge = true`: detred's plain and Neumaier accumulators). Anything else, a user's accumulator or
// operator included, is merged strictly lower-indices-left.
template <class Acc>
inline constexpr bool commutative_merge_v = requires {
  requires Acc::commutative_merge;
};

// The node over two sibling subtrees held by partner lanes: `mine` is this lane's, `theirs` the partner's, and
// mine_is_upper says whose subtree covers the higher indices. Both lanes get the same bits: with a commutative merge
// each merges (mine, theirs), which saves the selects that put the lower subtree on the left.
template <class Acc>
__device__ __forceinline__ Acc merged_with_partner(const Acc& mine, const Acc& theirs, bool mine_is_upper) {
  if constexpr (commutative_merge_v<Acc>) {
    return merged(mine, theirs);
  } else {
    return merged(pick(mine_is_upper, theirs, mine), pick(mine_is_upper, mine, theirs));
  }
}

}  // namespace detred::cuda::detail
