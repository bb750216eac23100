// The a-priori error bounds of docs/ACCURACY.md (and the one-line statements in sum_method.hpp), as code.
//
// u is the unit roundoff of the accumulation type A (2^-24 for float, 2^-53 for double), gamma_k = k u / (1 - k u),
// S = sum|x_i|, s the exact sum, n the number of inputs, h(n) = canonical_depth(n):
//   sequential     gamma_{n-1} S
//   pairwise       gamma_{ceil(log2 n)} S
//   kahan          (2u + 4 n u^2) S          (the tested form of Knuth's (2u + O(n u^2)) S)
//   neumaier       u |s| + gamma_{n-1}^2 S
//   tree           gamma_{h(n)} S
//   tree_neumaier  u |s| + gamma_{h(n)+1}^2 S
// Every bound is evaluated in 300-bit binary floating point and rounded up to double, so it is never below the true
// value of the formula. A bound whose gamma_k has k u >= 1 is +Inf (the formula says nothing). The bounds assume no
// overflow; they say nothing about Inf or NaN results.
#pragma once

#include <cstdint>

#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::verify {

// The bound on |computed - s| for `method` with accumulation type A, from n, S and |s| given as doubles. S and |s|
// must be upper bounds of the true values (e.g. rounded up) for the result to be a guaranteed bound.
template <floating_accumulation A>
double error_bound(sum_method method, std::uint64_t n, double S, double abs_s);

// The same bound from the exact sums s (its count is n) and S (of the magnitudes): no rounding of S or |s| first.
template <floating_accumulation A>
double error_bound(sum_method method, const exact_sum& s, const exact_sum& S);

}  // namespace detred::verify
