// The canonical order over P ranks' values (docs/ORDER.md with n = P), written out at compile time: the complete
// trees over the blocks of P's binary digits, left-folded, largest first. P = 2: x0 + x1; P = 3: (x0 + x1) + x2;
// P = 4: (x0 + x1) + (x2 + x3); P = 6: ((x0 + x1) + (x2 + x3)) + (x4 + x5). Bit for bit detred::sum<float> of the P
// values in rank order (tests/test_distributed.cpp). Straight-line code for the all-reduce's combine kernel
// (src/nccl/combine.cu); host and device. Internal (not installed).
#pragma once

#include "detred/config.hpp"

namespace detred::distributed {

template <int P>
inline constexpr int top_power = P >= 8   ? 8
                                 : P >= 4 ? 4
                                 : P >= 2 ? 2
                                          : 1;  // the largest power of two <= P (< 16)

// T(Begin, Size): the complete tree over load(Begin) .. load(Begin + Size - 1), Size a power of two.
template <int Begin, int Size, class Load>
DETRED_HD DETRED_INLINE float rank_tree(const Load& load) {
  if constexpr (Size == 1) {
    return load(Begin);
  } else {
    const float left = rank_tree<Begin, Size / 2>(load);
    const float right = rank_tree<Begin + Size / 2, Size / 2>(load);
    return left + right;
  }
}

// The left fold, onto acc, of the block trees of load(Begin) .. load(Begin + Remaining - 1).
template <int Begin, int Remaining, class Load>
DETRED_HD DETRED_INLINE float fold_blocks(const Load& load, float acc) {
  if constexpr (Remaining == 0) {
    return acc;
  } else {
    constexpr int size = top_power<Remaining>;
    return fold_blocks<Begin + size, Remaining - size>(load, acc + rank_tree<Begin, size>(load));
  }
}

// The canonical reduce of load(0) .. load(P - 1), 1 <= P <= 15, in float.
template <int P, class Load>
DETRED_HD DETRED_INLINE float rank_order_sum(const Load& load) {
  static_assert(P >= 1 && P < 16);
  constexpr int first = top_power<P>;
  return fold_blocks<first, P - first>(load, rank_tree<0, first>(load));
}

}  // namespace detred::distributed
