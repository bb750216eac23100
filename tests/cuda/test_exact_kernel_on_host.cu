// The GPU exact sum's per-thread arithmetic (src/cuda/exact/exact_sum_kernels.cuh) run on the CPU, without a GPU:
// exact_thread_terms, the same function the kernel calls, for every thread of every block of the launch's partition,
// the threads' limbs added as the kernel adds them; the result must equal the CPU exact accumulator bit for bit. Also
// the window's headroom (a deposit before the register accumulator could overflow) and the binary16 widening over all
// 65536 bit patterns. Label `cpu`: built with the CUDA targets, needs no device.
#include <gtest/gtest.h>

#pragma nv_diag_suppress 445  // for_each_type_pair's template lambdas (A, T not in the parameter types)

#include <cstdint>
#include <cstring>
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

// The kernel's result for x placed `offset` elements past a 16-byte boundary, `wanted` blocks, computed on the host.
template <class A, class T, class Tune>
A emulated_exact_sum(const std::vector<T>& x, std::uint64_t wanted, int offset) {
  using S = exact_state<T>;
  constexpr int L = S::limb_count, B = exact_block_threads, C = Tune::columns;
  const std::uint64_t n = x.size();
  std::vector<uint4> storage((n * sizeof(T) + 64) / sizeof(uint4) + 1);
  T* data = reinterpret_cast<T*>(storage.data()) + offset;
  if (n) std::memcpy(data, x.data(), n * sizeof(T));
  const exact_partition part = exact_partition_for<T>(data, n, wanted);
  S total;
  std::vector<long long> limbs(std::size_t(C) * L * B);
  for (std::uint64_t block = 0; block < part.blocks; ++block) {
    std::fill(limbs.begin(), limbs.end(), 0);
    unsigned flags = 0;
    for (int tid = 0; tid < B; ++tid) {
      exact_thread<T, Tune> th{limbs.data() + tid};
      exact_thread_terms(th, data, n, part.head, part.vectors, part.per_block, block, tid);
      flags |= th.flags;
    }
    S state;
    for (int k = 0; k < L; ++k) {
      long long s = 0;
      for (int c = 0; c < C; ++c)
        for (int t = 0; t < B; ++t) s += limbs[std::size_t(c * L + k) * B + t];
      state.set_raw(k, s);
    }
    state.set_count(0, flags, 1u << 29);  // unnormalised limbs: merge normalises first
    total.merge(state);
  }
  return total.template rounded<A>();
}

template <class A, class T, class Tune>
void expect_emulated_exact_tuned(const std::vector<T>& x, A expected, const char* what) {
  for (int offset : {0, 1, 3})
    for (std::uint64_t wanted : {1u, 3u, 7u})
      ASSERT_EQ(raw(emulated_exact_sum<A, T, Tune>(x, wanted, offset)), raw(expected))
          << what << " " << float_traits<A>::name << "<-" << float_traits<T>::name << " n=" << x.size()
          << " offset=" << offset << " blocks=" << wanted << " unroll=" << Tune::unroll << " columns=" << Tune::columns;
}

template <class A, class T>
void expect_emulated_exact(const std::vector<T>& x, const char* what) {
  exact_state<T> s;
  s.add(x.data(), x.size());
  const A expected = s.template rounded<A>();
  // The default tuning and others (bench/experiments/exact_variants.cu): the tuning must not change a bit.
  using tunings = std::tuple<exact_default_tuning<T>, exact_tuning_of<T, 1, 1, false>, exact_tuning_of<T, 8, 2, false>,
                             exact_tuning_of<T, 4, 3, true>>;
  std::apply([&]<class... Tune>(Tune...) { (expect_emulated_exact_tuned<A, T, Tune>(x, expected, what), ...); },
             tunings{});
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
  exact_thread<T> th{limbs.data()};
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

TEST(CudaExactKernelOnHost, HalfWidensExactly) {
  for (unsigned h = 0; h < 65536; ++h) {
    const float f = half::from_bits(std::uint16_t(h)).to_float();
    if (f != f) continue;  // NaN payloads: the kernel keeps the payload (a NaN either way)
    ASSERT_EQ(exact_half_to_float_bits(h), detred::bit_cast<std::uint32_t>(f)) << std::hex << h;
  }
}

}  // namespace
