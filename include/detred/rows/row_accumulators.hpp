// The accumulators of detred's row and column reductions that detred's sum accumulators (plain, neumaier) do not
// already provide: maximum, mean and variance (Chan's merge of Welford states), and the two passes of log-sum-exp
// (the maximum, then a plain sum of shifted exponentials). Each is DETRED_HD, so the CPU twins and the CUDA kernels
// run the same code; merged in the canonical order (docs/ORDER.md) they give the same bits on every backend. Every
// accumulator has from_value, merge (left = lower indices) and a default state used only to pad nodes that are never
// read.
#pragma once

#include <cstdint>
#include <type_traits>

#include "detred/accumulators/plain.hpp"
#include "detred/config.hpp"
#include "detred/rows/specified_math.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

// -Inf of binary32/64 from its bits (usable in device code, unlike numeric_limits).
template <floating_accumulation A>
constexpr DETRED_HD A minus_infinity() {
  if constexpr (sizeof(A) == 4)
    return detred::bit_cast<float>(std::uint32_t{0xff800000u});
  else
    return detred::bit_cast<double>(std::uint64_t{0xfff0000000000000ull});
}

// IEEE 754-2019 maximum of binary32/64: NaN if either is NaN, +0 above -0. Exact, so order-independent.
template <floating_accumulation A>
constexpr DETRED_HD A ieee_maximum(A a, A b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return (bits_of(a) >> (sizeof(A) * 8 - 1)) ? b : a;  // equal: only +-0 differ; prefer +0
  return a > b ? a : b;
}

// Running maximum. Empty: -Inf.
template <floating_accumulation A>
struct max_accumulator {
  using value_type = A;
  A max = minus_infinity<A>();
  static constexpr DETRED_HD max_accumulator from_value(A x) { return {x}; }
  constexpr DETRED_HD void merge(const max_accumulator& right) { max = ieee_maximum(max, right.max); }
  constexpr DETRED_HD A result() const { return canonicalize_nan(max); }
};

// Count, mean and sum of squared deviations (Welford's state), merged by Chan, Golub and LeVeque's formula
//   n = na + nb,  d = mean_b - mean_a,  w = nb / n,  mean = mean_a + d w,  m2 = (m2_a + m2_b) + (d d)(na w)
// in the accumulation type, every operation rounded once (no FMA). An empty state (n = 0) on either side leaves the
// other unchanged. The count is exact up to 2^24 (float) or 2^53 (double) elements.
template <floating_accumulation A>
struct welford_accumulator {
  using value_type = A;
  A n = 0, mean = 0, m2 = 0;
  static constexpr DETRED_HD welford_accumulator from_value(A x) { return {A(1), x, A(0)}; }
  constexpr DETRED_HD void merge(const welford_accumulator& right) {
    if (right.n == A(0)) return;
    if (n == A(0)) {
      *this = right;
      return;
    }
    const A total = n + right.n;
    const A delta = right.mean - mean;
    const A w = right.n / total;
    mean = mean + delta * w;
    m2 = (m2 + right.m2) + (delta * delta) * (n * w);
    n = total;
  }
  // The mean; NaN (canonical) for an empty state or when any input was NaN or Inf.
  constexpr DETRED_HD A result_mean() const { return n == A(0) ? canonical_nan<A>() : canonicalize_nan(mean); }
  // The population variance m2 / n; NaN as for the mean.
  constexpr DETRED_HD A result_variance() const { return n == A(0) ? canonical_nan<A>() : canonicalize_nan(m2 / n); }
};

// Log-sum-exp in two passes over a row: lse = m + log(s), where
//   m = the row's IEEE maximum (max_accumulator: exact, so computed in any order), and
//   s = the canonical plain sum (docs/ORDER.md) of the leaves e_i = exp(x_i - m), x_i - m rounded once to A, the
//       exponential by specified::exp_float_lite for float and specified::exp_double for double.
// Every leaf lies in [0, 1] and the maximum's leaf is exp(0) = 1 exactly, so 1 <= s <= n (no overflow, no
// cancellation). shifted_exp_leaf is the second pass's leaf; logsumexp_parts holds (m, s) and finishes. When m is not
// finite the sum is not needed (and not computed): NaN if any input is NaN, +Inf if any is +Inf, -Inf for an empty row
// or only -Inf.
template <floating_accumulation A>
struct shifted_exp_leaf {
  A max;  // the row's maximum, finite
  template <class T>
  constexpr DETRED_HD plain_accumulator<A> operator()(T x, std::uint64_t) const {
    const A d = widen<A>(x) - max;
    if constexpr (std::is_same_v<A, float>)
      return plain_accumulator<A>::from_value(specified::exp_float_lite_nonpositive(d));
    else
      return plain_accumulator<A>::from_value(specified::exp_double(d));
  }
};

// The two passes' results, m and s, and the log-sum-exp they give: m + log(s) rounded once (the sum and the
// logarithm in binary64, log by specified::log_double); m itself when it is not finite (s unused); NaN canonical.
template <floating_accumulation A>
struct logsumexp_parts {
  A max;
  A sum;
  constexpr DETRED_HD A result() const {
    if (max != max) return canonical_nan<A>();
    if (!is_finite(max)) return max;
    return canonicalize_nan(A(double(max) + specified::log_double(double(sum))));
  }
};

}  // namespace detred
