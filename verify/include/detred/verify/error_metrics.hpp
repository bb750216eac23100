// How far a computed sum is from the exact one, measured in exact arithmetic and only then rounded to double.
#pragma once

#include "detred/types/float_traits.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::verify {

struct error_metrics {
  double absolute = 0;       // |computed - s|
  double relative = 0;       // |computed - s| / |s|  (0 if both are 0; +Inf if s == 0 and computed != 0)
  double ulps = 0;           // |computed - s| / ulp(s rounded to A); the ulp of zero or a subnormal is A's smallest
                             // subnormal, the ulp of a value that overflows A is ulp(MAX)
  bool exact_match = false;  // bits(computed) == bits(s correctly rounded to A); any NaN matches a NaN
};

// The error of `computed` (a sum accumulated in A) against the exact sum s. When s has special inputs (NaN, Inf) or
// `computed` is not finite, the error is 0 in every metric if computed matches s rounded to A (Inf of the same
// sign, or NaN and NaN), else +Inf in every metric.
template <floating_accumulation A>
error_metrics measure_error(const exact_sum& s, A computed);

// The condition number of the sum: sum|x_i| / |sum x_i|, computed from the two exact sums. +Inf when the sum is 0 and
// some x_i is not; 1 when every x_i is 0 or there are none. Relative error <= (bound / S) * condition.
double condition_number(const exact_sum& sum, const exact_sum& sum_of_magnitudes);

}  // namespace detred::verify
