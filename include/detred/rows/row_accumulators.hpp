// The accumulators of detred's row and column reductions that detred's sum accumulators (plain, neumaier) do not
// already provide: maximum, mean and variance (Chan's merge of Welford states), and log-sum-exp (running maximum and
// rescaled sum). Each is DETRED_HD, so the CPU twins and the CUDA kernels run the same code; merged in the canonical
// order (docs/ORDER.md) they give the same bits on every backend. Every accumulator has from_value, merge (left =
// lower indices) and a default state used only to pad nodes that are never read.
#pragma once

#include <cstdint>
#include <type_traits>

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

// log(sum exp(x_i)) in one pass: the state (m, s) stands for e^m * s. Merge: M = maximum(m_a, m_b) and
// s = s_a e^(m_a - M) + s_b e^(m_b - M), with detred::specified::exp_float (one of the two factors is e^0 = 1 exactly,
// and is not computed).
// When M is -Inf (only -Inf inputs) or not finite the scales are taken as 1 (no Inf - Inf). Empty: (-Inf, 0).
template <floating_accumulation A>
struct logsumexp_accumulator {
  using value_type = A;
  A m = minus_infinity<A>(), s = A(0);
  static constexpr DETRED_HD logsumexp_accumulator from_value(A x) { return {x, A(1)}; }
  // e^d as A: A(exp_double(d)); for binary32 that is exp_float(d), computed by exp_float_fast (the same bits).
  static DETRED_HD A scale(A d) {
    if constexpr (std::is_same_v<A, float>)
      return specified::exp_float_fast(d);
    else
      return A(specified::exp_double(double(d)));
  }
  DETRED_HD void merge(const logsumexp_accumulator& right) {
    const A big = ieee_maximum(m, right.m);
    if (!is_finite(big)) {
      s = s + right.s;
    } else if (m == big) {
      // The left scale is e^(m - big) = e^(+-0) = 1 exactly and s * 1 == s: one exp per merge, not two (the same
      // bits, apart from the payload of a NaN s, which result() canonicalizes).
      s = s + right.s * scale(right.m - big);
    } else {
      s = s * scale(m - big) + right.s;  // right.m == big: the right scale is 1
    }
    m = big;
  }
  // m + log(s): -Inf for an empty row or all -Inf inputs, +Inf if any input is +Inf, NaN (canonical) if any is NaN.
  constexpr DETRED_HD A result() const {
    if (m != m) return canonical_nan<A>();
    if (!is_finite(m) || s == A(0)) return s == A(0) ? minus_infinity<A>() : m;
    return canonicalize_nan(A(double(m) + specified::log_double(double(s))));
  }
};

}  // namespace detred
