// The CPU backend's inner kernel: the root of one complete canonical subtree (docs/ORDER.md), level by level over a
// contiguous scratch buffer, so that every level is a loop of independent merges that the compiler vectorises
// without reassociating anything (no -ffast-math needed or used).
#pragma once

#include <cstddef>

#include "detred/types/float_traits.hpp"

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

}  // namespace detred::cpu
