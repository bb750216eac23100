// kahan_accumulator: Kahan's compensated summation (1965), as published.
//
// Each add subtracts the previous step's rounding error from the next term. Error (Knuth; Higham, Accuracy and
// Stability, Eq. 4.8): |result - sum| <= (2u + O(n u^2)) sum|x_i|, the constant stated and tested in docs/ACCURACY.md.
// Sequential only: the error term comes from FastTwoSum, exact when the running sum dominates the term, which holds
// for a running sum but not for the merge of two partial sums; compensated tree sums use neumaier_accumulator.
// IEEE behaviour: once the running sum is Inf or NaN the compensation is dropped (it would be NaN), so Inf, NaN and
// overflow come out as plain IEEE addition gives them; an empty sum is -0.0.
#pragma once

#include "detred/config.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

template <floating_accumulation A>
struct kahan_accumulator {
  using value_type = A;
  A sum = negative_zero<A>();
  A compensation = A(0);  // the rounding error of the last step, to be subtracted from the next term

  constexpr DETRED_HD void add(A x) {
    const A y = x - compensation;
    const A t = sum + y;
    compensation = is_finite(t) ? (t - sum) - y : A(0);
    sum = t;
  }
  constexpr DETRED_HD A result() const { return sum; }
};

}  // namespace detred
