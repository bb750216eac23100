// The GPU exact sum's per-thread arithmetic (src/cuda/exact/exact_sum_kernels.cuh, exact_bins_thread.cuh,
// exact_extract_thread.cuh) run on the CPU, without a GPU: exact_thread_share, the same function the kernel calls, for
// every thread of every block of the launch's partition, with each input type's algorithm (exponent_bins for the
// binary32 family, extract_levels for binary64), the threads' limbs added as the kernel adds them; the state
// (normalised limbs and flags) and its rounding must equal the CPU exact accumulator's bit for bit. Also the bins'
// flush period (a flush before a bin could round), the bins' index and units, the binary16 widening over all 65536 bit
// patterns, and for binary64 the window's edges, the extraction, the headroom and the lean slow path. Label `cpu`:
// built with the CUDA targets, needs no device.
#include <gtest/gtest.h>

#pragma nv_diag_suppress 445  // for_each_type_pair's template lambdas (A, T not in the parameter types)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "src/cuda/exact/exact_sum_kernels.cuh"
#include "tests/support/exact_inputs.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;
using namespace detred::test;
using namespace detred::cuda::detail;

template <floating_input T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

// The kernel's block states for x placed `offset` elements past a 16-byte boundary, `wanted` blocks, computed on the
// host (exact_thread_share, the kernel's per-thread code, for every thread of every block) and merged.
template <class T, class Tune>
exact_state<T> emulated_exact_state(const std::vector<T>& x, std::uint64_t wanted, int offset) {
  using S = exact_state<T>;
  constexpr int L = S::limb_count, B = Tune::block_threads, C = Tune::columns, R = Tune::limb_rows;
  const std::uint64_t n = x.size();
  std::vector<uint4> storage((n * sizeof(T) + 64) / sizeof(uint4) + 1);
  T* data = reinterpret_cast<T*>(storage.data()) + offset;
  if (n) std::memcpy(data, x.data(), n * sizeof(T));
  const exact_partition part = exact_partition_for<T, Tune>(data, n, wanted);
  S total;
  std::vector<long long> limbs(std::size_t(C) * R * B);
  std::vector<double> bins(std::size_t(exact_float_bins::bin_count) * B);
  for (std::uint64_t block = 0; block < part.blocks; ++block) {
    unsigned flags = 0;
    for (int tid = 0; tid < B; ++tid)
      flags |= exact_thread_share<T, Tune>(limbs.data() + tid, bins.data() + tid, data, n, part.head, part.vectors,
                                           exact_share<Tune>(part), block, tid);
    S state;
    for (int k = 0; k < L; ++k) {
      long long s = 0;
      for (int c = 0; c < C; ++c)
        for (int t = 0; t < B; ++t) s += k < R ? limbs[std::size_t(c * R + k) * B + t] : 0;
      state.set_raw(k, s);
    }
    state.set_count(0, flags, 1u << 29);  // unnormalised limbs: merge normalises first
    total.merge(state);
  }
  total.set_count(n, total.flags(), 1u << 29);
  return total;
}

// Two states hold the same value and flags (normalised limbs equal: a stronger check than the rounded result, so an
// inexact bin addition that the rounding would hide still fails).
template <class S>
bool same_state(S a, S b) {
  a.normalize();
  b.normalize();
  if (a.flags() != b.flags()) return false;
  for (int k = 0; k < S::limb_count; ++k)
    if (a.limb(k) != b.limb(k)) return false;
  return true;
}

template <class A, class T, class Tune>
void expect_emulated_exact_tuned(const std::vector<T>& x, const exact_state<T>& expected, const char* what) {
  for (int offset : {0, 1, 3})
    for (std::uint64_t wanted : {1u, 3u, 7u}) {
      const exact_state<T> got = emulated_exact_state<T, Tune>(x, wanted, offset);
      ASSERT_TRUE(same_state(got, expected))
          << what << " (state) " << float_traits<T>::name << " n=" << x.size() << " offset=" << offset
          << " blocks=" << wanted << " algorithm=" << int(Tune::algorithm) << " unroll=" << Tune::unroll
          << " threads=" << Tune::block_threads;
      ASSERT_EQ(raw(got.template rounded<A>()), raw(expected.template rounded<A>()))
          << what << " " << float_traits<A>::name << "<-" << float_traits<T>::name << " n=" << x.size()
          << " offset=" << offset << " blocks=" << wanted << " unroll=" << Tune::unroll
          << " threads=" << Tune::block_threads;
    }
}

// The launches the host emulation runs: each type's default, its streamed form (interleaved chunks; the load
// flavour is device code only), the streamed form's short steps, and for binary64 the small sums' warp-shared window
// (warp_levels; on the host each thread is its own window) at the library's steps of 8 vectors and at 4 and 1.
template <class T>
using host_tunings =
    std::conditional_t<std::same_as<T, double>,
                       std::tuple<exact_default_tuning<T>, exact_streamed_tuning<T>, exact_small_tuning<T>,
                                  exact_small_path_tuning<double>, exact_warp_levels_tuning<double, 4>,
                                  exact_warp_levels_tuning<double, 1>>,
                       std::tuple<exact_default_tuning<T>, exact_streamed_tuning<T>, exact_small_tuning<T>>>;

template <class A, class T>
void expect_emulated_exact(const std::vector<T>& x, const char* what) {
  exact_state<T> s;
  s.add(x.data(), x.size());
  std::apply([&]<class... Tune>(Tune...) { (expect_emulated_exact_tuned<A, T, Tune>(x, s, what), ...); },
             host_tunings<T>{});
}

TEST(CudaExactKernelOnHost, DataSetsWindowBoundariesAndZeros) {
  for_each_type_pair([]<class A, class T>() {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{9}, std::size_t{4097},
                          std::size_t{2 * 256 * 16 + 3}, std::size_t{100003}}) {
      for (exact_dataset d : all_exact_datasets) expect_emulated_exact<A, T>(exact_data<T>(d, n, n + 3), name_of(d));
      expect_emulated_exact<A, T>(window_boundary_data<T>(n, 5 * n + 1), "window boundaries");
      expect_emulated_exact<A, T>(cancelling_pairs<T>(n / 2, n, false), "x, -x pairs");
      expect_emulated_exact<A, T>(cancelling_pairs<T>(n / 2, n, true), "-0.0 only");
    }
    for (const auto& [name, x] : exact_edge_cases<T>()) expect_emulated_exact<A, T>(x, name.c_str());
  });
}

// Hand-made inputs for the exponent bins (docs/EXACT.md "The exponent_bins algorithm"), in T's own bit patterns:
// every exponent field with the smallest, an odd, the largest and a random fraction, both signs (so terms at both
// sides of every bin boundary, subnormals included); NaNs whose payload is only in the low bits, infinities of both
// signs alone, together, with NaN and with finite terms; MAX / -MAX mixes whose partial sums overflow; cancellation.
template <floating_input T>
std::vector<std::pair<std::string, std::vector<T>>> bins_edge_cases() {
  using traits = float_traits<T>;
  constexpr int bits = int(sizeof(typename traits::bits_type) * 8), p = traits::precision;
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  const std::uint64_t fields = (std::uint64_t{1} << (bits - p)) - 1;  // finite fields 0 .. fields - 1
  const std::uint64_t inf = fields << (p - 1), max = inf - 1, frac_max = (std::uint64_t{1} << (p - 1)) - 1;
  auto v = [](std::uint64_t b) { return from_raw_bits<T>(b); };
  std::mt19937_64 rng(42);
  std::vector<std::pair<std::string, std::vector<T>>> c;
  std::vector<T> every;
  for (std::uint64_t f = 0; f < fields; ++f)
    for (std::uint64_t fr : {std::uint64_t{0}, std::uint64_t{1}, frac_max, rng() & frac_max})
      for (std::uint64_t sg : {std::uint64_t{0}, sign}) every.push_back(v(sg | (f << (p - 1)) | fr));
  c.push_back({"every field, both signs", every});
  std::vector<T> positive;
  for (std::uint64_t f = 0; f < fields; ++f) positive.push_back(v((f << (p - 1)) | (rng() & frac_max)));
  c.push_back({"every field, positive", positive});
  std::vector<T> cancel = every;
  for (T x : every) cancel.push_back(v(std::uint64_t(bits_of(x)) ^ sign));
  c.push_back({"every field and its negation (+0.0)", cancel});
  const T nan_low = v(inf | 1), neg_nan_low = v(sign | inf | 1);
  c.push_back({"nan, payload in the low bit", {nan_low}});
  c.push_back({"-nan, payload in the low bit", {neg_nan_low, v(max)}});
  c.push_back({"+inf -inf", {v(inf), v(inf | sign)}});
  c.push_back({"+inf +inf max", {v(inf), v(inf), v(max)}});
  c.push_back({"-inf -max", {v(inf | sign), v(max | sign)}});
  c.push_back({"nan +inf", {nan_low, v(inf)}});
  c.push_back({"-inf nan +inf", {v(inf | sign), nan_low, v(inf)}});
  c.push_back({"max x5 -max x4",
               {v(max), v(max), v(max), v(max), v(max), v(max | sign), v(max | sign), v(max | sign), v(max | sign)}});
  c.push_back({"-max x3 max x3 tiny", {v(max | sign), v(max | sign), v(max | sign), v(max), v(max), v(max), v(1)}});
  c.push_back({"+0 -0 mixes", {v(sign), v(0), v(sign)}});
  // Specials far apart in a long input: different threads, blocks and flush periods see them.
  for (std::uint64_t special : {inf, inf | sign, inf | 1}) {
    std::vector<T> x = exact_data<T>(exact_dataset::full_range, 20000, special);
    x[3] = v(special);
    x[19000] = v(special ^ (special == (inf | 1) ? 0 : sign));
    c.push_back({"full range with specials far apart", x});
  }
  return c;
}

TEST(CudaExactKernelOnHost, BinsEdgeCasesEqualTheCpuState) {
  for_each_type_pair([]<class A, class T>() {
    for (const auto& [name, x] : bins_edge_cases<T>()) expect_emulated_exact<A, T>(x, name.c_str());
  });
}

// n around multiples of a step (4 vectors a thread) and of the flush period (2^14 terms a thread, 256 threads), with
// one block, so a thread's last step lands before, at and after a flush. Default tuning only (the inputs are long).
TEST(CudaExactKernelOnHost, BinsLengthsAroundTheFlushPeriod) {
  auto check = []<class T>(T) {
    using Tune = exact_default_tuning<T>;
    const std::size_t period = std::size_t{exact_float_bins::headroom} * exact_block_threads;
    for (std::size_t n : {period - 1, period + 5, period + 16 * 256 * 4 + 3})
      for (exact_dataset d : {exact_dataset::full_range, exact_dataset::ill}) {
        const std::vector<T> x = exact_data<T>(d, n, n + 1);
        exact_state<T> s;
        s.add(x.data(), x.size());
        for (int offset : {0, 1})
          ASSERT_TRUE(same_state(emulated_exact_state<T, Tune>(x, 1, offset), s))
              << name_of(d) << " " << float_traits<T>::name << " n=" << n << " offset=" << offset;
      }
  };
  check(float{});
  check(half{});
  check(bfloat16{});
}

// One thread adds 3 * headroom terms of one bin: terms with the bin's largest field and fraction, and every 1024th a
// term of its smallest field with an odd significand (an odd multiple of the bin's unit). With the flush period as
// documented every partial sum stays below 2^53 units (exact); a longer period lets a partial sum pass 2^53 units and
// the next odd term round, which the state comparison sees. Also: no flush before the headroom is used up.
TEST(CudaExactKernelOnHost, BinsFlushBeforeABinCouldRound) {
  constexpr int B = exact_block_threads;
  for (int q = 1; q <= 15; ++q) {
    for (std::uint32_t sg : {0u, 0x80000000u}) {
      const std::uint32_t big = sg | (std::uint32_t(std::min(16 * q + 14, 254)) << 23) | 0x7fffffu;
      const std::uint32_t small = sg | (std::uint32_t(16 * q - 1) << 23) | 1u;
      ASSERT_EQ(exact_float_bins::bin_of(big), q);
      ASSERT_EQ(exact_float_bins::bin_of(small), q);
      std::vector<long long> limbs(std::size_t(exact_float_bins::limb_rows) * B);
      std::vector<double> bins(std::size_t(exact_float_bins::bin_count) * B);
      exact_bins_thread<B> th{limbs.data(), bins.data()};
      th.clear();
      exact_accumulator<float> expected;
      const std::uint64_t count = 3 * std::uint64_t{exact_float_bins::headroom};
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint32_t b = i % 1024 == 1023 ? small : big;
        th.reserve(1);
        th.add(b);
        expected.add(detred::bit_cast<float>(b));
        if (i + 1 == exact_float_bins::headroom) {
          ASSERT_EQ(th.room, 0u);  // the whole headroom used, nothing flushed yet: the bin holds every term
          ASSERT_NE(detred::bit_cast<std::uint64_t>(bins[std::size_t(q) * B]), 0x8000000000000000ull);
        }
      }
      th.deposit();
      exact_accumulator<float> got;
      for (int k = 0; k < exact_float_bins::limb_rows; ++k) got.set_raw(k, limbs[std::size_t(k) * B]);
      got.set_count(count, th.flags, 1u << 29);
      ASSERT_TRUE(same_state(got, expected)) << "bin " << q << " sign " << sg;
    }
  }
}

// Bin boundaries: the index formula against its definition, field by field (bin q holds fields 16q - 1 .. 16q + 14,
// bin 0 fields 0 .. 14, bin 16 field 255), and every term of bin q is a multiple of 2^unit_exponent(q) below 2^39
// units.
TEST(CudaExactKernelOnHost, BinsIndexAndUnits) {
  for (std::uint32_t f = 0; f < 256; ++f)
    for (std::uint32_t fr : {0u, 1u, 0x7fffffu})
      for (std::uint32_t sg : {0u, 0x80000000u}) {
        const std::uint32_t b = sg | (f << 23) | fr;
        const int q = exact_float_bins::bin_of(b);
        ASSERT_EQ(q, f == 255 ? 16 : int((f + 1) / 16)) << f;
        if (f == 255) continue;
        const double x = std::fabs(double(detred::bit_cast<float>(b)));
        const double units = std::ldexp(x, -exact_float_bins::unit_exponent(q));
        ASSERT_EQ(units, std::floor(units)) << f;
        ASSERT_LT(units, std::ldexp(1.0, 39)) << f;
      }
}

// The lean binary64 slow path (exact_binary64_slow) against exact_accumulator<double>::add, term by term: every
// exponent field (subnormals, the largest binade, NaN and infinities) with the smallest, an odd, the largest and a
// random fraction, both signs, and +-0.0: the same limbs and the same flags (docs/EXACT.md "Extracted levels").
TEST(CudaExactKernelOnHost, Binary64SlowPathEqualsAdd) {
  using S = exact_accumulator<double>;
  constexpr int rows = exact_binary64_geometry::limb_rows;
  std::mt19937_64 rng(17);
  const std::uint64_t fmask = exact_binary64_geometry::fraction_mask;
  for (std::uint64_t f = 0; f < 2048; ++f)
    for (std::uint64_t fr : {std::uint64_t{0}, std::uint64_t{1}, fmask, rng() & fmask, (rng() & fmask) | 1})
      for (std::uint64_t sg : {std::uint64_t{0}, std::uint64_t{1} << 63}) {
        const std::uint64_t b = sg | (f << 52) | fr;
        long long limbs[rows] = {};
        unsigned flags = 0;
        unsigned others = 0;
        exact_binary64_slow<1>(limbs, b, flags, others);
        if (others) flags |= S::flag_not_only_negative_zero;
        S expected;
        expected.add(detred::bit_cast<double>(b));
        S got;
        for (int k = 0; k < rows; ++k) got.set_raw(k, limbs[k]);
        got.set_count(1, flags, 1);
        ASSERT_TRUE(same_state(got, expected)) << std::hex << b;
        ASSERT_EQ(flags, expected.flags()) << std::hex << b;
      }
}

// The digit mode's add (exact_binary64_digit_add) against exact_accumulator<double>::add, term by term, over the same
// terms as the slow path's test: the digit rows read back as 64-bit limb rows (exact_digits_to_row) give the same
// state; `others` gives the same "other than -0.0" flag, and a NaN or an infinity shows as the largest field 2047
// (its flags then come from exact_binary64_special_flags, as the rescan does).
TEST(CudaExactKernelOnHost, Binary64DigitAddEqualsAdd) {
  using S = exact_accumulator<double>;
  constexpr int R = exact_binary64_digits::rows;
  std::mt19937_64 rng(19);
  const std::uint64_t fmask = exact_binary64_geometry::fraction_mask;
  for (std::uint64_t f = 0; f < 2048; ++f)
    for (std::uint64_t fr : {std::uint64_t{0}, std::uint64_t{1}, fmask, rng() & fmask, (rng() & fmask) | 1})
      for (std::uint64_t sg : {std::uint64_t{0}, std::uint64_t{1} << 63}) {
        const std::uint64_t b = sg | (f << 52) | fr;
        unsigned digits[R] = {};
        int highest = 0;
        unsigned others = 0;
        exact_binary64_digit_add<1>(exact_digit_rows{digits, 0u}, b, highest, others);
        unsigned flags = others ? S::flag_not_only_negative_zero : 0u;
        if (highest == exact_binary64_geometry::special_field) flags |= exact_binary64_special_flags(b);
        ASSERT_EQ(highest == exact_binary64_geometry::special_field, f == 2047) << std::hex << b;
        S expected;
        expected.add(detred::bit_cast<double>(b));
        ASSERT_EQ(flags, expected.flags()) << std::hex << b;
        // Five digits at rows pos / 16 .. pos / 16 + 4 within their bounds, nothing elsewhere: for a NaN or an
        // infinity too (whose digits mean nothing: the sum is special whatever the rows hold).
        const int r = int((f > 1 ? f : 1) + exact_binary64_geometry::position_offset) >> 4;
        for (int k = 0; k < R; ++k) {
          const int d = int(digits[k]);
          const bool in_bounds = k >= r && k < r + 4 ? d >= 0 && d < 65536 : k == r + 4 ? d >= -16 && d < 16 : d == 0;
          ASSERT_TRUE(in_bounds) << std::hex << b << std::dec << " row " << k << " digit " << d;
        }
        if (f == 2047) continue;
        S got;
        for (int k = 0; k < R / 2; ++k) got.set_raw(k, exact_digits_to_row(digits[2 * k], digits[2 * k + 1]));
        got.set_count(1, flags, 1);
        ASSERT_TRUE(same_state(got, expected)) << std::hex << b;
      }
}

// The digit-column kernel's block states (exact_digit_columns_share for every thread of every block of the launch's
// partition, one thread after the other over the block's shared rows, then the rows added into limbs by
// exact_column_limb_part as the kernel adds them), merged.
template <class Tune>
exact_state<double> emulated_digit_columns_state(const std::vector<double>& x, std::uint64_t wanted, int offset) {
  using S = exact_state<double>;
  using Shape = typename Tune::shape;
  constexpr int L = S::limb_count, B = Shape::threads, C = Shape::columns;
  const std::uint64_t n = x.size();
  std::vector<uint4> storage((n * sizeof(double) + 64) / sizeof(uint4) + 1);
  double* data = reinterpret_cast<double*>(storage.data()) + offset;
  if (n) std::memcpy(data, x.data(), n * sizeof(double));
  const exact_partition part = exact_partition_for<double, Tune>(data, n, wanted);
  S total;
  std::vector<unsigned> rows(std::size_t(Shape::rows) * C);
  for (std::uint64_t block = 0; block < part.blocks; ++block) {
    std::fill(rows.begin(), rows.end(), 0u);
    unsigned flags = 0;
    for (int tid = 0; tid < B; ++tid)
      flags |= exact_digit_columns_share<double, Tune>(rows.data(), 0u, data, n, part.head, part.vectors,
                                                       exact_share<Tune>(part), block, tid);
    // docs/EXACT.md "Digit columns": the top row only receives carries and stays below 2^15 in magnitude.
    for (int c = 0; c < C; ++c)
      EXPECT_LT(std::abs(int(rows[std::size_t(Shape::rows - 1) * C + c])), 1 << 15) << "column " << c;
    S state;
    for (int k = 0; k < L; ++k) {
      long long s = 0;
      for (int c = 0; c < C; ++c) s += exact_column_limb_part<Shape>(rows.data(), k, c);
      state.set_raw(k, s);
    }
    state.set_count(0, flags, 1u << 29);
    total.merge(state);
  }
  total.set_count(n, total.flags(), 1u << 29);
  return total;
}

// A small digit-column shape for the emulation: 64 threads on 32 columns, 2 vectors a step, the columns normalised
// every 16 terms a thread (every 4 steps), so that short inputs cross many normalisations, heads, tails and the rows
// after the last whole chunk.
struct exact_small_digit_columns_tuning : exact_digit_columns_tuning<double> {
  using shape = exact_digit_columns_shape<64, 32, 2, 4>;
  static constexpr int unroll = shape::unroll;
  static constexpr int block_threads = shape::threads;
};

template <class Tune>
void expect_digit_columns_exact(const std::vector<double>& x, const char* what) {
  exact_state<double> expected;
  expected.add(x.data(), x.size());
  for (int offset : {0, 1, 3})
    for (std::uint64_t wanted : {1u, 3u, 7u}) {
      const exact_state<double> got = emulated_digit_columns_state<Tune>(x, wanted, offset);
      // A NaN or an infinity adds digits of no meaning (the result is then the flags' alone): flags and rounding only.
      using S = exact_state<double>;
      const unsigned specials = S::flag_nan | S::flag_positive_infinity | S::flag_negative_infinity;
      if (expected.flags() & specials)
        ASSERT_EQ(got.flags(), expected.flags()) << what << " n=" << x.size() << " offset=" << offset;
      else
        ASSERT_TRUE(same_state(got, expected)) << what << " n=" << x.size() << " offset=" << offset
                                               << " blocks=" << wanted << " threads=" << Tune::block_threads;
      ASSERT_EQ(raw(got.rounded<double>()), raw(expected.rounded<double>())) << what << " n=" << x.size();
    }
}

// Digit columns (docs/EXACT.md "Digit columns") on the four data sets, the window-boundary data, cancelling pairs,
// -0.0 only and the edge cases (NaN, infinities, the largest values, subnormals: the flags by the rescan), at sizes
// around the steps, chunks and the rows after the last whole chunk, for the library's shape and a small one.
TEST(CudaExactKernelOnHost, DigitColumnsEqualTheAccumulator) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{127}, std::size_t{129},
                        std::size_t{1000}, std::size_t{4099}, std::size_t{6144 * 3 + 17}, std::size_t{100003}}) {
    for (exact_dataset d : all_exact_datasets) {
      expect_digit_columns_exact<exact_small_digit_columns_tuning>(exact_data<double>(d, n, n + 3), name_of(d));
      expect_digit_columns_exact<exact_digit_columns_tuning<double>>(exact_data<double>(d, n, n + 3), name_of(d));
    }
    expect_digit_columns_exact<exact_small_digit_columns_tuning>(window_boundary_data<double>(n, 5 * n + 1),
                                                                 "window boundaries");
    expect_digit_columns_exact<exact_small_digit_columns_tuning>(cancelling_pairs<double>(n / 2, n, false),
                                                                 "x, -x pairs");
    expect_digit_columns_exact<exact_small_digit_columns_tuning>(cancelling_pairs<double>(n / 2, n, true), "-0.0 only");
  }
  for (const auto& [name, x] : exact_edge_cases<double>()) {
    expect_digit_columns_exact<exact_small_digit_columns_tuning>(x, name.c_str());
    expect_digit_columns_exact<exact_digit_columns_tuning<double>>(x, name.c_str());
  }
}

// The rows' bound under the library's shape (docs/EXACT.md "Digit columns"): a column normalised with every row at its
// largest (0xffff) receives the most terms a column can between two normalisations (six sharers, each 2^11 terms of
// its steps and 2U + 2 after them), each of one field and sign with every fraction bit set (every digit 0xffff or the
// most negative top digit: the most a row gains a term); its value then equals the start plus the terms'. A row past
// 2^31 would wrap (planted: a period of 2^13 terms fails). Then a NaN or an infinity among full-range terms, through
// the emulated blocks: the flags IEEE addition needs (the rescan).
TEST(CudaExactKernelOnHost, DigitColumnsRowsStayInBoundsAndSpecialsAreFound) {
  using Shape = exact_digit_columns_tuning<double>::shape;
  using S = exact_state<double>;
  constexpr int R = Shape::rows;
  const std::uint64_t most = std::uint64_t(Shape::sharers) * (Shape::period + 2u * Shape::unroll + 2u);
  const auto value_of = [](const unsigned* rows) {
    S s;
    for (int k = 0; k < S::limb_count; ++k)
      s.set_raw(k, 2 * k + 1 < R ? (long long)int(rows[2 * k]) + (long long)int(rows[2 * k + 1]) * 65536 : 0);
    s.set_count(0, 0, 1u << 29);
    return s;
  };
  const std::uint64_t fmask = exact_binary64_geometry::fraction_mask;
  for (std::uint64_t field : {1u, 1000u, 2046u}) {
    for (bool negative : {false, true}) {
      unsigned rows[R];
      for (int r = 0; r < R; ++r) rows[r] = 0xffffu;
      S expected = value_of(rows);
      const std::uint64_t b = (field << 52) | fmask | (negative ? std::uint64_t{1} << 63 : 0);
      int highest = 0;
      unsigned others = 0;
      for (std::uint64_t t = 0; t < most; ++t)
        exact_binary64_digit_add<1>(exact_digit_rows{rows, 0u}, b, highest, others);
      S terms;
      for (std::uint64_t t = 0; t < most; ++t) terms.add(detred::bit_cast<double>(b));
      expected.merge(terms);
      S got = value_of(rows);
      got.set_count(0, expected.flags(), 1u << 29);
      ASSERT_TRUE(same_state(got, expected)) << "field " << field << (negative ? " negative" : "");
    }
  }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = 50001;
  const std::vector<double> base = exact_data<double>(exact_dataset::full_range, n, 9);
  for (const std::vector<double>& specials : std::vector<std::vector<double>>{{nan}, {inf}, {-inf}, {inf, -inf}})
    for (std::size_t at : {std::size_t{0}, std::size_t{2}, n / 2, n - 1}) {
      std::vector<double> x = base;
      for (std::size_t j = 0; j < specials.size(); ++j) x[(at + 777 * j) % n] = specials[j];
      expect_digit_columns_exact<exact_small_digit_columns_tuning>(x, "NaN or infinities");
    }
}

// A thread's way through the digit mode: 64-bit rows holding some terms (the lean slow path, normalised) rewritten as
// digit rows (exact_row_to_digits), then streams of terms by digit_add with the rows normalised once every
// normalize_period terms as the kernel does, then the digits normalised and read back as 64-bit rows: the state equals
// the accumulator's over all the terms. The streams include 3 * 2^14 terms of one field with every fraction bit set
// (every digit 0xffff, the most a row gains a term: a longer period overflows a row), full-range terms, and terms of
// the largest and the subnormal fields.
TEST(CudaExactKernelOnHost, Binary64DigitModeKeepsTheSum) {
  using S = exact_accumulator<double>;
  using G = exact_binary64_geometry;
  constexpr int K = G::limb_rows, R = exact_binary64_digits::rows;
  std::mt19937_64 rng(23);
  const std::uint64_t fmask = G::fraction_mask;
  for (int pass = 0; pass < 3; ++pass) {
    S expected;
    long long limbs[K] = {};
    unsigned flags = 0, others = 0;
    for (int i = 0; i < 1000; ++i) {  // before the mode: the slow path
      const std::uint64_t b = (rng() & ~(std::uint64_t{0x7ff} << 52)) | (std::uint64_t(rng() % 2047) << 52);
      exact_binary64_slow<1>(limbs, b, flags, others);
      expected.add(detred::bit_cast<double>(b));
    }
    exact_normalize_rows<1, K>(limbs);
    unsigned digits[R] = {};
    for (int k = 0; k < K; ++k) exact_row_to_digits(limbs[k], digits[2 * k], digits[2 * k + 1]);
    int highest = 0;
    unsigned since = 0;
    auto add = [&](std::uint64_t b) {
      if (since + 1 > exact_binary64_digits::normalize_period) {
        exact_normalize_digits<1>(digits);
        since = 0;
      }
      ++since;
      exact_binary64_digit_add<1>(exact_digit_rows{digits, 0u}, b, highest, others);
      expected.add(detred::bit_cast<double>(b));
    };
    const std::uint64_t field = pass == 0 ? 1 : pass == 1 ? 1500 : 2046;
    for (int i = 0; i < 3 * (1 << 14); ++i) add((field << 52) | fmask | (pass == 2 ? std::uint64_t{1} << 63 : 0));
    for (int i = 0; i < 40000; ++i) {
      const std::uint64_t r = rng();
      const std::uint64_t f = i % 97 == 0 ? 0 : i % 89 == 0 ? 2046 : rng() % 2047;
      add((r & (std::uint64_t{1} << 63)) | (f << 52) | (r & fmask));
    }
    exact_normalize_digits<1>(digits);
    S got;
    for (int k = 0; k < K; ++k) got.set_raw(k, exact_digits_to_row(digits[2 * k], digits[2 * k + 1]));
    if (others) flags |= S::flag_not_only_negative_zero;
    got.set_count(0, flags, 1u << 29);
    ASSERT_LT(highest, G::special_field);
    ASSERT_TRUE(same_state(got, expected)) << "pass " << pass;
    for (int r = 0; r + 1 < R; ++r) ASSERT_LT(digits[r], 1u << 16) << r;  // normalised
  }
}

// Terms around binary64 window edges for threads whose top field settles at `top`: fields top - 64w - j for w = 0 .. 4
// and j = 0, 1, 62, 63 (the 103-field window's inside, its bottom (top - 102) between w = 1 and 2, and fields far
// below it), field 0 (subnormals, +-0.0), and in the second half fields above top (moves by 1, 63, 64, 65 and 300
// binades, at most 2046). With a small top the window stops at field 1 and the lowest fields are subnormal. Random
// signs and fractions.
std::vector<double> windows_boundary_data(std::size_t n, std::uint64_t seed, int top) {
  std::mt19937_64 rng(seed);
  std::vector<double> x(n);
  constexpr int j_of[4] = {0, 1, 62, 63};
  constexpr int up[5] = {1, 63, 64, 65, 300};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng(), r2 = rng();
    const int c = int(r2 % 24);
    int field = top;
    if (c < 20)
      field = top - 64 * (c / 4) - j_of[c % 4];
    else if (c == 20)
      field = 0;
    else if (i >= n / 2)
      field = std::min(2046, top + up[(r2 >> 8) % 5]);
    if (field < 0) field = 0;
    std::uint64_t fraction = r & exact_binary64_geometry::fraction_mask;
    if (field == 0 && (r2 >> 12) % 3 == 0) fraction = 0;  // +0.0 or -0.0
    x[i] = detred::bit_cast<double>((r & (std::uint64_t{1} << 63)) | (std::uint64_t(field) << 52) | fraction);
  }
  return x;
}

// Huge and tiny terms mixed: the largest and smallest binades, fields at multiples of 64 above field 0, and the fields
// just below a window whose top is 2046, random signs and fractions (full-range data's extremes).
std::vector<double> huge_tiny_data(std::size_t n, std::uint64_t seed) {
  constexpr int fields[] = {0, 0, 1, 2, 63, 64, 65, 127, 128, 255, 256, 257, 1023, 1982, 1983, 1918, 1919, 2045, 2046};
  std::mt19937_64 rng(seed);
  std::vector<double> x(n);
  for (auto& v : x) {
    const std::uint64_t r = rng(), field = std::uint64_t(fields[rng() % std::size(fields)]);
    v = detred::bit_cast<double>((r & ((std::uint64_t{1} << 63) | exact_binary64_geometry::fraction_mask)) |
                                 (field << 52));
  }
  return x;
}

TEST(CudaExactKernelOnHost, Binary64WindowBoundaries) {
  for (int top : {1033, 2046, 300, 100, 64})
    for (std::size_t n :
         {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{17}, std::size_t{1000}, std::size_t{40000}}) {
      const std::string what = "window boundaries, top " + std::to_string(top);
      expect_emulated_exact<double, double>(windows_boundary_data(n, n + std::size_t(top), top), what.c_str());
    }
  for (std::size_t n : {std::size_t{5}, std::size_t{999}, std::size_t{30001}})
    expect_emulated_exact<double, double>(huge_tiny_data(n, n), "huge and tiny");
}

// One block, n around one and three headroom periods a thread (2^11 terms), so that a thread's steps land before, at
// and after a deposit for headroom; data sets whose terms stay in the window.
TEST(CudaExactKernelOnHost, ExtractLevelsLengthsAroundTheHeadroom) {
  using Tune = exact_default_tuning<double>;
  using Th = exact_extract_thread<Tune::levels, Tune::block_threads, Tune::slow_run, Tune::step_test>;
  const std::size_t period = std::size_t{Th::headroom} * Tune::block_threads;
  for (std::size_t n : {period - 1, period + 5, 3 * period + 16 * Tune::block_threads + 3}) {
    std::vector<std::pair<std::string, std::vector<double>>> sets = {
        {"ill", exact_data<double>(exact_dataset::ill, n, n + 1)},
        {"normal", exact_data<double>(exact_dataset::normal, n, n + 2)},
        {"window boundaries", windows_boundary_data(n, n + 3, 1033)}};
    for (const auto& [name, x] : sets) {
      exact_state<double> s;
      s.add(x.data(), x.size());
      for (int offset : {0, 1})
        ASSERT_TRUE(same_state(emulated_exact_state<double, Tune>(x, 1, offset), s))
            << name << " n=" << n << " offset=" << offset;
    }
  }
}

// The threads' rows are normalised before the block adds them: 70,400 terms, in vectors of two that are either
// (2^1023, -2^1023) (a quarter of them, at random: they move every thread's window to field 2046 and cancel) or two of
// the largest terms at field 1906 (below the window: each adds 2^52 - 1 to row 60), all positive. Over a block of
// 256 threads those rows would sum past 2^63 if the threads left them unnormalised.
TEST(CudaExactKernelOnHost, SlowPathRowsAreNormalisedBeforeTheBlockSum) {
  const double big = detred::bit_cast<double>((std::uint64_t{1906} << 52) | exact_binary64_geometry::fraction_mask);
  const double top = detred::bit_cast<double>(std::uint64_t{2046} << 52);
  std::mt19937_64 rng(1906);
  std::vector<double> x(70400);
  for (std::size_t i = 0; i < x.size(); i += 2) {
    const bool tops = rng() % 4 == 0;
    x[i] = tops ? top : big;
    x[i + 1] = tops ? -top : big;
  }
  expect_emulated_exact<double, double>(x, "largest slow terms of one sign");
}

// extract_levels (docs/EXACT.md "Extracted levels"), term by term: for a thread whose window sits at `top`, every
// field of the window (and the fields just outside it) with the smallest, an odd, the largest, a random and a tie
// fraction (the bits below a level's grain exactly half of it), both signs, one term at a time into fresh limbs:
// the thread's limbs after the deposit equal exact_accumulator::add's, and every level's integer stays within 2^51.
template <int Levels>
void expect_extraction_exact(int top) {
  using Th = exact_extract_thread<Levels, 1>;
  using S = exact_accumulator<double>;
  std::mt19937_64 rng(std::uint64_t(top) * 7 + Levels);
  const std::uint64_t fmask = exact_binary64_geometry::fraction_mask;
  for (int f = top - Th::span - 1; f <= top + 1; ++f) {
    if (f < 1 || f > 2046) continue;
    for (std::uint64_t fr : {std::uint64_t{0}, std::uint64_t{1}, fmask, rng() & fmask, std::uint64_t{2}, fmask - 1,
                             (rng() & fmask & ~std::uint64_t{3}) | 2})
      for (std::uint64_t sg : {std::uint64_t{0}, std::uint64_t{1} << 63}) {
        const std::uint64_t b = sg | (std::uint64_t(f) << 52) | fr;
        std::vector<long long> limbs(Th::limb_rows);
        Th th{limbs.data()};
        th.set_top(top);
        th.flags |= S::flag_not_only_negative_zero;  // as the move that set top would
        th.reserve(1);
        th.add(b);
        for (int j = 0; j < Levels; ++j) {
          const long long k = (long long)th.acc[j];
          ASSERT_LE(k < 0 ? -k : k, 1ll << 51) << "level " << j << " field " << f << std::hex << " bits " << b;
          if (f <= top - Th::span) ASSERT_EQ(k, 0) << "a term below the window took the window";
        }
        th.deposit();
        S expected;
        expected.add(detred::bit_cast<double>(b));
        S got;
        for (int k = 0; k < Th::limb_rows; ++k) got.set_raw(k, limbs[std::size_t(k)]);
        got.set_count(1, th.flags, 1);
        ASSERT_TRUE(same_state(got, expected))
            << "levels " << Levels << " top " << top << " field " << f << std::hex << " bits " << b;
      }
  }
}

TEST(CudaExactKernelOnHost, ExtractLevelsEveryWindowFieldEqualsAdd) {
  for (int top : {103, 104, 700, 1023, 1900, 2042, 2043}) expect_extraction_exact<3>(top);
  for (int top : {51, 52, 1023, 2043}) expect_extraction_exact<2>(top);
}

// The window's placement (extract_levels): tops at the lowest and highest allowed (103 and 2043 for three levels),
// data above 2043 (fields 2044 .. 2046: the window stops at 2043, those terms go slow), and terms at the window's
// edges (top - 102, top - 103, top - 50, top - 51) mixed with moves, zeros and subnormals, through the whole kernel
// emulation (every host tuning, several partitions and offsets).
std::vector<double> extract_boundary_data(std::size_t n, std::uint64_t seed, int top) {
  std::mt19937_64 rng(seed);
  std::vector<double> x(n);
  constexpr int below[] = {0, 1, 2, 50, 51, 52, 101, 102, 103, 104};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng(), r2 = rng();
    const int c = int(r2 % 14);
    int field = c < 10 ? top - below[c] : (c == 10 ? 0 : std::min(2046, top + 1 + int((r2 >> 8) % 3)));
    if (c > 10 && i < n / 2) field = top;
    if (field < 0) field = 0;
    std::uint64_t fraction =
        (r2 >> 16) % 3 == 0 ? exact_binary64_geometry::fraction_mask : r & exact_binary64_geometry::fraction_mask;
    if (field == 0 && (r2 >> 12) % 3 == 0) fraction = 0;  // +0.0 or -0.0
    x[i] = detred::bit_cast<double>((r & (std::uint64_t{1} << 63)) | (std::uint64_t(field) << 52) | fraction);
  }
  return x;
}

TEST(CudaExactKernelOnHost, ExtractLevelsBoundaries) {
  for (int top : {2046, 2044, 2043, 2042, 1033, 150, 104, 103, 60})
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{1000}, std::size_t{40000}}) {
      const std::string what = "extract boundaries, top " + std::to_string(top);
      expect_emulated_exact<double, double>(extract_boundary_data(n, n + std::size_t(top), top), what.c_str());
    }
}

// One thread of extract_levels: a term at field F (top = F), then 3 * headroom + 5 terms of one sign with the largest
// fraction at the top field and at the window's lowest field: the levels must be deposited in time (with the headroom
// doubled a level's 64-bit sum would wrap).
template <int Levels>
void expect_extract_headroom_kept() {
  using Th = exact_extract_thread<Levels, 1>;
  constexpr int F = 1500;
  for (int field : {F, F - Th::span + 1})
    for (std::uint64_t sg : {std::uint64_t{0}, std::uint64_t{1} << 63}) {
      std::vector<long long> limbs(Th::limb_rows);
      Th th{limbs.data()};
      exact_accumulator<double> expected;
      auto add = [&](std::uint64_t b) {
        th.reserve(1);
        th.add(b);
        expected.add(detred::bit_cast<double>(b));
      };
      add(sg | (std::uint64_t(F) << 52));
      ASSERT_EQ(th.top, F);
      const std::uint64_t big = sg | (std::uint64_t(field) << 52) | exact_binary64_geometry::fraction_mask;
      const std::uint64_t count = 3 * std::uint64_t{Th::headroom} + 5;
      for (std::uint64_t i = 0; i < count; ++i) add(big);
      th.deposit();
      exact_accumulator<double> got;
      for (int k = 0; k < Th::limb_rows; ++k) got.set_raw(k, limbs[std::size_t(k)]);
      got.set_count(count + 1, th.flags, 1u << 29);
      ASSERT_TRUE(same_state(got, expected)) << "levels " << Levels << " field " << field << " sign " << sg;
    }
}

TEST(CudaExactKernelOnHost, ExtractLevelsHeadroomIsKept) {
  expect_extract_headroom_kept<2>();
  expect_extract_headroom_kept<3>();
}

// The block states' split form (exact_split_limb): for limbs anywhere in (-2^62, 2^62) (a block's summed limbs stay far
// inside; the reference accumulator's own carries need the margin), extreme ones included, the
// split limbs hold the same value (both normalised by the accumulator give the same state) and every limb but the top
// lies in [-2^31, 2^32 + 2^31); 2^12 split states (exact_max_blocks) summed stay below 2^63 and normalise to 2^12
// The interleaved partition's block bound (exact_partition_for with exact_streamed_tuning): every block's vectors,
// counted from exact_thread_terms' rule (ceil(whole chunks / G) chunks, block 0 also the vectors after the last whole
// chunk), stay within 2^30 / E, and the block count within the workspace's bound, for n up to 2^40 and any wanted
// count. Planted: the partition without its two-chunk slack fails.
template <class T>
void expect_interleaved_blocks_within_the_limit() {
  using Tune = exact_streamed_tuning<T>;
  constexpr std::uint64_t E = exact_vector_elements<T>, chunk = std::uint64_t(Tune::unroll) * Tune::block_threads;
  const std::uint64_t limit = (std::uint64_t{1} << 30) / E;
  std::mt19937_64 rng(71);
  const T* aligned = reinterpret_cast<const T*>(std::uintptr_t{1} << 20);
  for (int trial = 0; trial < 20000; ++trial) {
    const int log2n = 31 + int(rng() % 10);
    std::uint64_t n = (std::uint64_t{1} << log2n) + rng() % (std::uint64_t{1} << log2n);
    if (trial % 3 == 0) n = ((n / E) / limit) * limit * E + (rng() % 4) * chunk * E;  // whole multiples of the limit
    if (n > (std::uint64_t{1} << 40)) n = std::uint64_t{1} << 40;
    const std::uint64_t wanted = trial % 2 ? 1 : 1 + rng() % 300;
    const exact_partition part =
        exact_partition_for<T, Tune>(aligned, n, wanted < exact_block_bound(n) ? wanted : exact_block_bound(n));
    ASSERT_LE(part.blocks, exact_block_bound(n)) << "n=" << n;
    const std::uint64_t whole = part.vectors / chunk;
    const std::uint64_t most = (whole + part.blocks - 1) / part.blocks * chunk + (part.vectors - whole * chunk);
    ASSERT_LE(most, limit) << "n=" << n << " blocks=" << part.blocks << " wanted=" << wanted;
  }
}

TEST(CudaExactKernelOnHost, InterleavedPartitionKeepsEachBlockWithinTheLimit) {
  expect_interleaved_blocks_within_the_limit<float>();
  expect_interleaved_blocks_within_the_limit<double>();
  expect_interleaved_blocks_within_the_limit<half>();
}

// times the value.
TEST(CudaExactKernelOnHost, SplitFormKeepsTheValueAndItsBounds) {
  using S = exact_accumulator<double>;
  constexpr int L = S::limb_count;
  std::mt19937_64 rng(33);
  const long long extremes[] = {
      0, 1, -1, (1ll << 61), -(1ll << 61), (1ll << 62) - 1, -(1ll << 62) + 1, 0xffffffffll, -0x100000000ll};
  for (int trial = 0; trial < 200; ++trial) {
    long long s[L];
    for (int k = 0; k < L; ++k) {
      const long long r = (long long)(rng() >> (trial % 3 == 0 ? 2 : 3 + rng() % 30)) * (rng() & 1 ? 1 : -1);
      s[k] = trial % 5 == 0 ? extremes[rng() % std::size(extremes)] : r;
    }
    s[L - 1] = (long long)(rng() % 1024) - 512;  // the top limb holds only carries: small
    S whole, split, many;
    for (int k = 0; k < L; ++k) {
      whole.set_raw(k, s[k]);
      const long long t = exact_split_limb<L>(s, k);
      split.set_raw(k, t);
      if (k + 1 < L) {
        ASSERT_GE(t, -(1ll << 31)) << "limb " << k;
        ASSERT_LT(t, (1ll << 32) + (1ll << 31)) << "limb " << k;
      }
      many.set_raw(k, t << 12);  // 2^12 equal split states added limb by limb
    }
    whole.set_count(1, 0, 1u << 29);
    split.set_count(1, 0, 2);
    many.set_count(1, 0, 2u << 12);
    ASSERT_TRUE(same_state(whole, split)) << "trial " << trial;
    S whole_times;
    whole.normalize();
    for (int k = 0; k < L; ++k) whole_times.set_raw(k, 0);
    for (int i = 0; i < 4096; ++i) whole_times.merge(whole);
    many.normalize();
    whole_times.normalize();
    for (int k = 0; k < L; ++k) ASSERT_EQ(many.limb(k), whole_times.limb(k)) << "trial " << trial << " limb " << k;
  }
}

// The window edges through the whole kernel emulation, with the lowest bit of the result set: a term B = 1.5 * 2^E
// sets the thread's window (its top field), then y = (1 + 2^-(p-1)) 2^f (its lowest bit set) and c = -1.5 * 2^f, and
// -B; the sum y + c = -(2^(p-2) - 1) 2^(f - p + 1) has an odd significand, so a window that keeps only the upper bits
// of y (or takes a term it should leave to the slow path) changes the rounded result. f runs over every distance
// 0 .. 260 binades below the top, which holds each window's last field accepted and first refused (binary64: the
// extracted levels' span, the slow path below it; binary32: the bins), for tops in the middle, high and low.
template <class T>
void expect_window_edges_keep_the_lowest_bit(int top_exponent) {
  constexpr int p = std::same_as<T, double> ? 53 : 24;
  constexpr int lowest = std::same_as<T, double> ? -1022 : -126;
  for (int d = 0; d <= 260; ++d) {
    const int f = top_exponent - d;
    if (f < lowest) break;
    const T big = T(std::ldexp(1.5, top_exponent)), y = T(std::ldexp(1.0 + std::ldexp(1.0, 1 - p), f)),
            c = T(-std::ldexp(1.5, f));
    const std::string what =
        std::string("window edge: top 2^") + std::to_string(top_exponent) + ", term 2^" + std::to_string(f);
    for (const std::vector<T>& x : {std::vector<T>{big, y, c, -big}, std::vector<T>{y, big, -big, c}}) {
      exact_state<T> s;
      s.add(x.data(), x.size());
      ASSERT_EQ(double(s.template rounded<T>()), double(y) + double(c)) << what;
      expect_emulated_exact<double, T>(x, what.c_str());
    }
  }
}

TEST(CudaExactKernelOnHost, WindowEdgesKeepTheLowestBit) {
  for (int top : {0, 600, 1000, -700}) expect_window_edges_keep_the_lowest_bit<double>(top);
  for (int top : {0, 100, 127, -60}) expect_window_edges_keep_the_lowest_bit<float>(top);
}

TEST(CudaExactKernelOnHost, HalfWidensExactly) {
  for (unsigned h = 0; h < 65536; ++h) {
    const float f = half::from_bits(std::uint16_t(h)).to_float();
    if (f != f) continue;  // NaN payloads: the kernel keeps the payload (a NaN either way)
    ASSERT_EQ(exact_half_to_float_bits(h), detred::bit_cast<std::uint32_t>(f)) << std::hex << h;
  }
}

}  // namespace
