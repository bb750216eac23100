// The CPU backend's inner kernel: the root of one complete canonical subtree (docs/ORDER.md), level by level over a
// contiguous scratch buffer, so that every level is a loop of independent merges that the compiler vectorises
// without reassociating anything (no fast-math option needed or used).
#pragma once

#include <cstddef>

#include "detred/accumulators/plain.hpp"
#include "detred/types/float_traits.hpp"
#include "src/cpu/subtree_root_avx2.hpp"
#include "src/cpu/subtree_root_sse2.hpp"

namespace detred::cpu {

// Root of T(0, 2^level) over x[0 .. 2^level), level >= 3, with accumulator Acc (mergeable). scratch must hold
// 2^(level-3) accumulators. Bits: exactly the canonical tree; the loop shape never changes the association.
template <class Acc, class T>
Acc subtree_root(const T* __restrict x, int level, Acc* __restrict scratch) {
  using A = typename Acc::value_type;
  const std::size_t groups = std::size_t{1} << (level - 3);
  // Levels 1-3 straight from the input: the tree over each aligned group of 8.
  for (std::size_t g = 0; g < groups; ++g) {
    const T* p = x + 8 * g;
    Acc a = Acc::from_value(widen<A>(p[0]));
    a.merge(Acc::from_value(widen<A>(p[1])));
    Acc b = Acc::from_value(widen<A>(p[2]));
    b.merge(Acc::from_value(widen<A>(p[3])));
    Acc c = Acc::from_value(widen<A>(p[4]));
    c.merge(Acc::from_value(widen<A>(p[5])));
    Acc d = Acc::from_value(widen<A>(p[6]));
    d.merge(Acc::from_value(widen<A>(p[7])));
    a.merge(b);
    c.merge(d);
    a.merge(c);
    scratch[g] = a;
  }
  // The remaining levels, in place: iteration i reads 2i and 2i+1 (>= i), which no earlier iteration wrote.
  for (std::size_t width = groups; width > 1; width /= 2) {
    for (std::size_t i = 0; i < width / 2; ++i) {
      Acc left = scratch[2 * i];
      left.merge(scratch[2 * i + 1]);
      scratch[i] = left;
    }
  }
  return scratch[0];
}

inline constexpr int widen_block_level = 12;

// Fast path for plain additions: the SSE2 kernel, after an exact widening pass where input and accumulation types
// differ. Larger subtrees split into halves (the tree's own top nodes) so the widened block stays in L1.
// scratch must hold 2^(level-3) accumulation values and, when T != A, 2^widen_block_level more.
template <class A, class T>
A plain_subtree_root(const T* x, int level, A* scratch) {
#if defined(__SSE2__)
  // Blocks above these sizes split into halves (the tree's own top nodes) so that the scratch, and the widened copy
  // of a 16-bit or float input, stay in L1.
  constexpr int block_level = std::is_same_v<T, A> ? 14 : widen_block_level;
  if (level > block_level) {
    const std::size_t half = std::size_t{1} << (level - 1);
    const A left = plain_subtree_root<A>(x, level - 1, scratch);
    return left + plain_subtree_root<A>(x + half, level - 1, scratch);
  }
  if constexpr (std::is_same_v<T, A>) {
#if defined(__x86_64__) && defined(__GNUC__)
    if constexpr (std::is_same_v<A, double>) {
      if (level >= 6 && avx2::available()) return avx2::subtree_root(x, level, scratch);
    }
#endif
    return sse2::subtree_root(x, level, scratch);
  } else {
    A* widened = scratch + (std::size_t{1} << (level - 3));
    for (std::size_t i = 0, n = std::size_t{1} << level; i < n; ++i) widened[i] = widen<A>(x[i]);
    return sse2::subtree_root(static_cast<const A*>(widened), level, scratch);
  }
#else
  return subtree_root<plain_accumulator<A> >(x, level, reinterpret_cast<plain_accumulator<A>*>(scratch)).sum;
#endif
}

}  // namespace detred::cpu
