// neumaier_accumulator: compensated summation with exact error terms (Neumaier 1974; Ogita-Rump-Oishi's Sum2).
//
// State (sum, compensation): sum is the plain floating-point sum in the same order, compensation the rounded sum of
// the exact rounding errors of every addition, each computed as Neumaier wrote it: the larger magnitude first,
// (big - s) + small, chosen by a compare and two selects (no branch). Knuth's TwoSum gives the same error for every
// finite sum except next to the largest finite value: there its s - a can overflow when |a| < |b| (the error, and so
// the result, then NaN for a finite sum, and the merge not commutative).
// The result is fl(sum + compensation).
// Error, s the exact sum: sequentially (Ogita, Rump, Oishi 2005, Prop. 4.5) |result - s| <= u|s| + gamma_{n-1}^2
// sum|x_i|; in the canonical tree u|s| + gamma_{h(n)+1}^2 sum|x_i| (derivation in docs/ACCURACY.md).
// IEEE behaviour: Inf, NaN and overflow come out as plain IEEE addition gives them. fl(a + b) is finite only when a
// and b are, so once a sum (a node's or a running one) is Inf or NaN, every sum built on it is too, and result()
// returns the sum alone; a finite result's compensation therefore only ever saw finite sums, whose error terms are
// exact. The compensation of a non-finite sum is left as computed (Inf or NaN, meaningless) and never read: the merge
// needs no finiteness test. When the compensation is zero the sum's own zero sign is kept; an empty sum is -0.0.
#pragma once

#include "detred/config.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

template <floating_accumulation A>
struct neumaier_accumulator {
  using value_type = A;
  // a.merge(b) and b.merge(a) give the same bits, NaN payloads aside: fl(a + b) is commutative; the error term takes
  // its operands by magnitude, and where the magnitudes tie (a = b or a = -b) it is the same in either order; the
  // compensations add commutatively. Asserted in test_accumulators.
  static constexpr bool commutative_merge = true;
  A sum = negative_zero<A>();
  A compensation = negative_zero<A>();  // -0.0 so that merging an empty compensation is exact, sign included

  static constexpr DETRED_HD neumaier_accumulator from_value(A x) {
    return neumaier_accumulator{x, negative_zero<A>()};
  }

  // Combines this (the left, lower-index operand) with right.
  constexpr DETRED_HD void merge(const neumaier_accumulator& right) {
    const bool left_larger = magnitude(sum) >= magnitude(right.sum);
    const A big = left_larger ? sum : right.sum;
    const A small = left_larger ? right.sum : sum;
    const A s = sum + right.sum;
    const A error = (big - s) + small;                           // exact when s is finite (Dekker: |big| >= |small|)
    compensation = (compensation + right.compensation) + error;  // read only if the final sum is finite
    sum = s;
  }
  constexpr DETRED_HD void add(A x) { merge(from_value(x)); }

  constexpr DETRED_HD A result() const {
    if (!is_finite(sum) || compensation == A(0)) return sum;
    return sum + compensation;
  }
};

}  // namespace detred
