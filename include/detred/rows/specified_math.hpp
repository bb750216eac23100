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

namespace detail {
// exp_float as a real call: exp_float_fast's rare fallback, out of line so that the compiler branches around it
// instead of predicating its ~40 binary64 operations into every call (measured on the H100: the inlined form made the
// causal softmax 9.6 ms, this one 2.7 ms, exp_float alone 4.2 ms).
#if defined(__CUDACC__)
#define DETRED_SPECIFIED_NOINLINE __noinline__
#else
#define DETRED_SPECIFIED_NOINLINE __attribute__((noinline))
#endif
DETRED_SPECIFIED_NOINLINE DETRED_HD inline float exp_float_out_of_line(float x) { return exp_float(x); }
#undef DETRED_SPECIFIED_NOINLINE

// 2^(j/64) for j = 0..63, each the nearest binary64 (computed with 60-digit decimal arithmetic): relative error
// <= 2^-53. One copy for the host, one in device memory (a runtime index into a host constexpr array is not device
// code).
#define DETRED_EXP2_J64_TABLE                                                                                         \
  {                                                                                                                   \
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0, 0x1.0b5586cf9890fp+0,     \
        0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0, 0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, \
        0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0, 0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, \
        0x1.2d285a6e4030bp+0, 0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0, \
        0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0, 0x1.4bfdad5362a27p+0, \
        0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0, 0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, \
        0x1.6247eb03a5585p+0, 0x1.6623882552225p+0, 0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, \
        0x1.75feb564267c9p+0, 0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0, \
        0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0, 0x1.9c49182a3f090p+0, \
        0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0, 0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, \
        0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0, 0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, \
        0x1.d072d4a07897cp+0, 0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0, \
        0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,                       \
  }
inline constexpr double exp2_j64[64] = DETRED_EXP2_J64_TABLE;
#if defined(__CUDACC__)
static __device__ const double exp2_j64_device[64] = DETRED_EXP2_J64_TABLE;
#endif
#undef DETRED_EXP2_J64_TABLE
inline constexpr double ln2_64_hi = 0x1.62e42ffp-7;          // ln2/64 to 29 bits: k * ln2_64_hi exact for |k| < 2^24
inline constexpr double ln2_64_lo = -0x1.718432a1b0e26p-41;  // ln2/64 - ln2_64_hi
inline constexpr double inv_ln2_64 = 0x1.71547652b82fep+6;   // 64/ln2
}  // namespace detail

// exp_float(x), bit for bit, for every binary32 x, at about a third of its binary64 operations: the same function,
// faster where it is not in doubt. For x in [-87, 88] (normal binary32 results) it computes y' = 2^(k/64) e^r with
// k = round(64 x / ln2), |r| <= ln2/128 + tiny, a table entry and a degree-5 Taylor polynomial: relative error below
// 3.5 * 2^-53 (table 2^-53, product 2^-53, polynomial 1.4 * 2^-53 including its truncation r^6/720 < 2^-54.7).
// exp_double's own error is below 2^-50, so y' and exp_double(x) differ by less than 12 units in the last place of
// y' (binary64, same or adjacent binade). Both round to the same binary32 unless a binary32 rounding midpoint lies
// between them; the function returns float(y') only when y' is more than 64 binary64 units away from every midpoint
// (the 29 bits that binary32 drops are not within 64 of 2^28), and exp_float(x) otherwise (about 2.4e-7 of the
// inputs) and outside [-87, 88] (NaN, infinities, overflow, subnormal and zero results). tests/rows: compared with
// exp_float on every binary32 in the fast range on the GPU (label gpu) and on a sample and the edges on the CPU.
DETRED_HD inline float exp_float_fast(float x) {
  if (!(x >= -87.0f && x <= 88.0f)) return detail::exp_float_out_of_line(x);
  const double xd = double(x);
  const int k = detail::round_to_int(xd * detail::inv_ln2_64);
  const double r = (xd - double(k) * detail::ln2_64_hi) - double(k) * detail::ln2_64_lo;
  const double p = 1.0 + r * (1.0 + r * (1.0 / 2.0 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0)))));
  const int j = k & 63, m = (k - j) / 64;  // k = 64 m + j, 0 <= j < 64 (floor division for negative k)
#if defined(__CUDA_ARCH__)
  const double t = __ldg(&detail::exp2_j64_device[j]);
#else
  const double t = detail::exp2_j64[j];
#endif
  const double y = (t * p) * detail::pow2(m);  // |m| <= 127: an exact scaling of a normal number
  const std::uint64_t dropped = detred::bit_cast<std::uint64_t>(y) & ((std::uint64_t{1} << 29) - 1);
  const std::uint64_t midpoint = std::uint64_t{1} << 28;
  const std::uint64_t distance = dropped > midpoint ? dropped - midpoint : midpoint - dropped;
  if (distance <= 64) return detail::exp_float_out_of_line(x);
  return static_cast<float>(y);
}

// e^x from binary32 operations only, for the terms of a sum where a last-place error does not matter (the log-sum-exp
// leaves exp(x_i - max), rows/row_accumulators.hpp): faithful - within 1 unit in the last place of the exact value,
// measured on every binary32 in [-104, 88.72] against exp_double (largest error 0.991 units, in the binade's units
// and including subnormal results); not always correctly rounded, unlike exp_float. About 20 binary32 operations
// where exp_float_fast needs about 30 binary64 ones: the GPU's binary64 rate is a half (H100) or less of its binary32
// rate. Every operation is a binary32 +, -, * rounded once in the order written (no FMA), an exact conversion or an
// exact scaling, so every backend gives the same bits.
//   k = x / ln2 rounded to an integer (the 1.5 * 2^23 shift), r = (x - k c1) - k c2 with c1 = 0.693359375 (9 bits:
//   k c1 exact) and c2 = ln2 - c1 rounded, e^r = 1 + r + r^2 P(r) with Cephes's degree-5 minimax P for
//   |r| <= ln2 / 2, then an exact scaling by 2^k1 and a once-rounded one by 2^(k - k1), k1 = floor(k / 2).
// NaN for NaN, +0 below -104 (e^x below half the least subnormal), +Inf above 88.7228394 (the least binary32 whose
// exponential rounds to +Inf), and exp_float_lite(0) == 1 exactly.
namespace detail {
// exp_float_lite's operations up to its scaling, for x in [-104, 88.72283935546875]: e = e^r (about [0.70, 1.42]) and
// the integer k with e^x = e 2^k.
constexpr DETRED_HD float exp_float_lite_reduced(float x, int& k) {
  // k: x / ln2 rounded to an integer by adding 1.5 * 2^23 (the sum lies in [2^23, 2^24), where floats are integers);
  // read back from the sum's bits, exactly k_real.
  constexpr float shifter = 12582912.0f;
  const float shifted = x * 1.44269504088896341f + shifter;
  const float k_real = shifted - shifter;
  k = int(detred::bit_cast<std::uint32_t>(shifted) - detred::bit_cast<std::uint32_t>(shifter));  // = k_real
  const float r = (x - k_real * 0.693359375f) - k_real * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return (p * (r * r) + r) + 1.0f;
}

// exp_float_lite's operations for x in [-104, 88.72283935546875].
constexpr DETRED_HD float exp_float_lite_in_range(float x) {
  int k = 0;
  const float e = exp_float_lite_reduced(x, k);
  const int k1 = k >> 1, k2 = k - k1;  // -75 <= k1, k2 <= 64: normal powers of two, e 2^k1 exact
  const float scale1 = detred::bit_cast<float>(std::uint32_t(k1 + 127) << 23);
  const float scale2 = detred::bit_cast<float>(std::uint32_t(k2 + 127) << 23);
  return (e * scale1) * scale2;
}
}  // namespace detail

constexpr DETRED_HD float exp_float_lite(float x) {
  if (!(x >= -104.0f)) return x != x ? x : 0.0f;
  if (x > 88.72283935546875f) return detred::bit_cast<float>(std::uint32_t{0x7f800000u});
  return detail::exp_float_lite_in_range(x);
}

// exp_float_lite(d) for every d <= 0 (-0 and -Inf included; NaN and d > 0 are outside its domain): the same
// operations on max(d, -104) and a select at the end in place of exp_float_lite's branches, so that a GPU runs one
// straight sequence a lane and interleaves the exponentials of neighbouring elements. The terms exp(x - max) of the
// log-sum-exp and of softmax, where x <= max always.
constexpr DETRED_HD float exp_float_lite_nonpositive(float d) {
  const bool underflows = !(d >= -104.0f);
  const float e = detail::exp_float_lite_in_range(underflows ? -104.0f : d);
  return underflows ? 0.0f : e;
}

// The least d from which exp_float_lite_one_step(d) is exp_float_lite(d).
inline constexpr float exp_float_lite_one_step_min = -86.5f;

// exp_float_lite(d) bit for bit for exp_float_lite_one_step_min <= d <= 0 (nothing is promised outside): the same e
// and k (detail::exp_float_lite_reduced), then e 2^k by adding k to e's exponent field. There d / ln2 >= -124.8, so
// k >= -125 and e 2^k >= 2^-125.5 is normal: exp_float_lite's two scalings, each exact, give the same value as this
// one. For kernels that know a row's range (its minimum less its maximum) before its exponentials: about six
// operations an element fewer than exp_float_lite_nonpositive's clamp, select and two scalings.
constexpr DETRED_HD float exp_float_lite_one_step(float d) {
  int k = 0;
  const float e = detail::exp_float_lite_reduced(d, k);
  return detred::bit_cast<float>(detred::bit_cast<std::uint32_t>(e) + (std::uint32_t(k) << 23));
}

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
