// The GPU exact sum's per-thread arithmetic (src/cuda/exact/exact_sum_kernels.cuh, exact_bins_thread.cuh) run on the
// CPU, without a GPU: exact_thread_share, the same function the kernel calls, for every thread of every block of the
// launch's partition, under both algorithms (register_window, exponent_bins) and several tunings, the threads' limbs
// added as the kernel adds them; the state (normalised limbs and flags) and its rounding must equal the CPU exact
// accumulator's bit for bit. Also the window's headroom (a deposit before the register accumulator could overflow),
// the bins' flush period (a flush before a bin could round), the bins' index and units, and the binary16 widening over
// all 65536 bit patterns. Label `cpu`: built with the CUDA targets, needs no device.
#include <gtest/gtest.h>

#pragma nv_diag_suppress 445  // for_each_type_pair's template lambdas (A, T not in the parameter types)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
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
  constexpr int L = S::limb_count, B = exact_block_threads, C = Tune::columns, R = Tune::limb_rows;
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
          << " columns=" << Tune::columns;
      ASSERT_EQ(raw(got.template rounded<A>()), raw(expected.template rounded<A>()))
          << what << " " << float_traits<A>::name << "<-" << float_traits<T>::name << " n=" << x.size()
          << " offset=" << offset << " blocks=" << wanted << " unroll=" << Tune::unroll << " columns=" << Tune::columns;
    }
}

// The tunings the host emulation runs: the default, the register window's former defaults and others, and for the
// binary32 family the exponent bins at other unrolls (bench_cuda_exact --variants times them).
template <class T>
using host_tunings = std::conditional_t<
    std::same_as<T, double>,
    std::tuple<exact_default_tuning<T>, exact_tuning_of<T, 1, 1, false>, exact_tuning_of<T, 8, 2, false>,
               exact_tuning_of<T, 4, 3, true>>,
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
  std::vector<long long> limbs(std::size_t(S::limb_count) * exact_block_threads * 4);
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

TEST(CudaExactKernelOnHost, HalfWidensExactly) {
  for (unsigned h = 0; h < 65536; ++h) {
    const float f = half::from_bits(std::uint16_t(h)).to_float();
    if (f != f) continue;  // NaN payloads: the kernel keeps the payload (a NaN either way)
    ASSERT_EQ(exact_half_to_float_bits(h), detred::bit_cast<std::uint32_t>(f)) << std::hex << h;
  }
}

}  // namespace
