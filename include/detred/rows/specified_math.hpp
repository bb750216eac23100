// exp, log and 1/sqrt with the same bits on the CPU and the GPU: each is written once, as DETRED_HD code made only of
// IEEE 754 operations that every backend rounds the same way (+, -, *, /, sqrt in binary64, exact conversions and
// exact scalings by powers of two), never a library call (std::exp, CUDA's expf or __expf) whose last bits differ
// between implementations. Host code is compiled with -ffp-contract=off and device code with --fmad=false, so no
// a * b + c is fused anywhere.
//
// Error: each function computes in binary64 with a relative error below 2^-50 (Taylor or atanh series far past
// binary64's precision; the reduction constants are split so that k * ln2_hi is exact), then rounds once to binary32.
// The binary32 result is therefore faithful, and correctly rounded unless the exact value lies within 2^-50 relative
// of a midpoint between two floats (then it may be the other neighbour) - on every backend the same neighbour.
#pragma once

#include <cstdint>

#include "detred/config.hpp"

namespace detred::specified {

namespace detail {
// 2^k as a binary64, -1022 <= k <= 1023 (a normal number, built from its bits: exact).
constexpr DETRED_HD double pow2(int k) { return detred::bit_cast<double>(std::uint64_t(k + 1023) << 52); }

// Round to the nearest integer, ties away from zero, for |t| < 2^31: only a conversion (exact truncation).
constexpr DETRED_HD int round_to_int(double t) { return t >= 0 ? int(t + 0.5) : -int(0.5 - t); }

inline constexpr double ln2_hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000: 32 bits, k * ln2_hi exact
inline constexpr double ln2_lo = 1.90821492927058770002e-10;  // ln2 - ln2_hi
inline constexpr double log2e = 1.44269504088896338700e+00;
}  // namespace detail

// e^x in binary64 (relative error < 2^-50), x any double: +Inf above 709.78, +0 below -745.2, NaN for NaN, and
// exp(0) = 1 exactly.
constexpr DETRED_HD double exp_double(double x) {
  if (x != x) return x;
  if (x > 709.78) return detail::pow2(1023) * 2.0;  // +Inf
  if (x < -745.2) return 0.0;
  const int k = detail::round_to_int(x * detail::log2e);
  const double r = (x - double(k) * detail::ln2_hi) - double(k) * detail::ln2_lo;  // |r| <= 0.3466 + tiny
  // Taylor series to degree 14: the remainder r^15 / 15! < 2^-60 for |r| < 0.35.
  double p = 1.0 / 87178291200.0;  // 1/14!
  constexpr double inv_factorial[14] = {1.0,
                                        1.0,
                                        1.0 / 2.0,
                                        1.0 / 6.0,
                                        1.0 / 24.0,
                                        1.0 / 120.0,
                                        1.0 / 720.0,
                                        1.0 / 5040.0,
                                        1.0 / 40320.0,
                                        1.0 / 362880.0,
                                        1.0 / 3628800.0,
                                        1.0 / 39916800.0,
                                        1.0 / 479001600.0,
                                        1.0 / 6227020800.0};
  for (int i = 13; i >= 0; --i) p = p * r + inv_factorial[i];
  // p * 2^k in two exact-or-once-rounded scalings, so that a subnormal result is rounded once, by the last multiply.
  const int k1 = k / 2, k2 = k - k1;
  return (p * detail::pow2(k1)) * detail::pow2(k2);
}

// e^x rounded to binary32 (see the header comment for the error). exp_float(0) == 1, exp_float(-Inf) == +0.
constexpr DETRED_HD float exp_float(float x) { return static_cast<float>(exp_double(double(x))); }

// Natural logarithm of a positive finite normal or subnormal binary64 x, relative error < 2^-50; -Inf for +-0, NaN
// for negative x or NaN, +Inf for +Inf.
constexpr DETRED_HD double log_double(double x) {
  if (x != x || x < 0) return detred::bit_cast<double>(std::uint64_t{0x7ff8000000000000ull});
  if (x == 0) return -detail::pow2(1023) * 2.0;
  if (x > 1.7976931348623157e308) return x;
  int e = 0;
  if (x < 0x1p-1022) x = x * 0x1p54, e = -54;  // subnormal: scale exactly into the normal range
  const std::uint64_t bits = detred::bit_cast<std::uint64_t>(x);
  e += int(bits >> 52) - 1023;
  double m = detred::bit_cast<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  if (m > 1.4142135623730951) m = m * 0.5, e += 1;  // [sqrt(1/2), sqrt(2)]: exact halving
  // log m = 2 atanh(f), f = (m - 1) / (m + 1), |f| <= 0.1716: 2 f (1 + z/3 + z^2/5 + ...), z = f^2 <= 0.0295;
  // the terms from z^13 on are below 2^-66.
  const double f = (m - 1.0) / (m + 1.0);
  const double z = f * f;
  double s = 1.0 / 27.0;
  for (int i = 12; i >= 0; --i) s = s * z + 1.0 / double(2 * i + 1);
  const double log_m = 2.0 * f * s;
  return double(e) * detail::ln2_hi + (double(e) * detail::ln2_lo + log_m);
}

constexpr DETRED_HD float log_float(float x) { return static_cast<float>(log_double(double(x))); }

// 1 / sqrt(x) rounded to binary32: sqrt and the division in binary64 (each correctly rounded by IEEE 754, on the host
// and on the device), then one rounding: error as in the header comment. +Inf for +-0, +0 for +Inf, NaN below 0.
DETRED_HD inline float rsqrt_float(float x) {
#if defined(__CUDA_ARCH__)
  const double root = __dsqrt_rn(double(x));
  return __double2float_rn(__ddiv_rn(1.0, root));
#else
  const double root = __builtin_sqrt(double(x));
  return static_cast<float>(1.0 / root);
#endif
}

}  // namespace detred::specified
