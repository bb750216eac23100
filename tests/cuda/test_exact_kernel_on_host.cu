// The GPU exact sum's per-thread arithmetic (src/cuda/exact/exact_sum_kernels.cuh, exact_bins_thread.cuh) run on the
// CPU, without a GPU: exact_thread_share, the same function the kernel calls, for every thread of every block of the
// launch's partition, under both algorithms (register_window, exponent_bins) and several tunings, the threads' limbs
// added as the kernel adds them; the state (normalised limbs and flags) and its rounding must equal the CPU exact
// accumulator's bit for bit. Also the window's headroom (a deposit before the register accumulator could overflow),
// the bins' flush period (a flush before a bin could round), the bins' index and units, the binary16 widening over
// all 65536 bit patterns, and for binary64's adjacent windows their edges, headroom and lean slow path. Label `cpu`:
// built with the CUDA targets, needs no device.
#include <gtest/gtest.h>

#pragma nv_diag_suppress 445  // for_each_type_pair's template lambdas (A, T not in the parameter types)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
  const exact_partition part = exact_partition_for<T>(data, n, wanted);
  S total;
  std::vector<long long> limbs(std::size_t(C) * R * B);
  std::vector<double> bins(std::size_t(exact_float_bins::bin_count) * B);
  for (std::uint64_t block = 0; block < part.blocks; ++block) {
    unsigned flags = 0;
    for (int tid = 0; tid < B; ++tid)
      flags |= exact_thread_share<T, Tune>(limbs.data() + tid, bins.data() + tid, data, n, part.head, part.vectors,
                                           part.per_block, block, tid);
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
          << " columns=" << Tune::columns << " windows=" << Tune::windows << " threads=" << Tune::block_threads;
      ASSERT_EQ(raw(got.template rounded<A>()), raw(expected.template rounded<A>()))
          << what << " " << float_traits<A>::name << "<-" << float_traits<T>::name << " n=" << x.size()
          << " offset=" << offset << " blocks=" << wanted << " unroll=" << Tune::unroll << " columns=" << Tune::columns
          << " windows=" << Tune::windows << " threads=" << Tune::block_threads;
    }
}

// The tunings the host emulation runs: the default, the register window's former defaults and others, for binary64
// the adjacent windows (1 to 4 windows, 64 to 256 threads a block, unrolls 1 to 16) and the adaptive windows (sticky
// and 1/16; on the host each thread's vote is its own predicate), and for the binary32 family the
// exponent bins at other unrolls (bench_cuda_exact --variants times them).
template <class T>
using host_tunings = std::conditional_t<
    std::same_as<T, double>,
    std::tuple<exact_default_tuning<T>, exact_tuning_of<T, 1, 1, false>, exact_tuning_of<T, 8, 2, false>,
               exact_tuning_of<T, 4, 3, true>, exact_windows_tuning<T, 8, 1, 256>, exact_windows_tuning<T, 8, 2, 128>,
               exact_windows_tuning<T, 1, 3, 64>, exact_windows_tuning<T, 16, 4, 128>,
               exact_adaptive_windows_tuning<T, 8, 256, 31>, exact_adaptive_windows_tuning<T, 4, 64, 4>,
               exact_adaptive_windows_tuning<T, 4, 64, 4, 2>, exact_adaptive_windows_tuning<T, 8, 128, 31, 16>,
               exact_outlined_tuning<exact_adaptive_windows_tuning<T, 2, 64, 4, 3>>,
               exact_adaptive_windows_tuning<T, 1, 32, 4, -1>,
               exact_outlined_tuning<exact_windows_tuning<T, 8, 1, 256>>, exact_extract_tuning<T, 8, 3>,
               exact_extract_tuning<T, 8, 2>, exact_extract_tuning<T, 2, 3, -1, false>,
               exact_extract_tuning<T, 4, 3, 2>, exact_extract_tuning<T, 1, 2, 0>>,
    std::tuple<exact_default_tuning<T>, exact_bins_tuning<T, 1>, exact_bins_tuning<T, 8>, exact_window_tuning<T>,
               exact_tuning_of<T, 1, 1, false>, exact_tuning_of<T, 4, 3, true>>>;

template <class A, class T>
void expect_emulated_exact(const std::vector<T>& x, const char* what) {
  exact_state<T> s;
  s.add(x.data(), x.size());
  // The tuning must not change a bit.
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

// One thread adds more than `headroom` of the largest terms its window takes, all of one sign: the register
// accumulator must be deposited in time (without the deposit it would pass 2^63 or 2^127).
template <class T>
void expect_headroom_kept(T largest, std::uint64_t count) {
  using S = exact_state<T>;
  std::vector<long long> limbs(std::size_t(S::limb_count) * exact_block_threads * 4);  // exact_window_tuning's
  exact_thread<T, exact_window_tuning<T>> th{limbs.data()};
  S expected;
  for (std::uint64_t i = 0; i < count; ++i) {
    th.reserve(1);
    th.add(exact_scalar_bits<T>(largest), 0);
    expected.add(largest);
  }
  th.deposit();
  S got;
  for (int k = 0; k < S::limb_count; ++k) got.set_raw(k, limbs[std::size_t(k) * exact_block_threads]);
  got.set_count(count, th.flags, 1u << 29);
  EXPECT_EQ(raw(got.template rounded<double>()), raw(expected.template rounded<double>()));
}

TEST(CudaExactKernelOnHost, WindowHeadroomIsKept) {
  expect_headroom_kept(detred::bit_cast<double>(0x3fefffffffffffffull),
                       3 * std::uint64_t{exact_window_traits<double>::headroom} + 5);
  expect_headroom_kept(detred::bit_cast<float>(0xbf7fffffu),
                       5 * std::uint64_t{exact_window_traits<float>::headroom} + 5);
  expect_headroom_kept(half::from_bits(0x7bff), 5 * std::uint64_t{exact_window_traits<float>::headroom} + 5);
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
// random fraction, both signs, and +-0.0: the same limbs and the same flags (docs/EXACT.md "Adjacent windows").
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

// Terms at the adjacent windows' edges (docs/EXACT.md "Adjacent windows for binary64") for threads whose top field
// settles at `top`: fields top - 64w - j for w = 0 .. 4 and j = 0, 1, 62, 63 (every window's top and bottom field
// for 1 to 4 windows, and the fields just below the lowest one), field 0 (subnormals, +-0.0), and in the second half
// fields above top (moves by 1, 63, 64, 65 and 300 binades, at most 2046). With a small top (below 64K) the windows
// stop at field 1 and the lowest fields are subnormal. Random signs and fractions.
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

// Huge and tiny terms mixed: the largest and smallest binades, each window width's edges above field 0, and the
// fields just below the top windows of a top at 2046, random signs and fractions (full-range data's extremes).
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

TEST(CudaExactKernelOnHost, AdjacentWindowsBoundaries) {
  for (int top : {1033, 2046, 300, 100, 64})
    for (std::size_t n :
         {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{17}, std::size_t{1000}, std::size_t{40000}}) {
      const std::string what = "window boundaries, top " + std::to_string(top);
      expect_emulated_exact<double, double>(windows_boundary_data(n, n + std::size_t(top), top), what.c_str());
    }
  for (std::size_t n : {std::size_t{5}, std::size_t{999}, std::size_t{30001}})
    expect_emulated_exact<double, double>(huge_tiny_data(n, n), "huge and tiny");
}

// One thread: a term at field F (moves the windows: top = F), then 3 * headroom + 5 terms of one sign at field
// F - 64w with the largest fraction, the largest value window w takes (significand 2^53 - 1 shifted by 63). The
// accumulators must be deposited in time: with the headroom doubled acc[w] would pass 2^127 and wrap. Also checks
// that the terms went to window w (acc[w] != 0 before the first deposit).
template <class Tune>
void expect_windows_headroom_kept() {
  using Th = exact_windows_thread<Tune::windows, Tune::block_threads>;
  constexpr int B = Tune::block_threads;
  constexpr int F = 1500;
  for (int w = 0; w < Tune::windows; ++w)
    for (std::uint64_t sg : {std::uint64_t{0}, std::uint64_t{1} << 63}) {
      std::vector<long long> limbs(std::size_t(Th::limb_rows) * B);
      Th th{limbs.data()};
      exact_accumulator<double> expected;
      auto add = [&](std::uint64_t b) {
        th.reserve(1);
        th.add(b);
        expected.add(detred::bit_cast<double>(b));
      };
      add(sg | (std::uint64_t(F) << 52));
      ASSERT_EQ(th.top, F);
      const std::uint64_t big = sg | (std::uint64_t(F - 64 * w) << 52) | exact_binary64_geometry::fraction_mask;
      const std::uint64_t count = 3 * std::uint64_t{Th::headroom} + 5;
      for (std::uint64_t i = 0; i < count; ++i) {
        add(big);
        if (i == 3) ASSERT_TRUE(th.acc[w] != 0) << "window " << w;
      }
      th.deposit();
      exact_accumulator<double> got;
      for (int k = 0; k < Th::limb_rows; ++k) got.set_raw(k, limbs[std::size_t(k) * B]);
      got.set_count(count + 1, th.flags, 1u << 29);
      ASSERT_TRUE(same_state(got, expected)) << "windows " << Tune::windows << " window " << w << " sign " << sg;
    }
}

TEST(CudaExactKernelOnHost, AdjacentWindowsHeadroomIsKept) {
  expect_windows_headroom_kept<exact_windows_tuning<double, 8, 1, 256>>();
  expect_windows_headroom_kept<exact_windows_tuning<double, 8, 2, 128>>();
  expect_windows_headroom_kept<exact_windows_tuning<double, 1, 3, 64>>();
  expect_windows_headroom_kept<exact_windows_tuning<double, 16, 4, 128>>();
}

// One block of 64 threads, n around one and three headroom periods a thread (2^11 terms), so that a thread's steps
// land before, at and after a deposit for headroom; data sets whose terms stay in the windows.
TEST(CudaExactKernelOnHost, AdjacentWindowsLengthsAroundTheHeadroom) {
  using Tune = exact_windows_tuning<double, 8, 2, 64>;
  const std::size_t period = std::size_t{exact_windows_thread<2, 64>::headroom} * Tune::block_threads;
  for (std::size_t n : {period - 1, period + 5, 3 * period + 16 * 64 + 3}) {
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

// adaptive_windows' mode (docs/EXACT.md "Adaptive windows"): one thread driven as exact_thread_terms drives it (reserve
// for a step of unroll 8, then each vector in the mode the step was dispatched on); after every step the thread's
// limbs plus its windows (deposited in a copy) must hold exactly the terms added so far.
template <int Shift, int SlowRun = 0>
struct adaptive_thread {
  using Th = exact_windows_thread<2, 1, Shift, SlowRun>;
  using bits = unsigned long long;
  std::vector<long long> limbs = std::vector<long long>(Th::limb_rows);
  Th th{limbs.data()};
  exact_accumulator<double> expected;
  std::uint64_t count = 0;

  static bits term(int field, std::uint64_t fraction, bool negative = false) {
    return (bits(negative) << 63) | (bits(field) << 52) | (fraction & exact_binary64_geometry::fraction_mask);
  }
  // One step: at most 8 vectors of two terms.
  void step(const std::vector<std::pair<bits, bits>>& vectors) {
    ASSERT_LE(vectors.size(), 8u);
    th.reserve(16);
    for (const auto& [a, b] : vectors) {
      const bits e[2] = {a, b};
      if (th.all_slow)
        th.add_vector(e, 0, exact_all_slow_step{});
      else if (th.wide)
        th.add_vector(e, 0, std::true_type{});
      else
        th.add_vector(e, 0, std::false_type{});
      expected.add(detred::bit_cast<double>(a));
      expected.add(detred::bit_cast<double>(b));
      count += 2;
    }
  }
  void steps(int n, const std::vector<std::pair<bits, bits>>& vectors) {
    for (int i = 0; i < n; ++i) step(vectors);
  }
  // The thread's value so far equals the terms' (a copy deposits, the thread goes on untouched).
  bool exact_so_far() const {
    std::vector<long long> copy = limbs;
    Th t = th;
    t.limbs = copy.data();
    t.deposit();
    exact_accumulator<double> got;
    for (int k = 0; k < Th::limb_rows; ++k) got.set_raw(k, copy[std::size_t(k)]);
    got.set_count(count, t.flags, 1u << 29);
    return same_state(got, expected);
  }
};

// Both rules (sticky: 31; 1/16: 4): a share that never switches, a switch mid-share, at a headroom boundary and right
// after a window move; for 1/16 also the way back to narrow with window 1 still holding terms, then a move (window 1
// must be deposited at its own base) and the way to wide again; the sticky rule stays wide through the same steps.
template <int Shift>
void expect_adaptive_modes() {
  using A = adaptive_thread<Shift>;
  constexpr int top = 1500;
  std::mt19937_64 rng(Shift);
  auto w0 = [&] { return A::term(top - int(rng() % 64), rng(), rng() & 1); };        // window 0
  auto w1 = [&] { return A::term(top - 64 - int(rng() % 64), rng(), rng() & 1); };   // window 1
  auto below = [&] { return A::term(int(rng() % (top - 128)), rng(), rng() & 1); };  // below both windows
  const std::string rule = "shift " + std::to_string(Shift);
  {  // Never switches: window 0 and terms below both windows, but nothing window 1 alone would take.
    A a;
    a.step({{A::term(top, 1), w0()}});
    for (int i = 0; i < 300; ++i) {
      a.step({{w0(), w0()}, {w0(), below()}, {below(), below()}, {w0(), w0()}});
      ASSERT_FALSE(a.th.wide) << rule << " step " << i;
      ASSERT_TRUE(a.th.acc[1] == 0) << rule;
    }
    ASSERT_TRUE(a.exact_so_far()) << rule << " never switches";
  }
  {  // Mid-share: narrow for 5 steps, a vector into window 1 (slow, counted), wide from the next step on.
    A a;
    a.step({{A::term(top, 1), w0()}});
    a.steps(5, {{w0(), w0()}, {w0(), w0()}});
    ASSERT_FALSE(a.th.wide);
    a.step({{w0(), w1()}, {w0(), w0()}});
    ASSERT_FALSE(a.th.wide) << rule << ": the mode changes at the next step";
    ASSERT_TRUE(a.th.acc[1] == 0) << rule << ": the narrow step took window 1's term by the slow path";
    ASSERT_TRUE(a.exact_so_far()) << rule;
    a.step({{w1(), w1()}});
    ASSERT_TRUE(a.th.wide) << rule;
    ASSERT_TRUE(a.th.acc[1] != 0) << rule << ": the wide step took window 1 by the fast path";
    a.steps(50, {{w0(), w1()}, {w1(), below()}, {w0(), w0()}});
    ASSERT_TRUE(a.exact_so_far()) << rule << " mid-share";
  }
  {  // At a headroom boundary: the vector into window 1 in the last step before the deposit; the next reserve deposits
     // and switches.
    A a;
    a.step({{A::term(top, 1), w0()}});
    const int before = int(A::Th::headroom / 16) - 2;  // the first step reserved 16 too: room 16 after these
    a.steps(before, {{w0(), w0()},
                     {w0(), w0()},
                     {w0(), w0()},
                     {w0(), w0()},
                     {w0(), w0()},
                     {w0(), w0()},
                     {w0(), w0()},
                     {w0(), w0()}});
    ASSERT_EQ(a.th.room, 16u);
    a.step({{w0(), w0()},
            {w1(), w0()},
            {w0(), w0()},
            {w0(), w0()},
            {w0(), w0()},
            {w0(), w0()},
            {w0(), w0()},
            {w0(), w0()}});
    ASSERT_EQ(a.th.room, 0u);
    ASSERT_FALSE(a.th.wide);
    ASSERT_TRUE(a.th.acc[0] != 0);
    a.step({{w1(), w1()}});  // reserve: deposit, then the vote
    ASSERT_TRUE(a.th.wide) << rule;
    ASSERT_EQ(a.th.room, A::Th::headroom - 16);
    ASSERT_TRUE(a.th.acc[0] == 0 && a.th.acc[1] != 0) << rule;
    a.steps(200, {{w1(), w0()}, {w1(), w1()}, {w0(), w0()}, {w0(), w1()}});
    ASSERT_TRUE(a.exact_so_far()) << rule << " at a headroom boundary";
  }
  {  // Right after a move: narrow at top, a vector whose larger term moves the windows up 70 fields and whose other
     // term lands in the new window 1; wide from the next step, its terms at the new windows' bases.
    A a;
    a.step({{A::term(top, 1), w0()}, {w0(), w0()}});
    const int up = top + 70;
    a.step({{A::term(up, rng()), A::term(up - 100, rng(), true)}});
    ASSERT_EQ(a.th.top, up);
    ASSERT_FALSE(a.th.wide);
    ASSERT_TRUE(a.exact_so_far()) << rule;
    a.step({{A::term(up - 100, rng()), A::term(up - 5, rng(), true)}, {A::term(up - 127, 1), A::term(up - 64, 0)}});
    ASSERT_TRUE(a.th.wide) << rule;
    ASSERT_TRUE(a.th.acc[1] != 0);
    a.steps(20, {{A::term(up - 64 - int(rng() % 64), rng()), A::term(up - int(rng() % 64), rng(), true)}});
    ASSERT_TRUE(a.exact_so_far()) << rule << " right after a move";
  }
  {  // Back to narrow (1/16) with window 1 holding terms, a move, and wide again; sticky stays wide.
    A a;
    a.step({{A::term(top, 1), w0()}});
    a.step({{w1(), w0()}});  // narrow: slow, rescued 1
    a.step({{w1(), w1()}, {w1(), w0()}});
    ASSERT_TRUE(a.th.wide);
    ASSERT_EQ(a.th.rescued, 1u) << "the wide mode does not count";
    a.steps(16, {{below(), w0()}, {w0(), below()}, {below(), below()}, {w0(), w0()}});  // 48 slow vectors
    ASSERT_EQ(a.th.slow, 48u);
    a.step({{w0(), w0()}});
    ASSERT_EQ(a.th.wide, Shift >= 31) << rule << ": rescued 1 > 48 >> shift";
    ASSERT_TRUE(a.th.acc[1] != 0) << "window 1 still holds the wide steps' terms";
    const int up = top + 3;
    a.step({{A::term(up, rng()), A::term(top - 40, rng())}});  // a move by 3 fields, in the narrow mode for 1/16
    ASSERT_EQ(a.th.top, up);
    ASSERT_TRUE(a.th.acc[1] == 0) << "the move deposited window 1";
    ASSERT_TRUE(a.exact_so_far()) << rule << " a move after the way back";
    auto v1 = [&] { return A::term(up - 64 - int(rng() % 64), rng(), rng() & 1); };
    auto v0 = [&] { return A::term(up - int(rng() % 64), rng(), rng() & 1); };
    a.steps(4, {{v1(), v0()}, {v1(), v1()}});  // narrow: slow, rescued 3, then 5 > 48 >> 4 at the next step
    ASSERT_TRUE(a.th.wide) << rule;
    ASSERT_TRUE(a.th.acc[1] != 0) << rule;
    a.steps(30, {{v1(), v0()}, {below(), v0()}, {v1(), below()}});
    ASSERT_TRUE(a.exact_so_far()) << rule << " wide again";
  }
}

TEST(CudaExactKernelOnHost, AdaptiveWindowsModes) {
  expect_adaptive_modes<31>();
  expect_adaptive_modes<4>();
}

// The all_slow mode (docs/EXACT.md "The all_slow mode"), one thread with SlowRun = 3: a step with at least 3/4 of its
// terms slow starts it, the next 3 steps take every term by the slow path (terms in window 0, above the windows:
// no move, the windows untouched), then one step in the windows mode votes again; a step with fewer slow terms does
// not start it. Around the limb rows' normalisation period too (2^10 slow terms: the rows must be normalised in time,
// else the 2^52 digits of the largest terms pile up past 2^63). The thread's value is checked after each phase.
TEST(CudaExactKernelOnHost, AdaptiveWindowsAllSlowMode) {
  using A = adaptive_thread<4, 3>;
  constexpr int top = 1500;
  std::mt19937_64 rng(3);
  auto w0 = [&] { return A::term(top - int(rng() % 64), rng(), rng() & 1); };
  auto below = [&] { return A::term(int(rng() % (top - 128)), rng(), rng() & 1); };
  A a;
  a.step({{A::term(top, 1), w0()}});
  // 5 of 8 vectors slow: below 3/4, stays in the windows.
  a.step({{below(), w0()},
          {w0(), below()},
          {below(), below()},
          {below(), w0()},
          {below(), w0()},
          {w0(), w0()},
          {w0(), w0()},
          {w0(), w0()}});
  a.step({{w0(), w0()}});
  ASSERT_FALSE(a.th.all_slow);
  ASSERT_TRUE(a.exact_so_far());
  // 6 of 8 slow: the next step is all_slow.
  a.step({{below(), w0()},
          {w0(), below()},
          {below(), below()},
          {below(), w0()},
          {below(), w0()},
          {below(), w0()},
          {w0(), w0()},
          {w0(), w0()}});
  const auto acc0 = a.th.acc[0];
  a.step({{w0(), w0()}, {A::term(top + 40, rng()), below()}});
  ASSERT_TRUE(a.th.all_slow);
  ASSERT_EQ(a.th.top, top) << "no move in the all_slow mode";
  ASSERT_TRUE(a.th.acc[0] == acc0) << "the windows untouched in the all_slow mode";
  a.steps(2, {{w0(), w0()}});
  ASSERT_TRUE(a.th.all_slow);
  ASSERT_TRUE(a.exact_so_far());
  a.step({{w0(), w0()}});
  ASSERT_FALSE(a.th.all_slow) << "after 3 all_slow steps, a windows step";
  ASSERT_TRUE(a.th.acc[0] != acc0);
  ASSERT_TRUE(a.exact_so_far());
  // The largest terms of one sign, all slow, over three normalisation periods (the windows sit at top 2046, the
  // terms at field 1906, below both windows: position 1919 = 59 * 32 + 31, so each adds 2^52 - 1 to row 60).
  A b;
  b.step({{A::term(2046, 1), A::term(2046, 1)}});
  const auto big = A::term(1906, exact_binary64_geometry::fraction_mask);
  for (int i = 0; i < 3 * 1024 / 16 + 7; ++i)
    b.step({{big, big}, {big, big}, {big, big}, {big, big}, {big, big}, {big, big}, {big, big}, {big, big}});
  ASSERT_TRUE(b.exact_so_far()) << "normalisation period";
}

// The threads' rows are normalised before the block adds them: 70,400 terms, in vectors of two that are either
// (2^1023, -2^1023) (a quarter of them, at random: they move every thread's windows to field 2046 and cancel) or two of
// the largest terms at field 1906 (below both windows: each adds 2^52 - 1 to row 60), all positive. Over a block of
// 64 or 256 threads those rows would sum past 2^63 if the threads left them unnormalised.
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

TEST(CudaExactKernelOnHost, HalfWidensExactly) {
  for (unsigned h = 0; h < 65536; ++h) {
    const float f = half::from_bits(std::uint16_t(h)).to_float();
    if (f != f) continue;  // NaN payloads: the kernel keeps the payload (a NaN either way)
    ASSERT_EQ(exact_half_to_float_bits(h), detred::bit_cast<std::uint32_t>(f)) << std::hex << h;
  }
}

}  // namespace
