// plain_accumulator: ordinary floating-point addition, one rounding per add.
//
// Sequential use (add): error <= gamma_{n-1} sum|x_i| (Higham, Accuracy and Stability, Eq. 4.4).
// In the canonical tree (merge): error <= gamma_{h(n)} sum|x_i|, h(n) from docs/ORDER.md.
// Starts at -0.0, the identity of IEEE addition (x + -0.0 == x for every x), so an empty sum is -0.0 and a sum of
// negative zeros stays -0.0. NaN, Inf and overflow behave exactly as IEEE addition does.
#pragma once

#include "detred/config.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

template <floating_accumulation A>
struct plain_accumulator {
  using value_type = A;
  // a.merge(b) and b.merge(a) give the same bits (IEEE addition is commutative, signed zeros included; NaN payloads
  // aside, which detred's results canonicalise): warp exchanges may merge in either order (detail/registers.cuh).
  static constexpr bool commutative_merge = true;
  A sum = negative_zero<A>();

  static constexpr DETRED_HD plain_accumulator from_value(A x) { return plain_accumulator{x}; }
  constexpr DETRED_HD void add(A x) { sum = sum + x; }
  // Combines this (the left, lower-index operand) with right.
  constexpr DETRED_HD void merge(const plain_accumulator& right) { sum = sum + right.sum; }
  constexpr DETRED_HD A result() const { return sum; }
};

}  // namespace detred
