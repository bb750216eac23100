// The CPU exact sum's building blocks (src/cpu/exact_sum.cpp; docs/EXACT.md "The CPU backend"): the fast path for a
// block of 256 terms (portable and AVX2, the same operations) and the binary64 exponent bins of the term-by-term path.
// In a header so that tests/test_cpu_kernels.cpp can check each kernel, including the one this machine does not pick.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "detred/accumulators/exact.hpp"
#include "src/cpu/subtree_root_avx2.hpp"  // detred::cpu::avx2::available()

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DETRED_EXACT_AVX2 1
#endif

namespace detred::cpu::exact {

inline constexpr std::size_t block = 256;

// Adds v * 2^(pos + low_exponent) to the state's limbs: |v| < 2^63 as three 32-bit digits of |v| << (pos mod 32).
template <class State>
inline void add_int64_at(State& s, std::int64_t v, int pos) {
  if (v == 0) return;
  const bool negative = v < 0;
  const std::uint64_t m = negative ? 0 - std::uint64_t(v) : std::uint64_t(v);
  const int k = pos >> 5, shift = pos & 31;
  const std::uint64_t low = m << shift, high = shift ? m >> (64 - shift) : 0;
  const std::int64_t d[3] = {std::int64_t(low & 0xffffffffu), std::int64_t(low >> 32), std::int64_t(high)};
  for (int i = 0; i < 3; ++i) s.set_raw(k + i, s.limb(k + i) + (negative ? -d[i] : d[i]));
}

inline double as_double_exact(float x) { return double(x); }
inline double as_double_exact(double x) { return x; }

// The fast path's window for a block (docs/EXACT.md "The CPU backend"): from the block's largest and smallest
// magnitudes, E the exponent of the largest. False when the block must go term by term.
struct block_window {
  double round;   // C = 1.5 * 2^52 * g, g = 2^(E - 44): (x + C) - C rounds x to a multiple of g
  double to_int;  // 2^(44 - E) = 1 / g
  int E;
};
template <class State>
inline bool window_for(double max_magnitude, double min_magnitude, block_window& w) {
  std::uint64_t max_bits, min_bits;
  std::memcpy(&max_bits, &max_magnitude, 8);
  std::memcpy(&min_bits, &min_magnitude, 8);
  const int F = int(max_bits >> 52), F_min = int(min_bits >> 52);
  constexpr int lowest_F = State::is_double ? 45 : 954;          // keeps g, C and the LO position in range
  if (F < lowest_F || F > 1068 || F_min < F - 38) return false;  // also rejects Inf, NaN maxima and zeros
  w.E = F - 1023;
  const std::uint64_t round_bits = std::uint64_t(w.E + 8 + 1023) << 52 | (std::uint64_t{1} << 51);  // 1.5 * 2^(E+8)
  const std::uint64_t to_int_bits = std::uint64_t(44 - w.E + 1023) << 52;
  std::memcpy(&w.round, &round_bits, 8);
  std::memcpy(&w.to_int, &to_int_bits, 8);
  return true;
}

// Adds the block's exact value HI + R (HI a multiple of g = 2^(E-44), R of 2^(E-90), both sums exact) to the limbs;
// false (nothing added) when a NaN term made them NaN.
template <class State>
inline bool add_block_value(State& s, double HI, double R, const block_window& w) {
  if (!(HI == HI && R == R)) return false;
  constexpr double two46 = 70368744177664.0;
  add_int64_at(s, std::int64_t(HI * w.to_int), w.E - 44 - State::low_exponent);
  add_int64_at(s, std::int64_t((R * w.to_int) * two46), w.E - 90 - State::low_exponent);
  return true;
}

// One block by the fast path; false (nothing added) when the block needs the term-by-term path.
template <class State, class T>
inline bool add_block_fast(State& s, const T* x) {
  // The largest and smallest magnitudes (a NaN compares false and is skipped; the sums below catch it).
  double lane_max[4] = {0, 0, 0, 0}, lane_min[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
  for (std::size_t i = 0; i < block; i += 4)
    for (int j = 0; j < 4; ++j) {
      const double v = std::fabs(as_double_exact(x[i + j]));
      lane_max[j] = v > lane_max[j] ? v : lane_max[j];
      lane_min[j] = v < lane_min[j] ? v : lane_min[j];
    }
  const double max01 = lane_max[0] > lane_max[1] ? lane_max[0] : lane_max[1];
  const double max23 = lane_max[2] > lane_max[3] ? lane_max[2] : lane_max[3];
  const double min01 = lane_min[0] < lane_min[1] ? lane_min[0] : lane_min[1];
  const double min23 = lane_min[2] < lane_min[3] ? lane_min[2] : lane_min[3];
  block_window w;
  if (!window_for<State>(max01 > max23 ? max01 : max23, min01 < min23 ? min01 : min23, w)) return false;
  double hi_sum[4] = {0, 0, 0, 0}, r_sum[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < block; i += 4) {
    for (int j = 0; j < 4; ++j) {
      const double v = as_double_exact(x[i + j]);
      const double hi = (v + w.round) - w.round;
      hi_sum[j] += hi;
      r_sum[j] += v - hi;
    }
  }
  return add_block_value(s, (hi_sum[0] + hi_sum[1]) + (hi_sum[2] + hi_sum[3]),
                         (r_sum[0] + r_sum[1]) + (r_sum[2] + r_sum[3]), w);
}

#if DETRED_EXACT_AVX2
// The same block, the same operations on each term (every sum is exact, so any grouping gives the same HI and R),
// four terms per instruction.
__attribute__((target("avx2"))) inline __m256d load4(const double* x) { return _mm256_loadu_pd(x); }
__attribute__((target("avx2"))) inline __m256d load4(const float* x) { return _mm256_cvtps_pd(_mm_loadu_ps(x)); }
__attribute__((target("avx2"))) inline double horizontal_sum(__m256d v) {
  alignas(32) double t[4];
  _mm256_store_pd(t, v);
  return (t[0] + t[1]) + (t[2] + t[3]);
}

template <class State, class T>
__attribute__((target("avx2"))) inline bool add_block_fast_avx2(State& s, const T* x) {
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  __m256d max0 = _mm256_setzero_pd(), max1 = max0, min0 = _mm256_set1_pd(INFINITY), min1 = min0;
  for (std::size_t i = 0; i < block; i += 8) {
    const __m256d a = _mm256_and_pd(load4(x + i), abs_mask), b = _mm256_and_pd(load4(x + i + 4), abs_mask);
    max0 = _mm256_max_pd(max0, a);
    max1 = _mm256_max_pd(max1, b);
    min0 = _mm256_min_pd(min0, a);
    min1 = _mm256_min_pd(min1, b);
  }
  alignas(32) double mx[4], mn[4];
  _mm256_store_pd(mx, _mm256_max_pd(max0, max1));
  _mm256_store_pd(mn, _mm256_min_pd(min0, min1));
  const double max01 = mx[0] > mx[1] ? mx[0] : mx[1], max23 = mx[2] > mx[3] ? mx[2] : mx[3];
  const double min01 = mn[0] < mn[1] ? mn[0] : mn[1], min23 = mn[2] < mn[3] ? mn[2] : mn[3];
  block_window w;
  if (!window_for<State>(max01 > max23 ? max01 : max23, min01 < min23 ? min01 : min23, w)) return false;
  const __m256d C = _mm256_set1_pd(w.round);
  __m256d hi_sum[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()}, r_sum[2] = {hi_sum[0], hi_sum[0]};
  for (std::size_t i = 0; i < block; i += 8) {
    for (int j = 0; j < 2; ++j) {
      const __m256d v = load4(x + i + 4 * j);
      const __m256d hi = _mm256_sub_pd(_mm256_add_pd(v, C), C);
      hi_sum[j] = _mm256_add_pd(hi_sum[j], hi);
      r_sum[j] = _mm256_add_pd(r_sum[j], _mm256_sub_pd(v, hi));
    }
  }
  return add_block_value(s, horizontal_sum(_mm256_add_pd(hi_sum[0], hi_sum[1])),
                         horizontal_sum(_mm256_add_pd(r_sum[0], r_sum[1])), w);
}
#endif

// The term-by-term path for binary64 terms, after xsum's large superaccumulator: a bin per value of the top 12 bits
// (sign and exponent field) holds the sum of the terms' raw bit patterns modulo 2^64 and counts them down from 2^11;
// with k = 2^11 - remaining terms in it, the sum of their fractions is `sum - k * (top bits << 52)` (mod 2^64), exact
// since it is below k * 2^52 <= 2^63. So a term costs a shift and two read-modify-writes, no masking, no sign
// handling, and one well-predicted branch. A bin is deposited into the state (its fractions and its k hidden bits, with
// its sign, at its field's bit position) when it is full and at the end. The bins of field 0 (zeros, subnormals) and
// 0x7ff (NaN, infinities) start empty of room, so those terms fall to the same branch and go through the state's
// add() (their flags).
template <class State>
struct exponent_bins {
  static constexpr int limit = 2048;
  std::uint64_t sum[4096];
  std::int16_t remaining[4096];  // with sum: 40 KiB, mostly in L1
  std::uint64_t terms = 0;       // binned terms: nonzero and finite

  static bool binned(unsigned top) { return unsigned((top & 0x7ffu) - 1) < 0x7feu; }
  exponent_bins() {
    std::memset(sum, 0, sizeof sum);
    for (unsigned top = 0; top < 4096; ++top) remaining[top] = binned(top) ? std::int16_t(limit) : std::int16_t(0);
  }
  void deposit(State& s, unsigned top) {
    const std::uint64_t k = std::uint64_t(limit - remaining[top]);
    const std::uint64_t fractions = sum[top] - k * (std::uint64_t(top) << 52);  // < k * 2^52 <= 2^63
    const int pos = int(top & 0x7ffu) - 1075 - State::low_exponent;             // the field's last place
    const bool negative = (top >> 11) != 0;
    add_int64_at(s, negative ? -std::int64_t(fractions) : std::int64_t(fractions), pos);
    add_int64_at(s, negative ? -std::int64_t(k) : std::int64_t(k), pos + 52);  // the hidden bits
    terms += k;
    sum[top] = 0;
    remaining[top] = std::int16_t(limit);
  }
  void add(State& s, const double* x, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      __builtin_prefetch(x + i + 128);  // the hardware prefetcher alone leaves this loop waiting for its input
      std::uint64_t b;
      std::memcpy(&b, &x[i], 8);
      const unsigned top = unsigned(b >> 52);
      const int r = remaining[top] - 1;
      if (__builtin_expect(r < 0, 0)) {
        if (!binned(top)) {
          s.add(x[i]);  // zero, subnormal, NaN, infinity
          continue;
        }
        deposit(s, top);  // full
        remaining[top] = std::int16_t(limit - 1);
      } else {
        remaining[top] = std::int16_t(r);
      }
      sum[top] += b;
    }
  }
  void fold(State& s) {
    for (unsigned top = 0; top < 4096; ++top)
      if (binned(top) && remaining[top] != limit) deposit(s, top);
  }
};

}  // namespace detred::cpu::exact
