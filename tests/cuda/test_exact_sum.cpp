// cuda::sum with sum_method::exact (docs/EXACT.md) against the CPU backend and the Boost reference: bit for bit the
// correctly rounded sum for every type pair, the four data sets, the hand-made edge cases, many sizes, unaligned
// inputs and every launch configuration (which the exact sum ignores), and n >= 2^31. Label `gpu`: every test skips,
// saying why, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/reduce.hpp"
#include "detred/verify/exact_sum.hpp"
#include "tests/support/device_sum.hpp"
#include "tests/support/exact_inputs.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;
using namespace detred::test;

#define DETRED_SKIP_WITHOUT_GPU() \
  if (cuda::device_count() == 0)  \
  GTEST_SKIP() << "no CUDA device: detred's GPU tests need one (ctest -L gpu on the GPU machine)"

bool quick() { return std::getenv("DETRED_GPU_TEST_QUICK") != nullptr; }

template <floating_input T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

// GPU (offsets 0, 1, 3 and two launch shapes, which the exact sum ignores) == CPU exact == the reference, as bits.
template <class A, class T>
void expect_gpu_exact(const std::vector<T>& x, const std::string& what) {
  const A reference = verify::exact_sum_of<T>(x).template rounded<A>();
  const A cpu = sum<A>(x.data(), x.size(), sum_method::exact);
  ASSERT_EQ(raw(cpu), raw(reference)) << what << " (CPU)";
  for (std::size_t offset : {0u, 1u, 3u}) {
    for (const cuda::sum_options& options :
         {cuda::sum_options{.method = sum_method::exact},
          cuda::sum_options{
              .method = sum_method::exact, .block_threads = 32, .grid_blocks = 3, .tiles_per_chunk = 1}}) {
      const A gpu = test::sum_host_data<A, T>(std::span<const T>(x), options, offset);
      ASSERT_EQ(raw(gpu), raw(cpu)) << what << " " << float_traits<A>::name << "<-" << float_traits<T>::name
                                    << " n=" << x.size() << " offset=" << offset;
    }
  }
}

TEST(CudaExactSum, EdgeCasesEqualTheCpuAndTheReference) {
  DETRED_SKIP_WITHOUT_GPU();
  for_each_type_pair([]<class A, class T>() {
    for (const auto& [name, x] : exact_edge_cases<T>()) expect_gpu_exact<A, T>(x, name);
  });
}

TEST(CudaExactSum, DataSetsEqualTheCpuAndTheReference) {
  DETRED_SKIP_WITHOUT_GPU();
  std::vector<std::size_t> sizes{1, 2, 31, 1000, 4097, std::size_t{1} << 16, (std::size_t{1} << 18) + 77};
  if (!quick()) sizes.push_back((std::size_t{1} << 22) + 5);
  for_each_type_pair([&]<class A, class T>() {
    for (exact_dataset d : all_exact_datasets)
      for (std::size_t n : sizes) expect_gpu_exact<A, T>(exact_data<T>(d, n, 3 * n + 1), name_of(d));
  });
}

// The block count (tuning.hpp's exact.waves: 1 to 32 waves of resident blocks, capped by the workspace's bound) and
// the partition (exact.interleave: contiguous ranges, or the streamed form's interleaved chunks) are speed only: the
// data sets at sizes that give one to thousands of blocks, with the CPU's bits for every setting.
TEST(CudaExactSum, EveryBlockCountGivesTheCpuBits) {
  DETRED_SKIP_WITHOUT_GPU();
  const std::vector<std::size_t> sizes{4097, std::size_t{1} << 20, (std::size_t{1} << 22) + 5};
  for (const char* waves :
       {"exact.waves=1", "exact.waves=2", "exact.waves=5", "exact.waves=32", "exact.interleave=1",
        "exact.interleave=1,exact.waves=2", "exact.interleave=1,exact.waves=32", "exact.digits64=0,exact.waves=2",
        "exact.digits64=1,exact.waves=1", "exact.digits64=1,exact.waves=7", "exact.digits64=1,exact.waves=32"}) {
    ASSERT_TRUE(cuda::detail::set_tuning_overrides(waves));
    for_each_type_pair([&]<class A, class T>() {
      for (exact_dataset d : {exact_dataset::uniform, exact_dataset::full_range})
        for (std::size_t n : sizes) {
          const std::vector<T> x = exact_data<T>(d, n, n + 11);
          const A cpu = sum<A>(x.data(), x.size(), sum_method::exact);
          const A gpu =
              test::sum_host_data<A, T>(std::span<const T>(x), cuda::sum_options{.method = sum_method::exact}, 1);
          ASSERT_EQ(raw(gpu), raw(cpu)) << waves << " " << name_of(d) << " n=" << n;
        }
    });
  }
  ASSERT_TRUE(cuda::detail::set_tuning_overrides(nullptr));
}

// The streamed form (exact.interleave=1: interleaved chunks, 256-byte L2 fetches, the NaN rescan through the same
// partition) on the edge cases and the data sets, at offsets 0, 1 and 3 (heads, tails and the leftover vectors
// after the last whole chunk).
TEST(CudaExactSum, StreamedFormEqualsTheCpuAndTheReference) {
  DETRED_SKIP_WITHOUT_GPU();
  ASSERT_TRUE(cuda::detail::set_tuning_overrides("exact.interleave=1"));
  const std::vector<std::size_t> sizes{
      1, 31, 4097, std::size_t{1} << 16, (std::size_t{1} << 18) + 77, (std::size_t{1} << 22) + 5};
  for_each_type_pair([&]<class A, class T>() {
    for (const auto& [name, x] : exact_edge_cases<T>()) expect_gpu_exact<A, T>(x, name);
    for (exact_dataset d : all_exact_datasets)
      for (std::size_t n : sizes) expect_gpu_exact<A, T>(exact_data<T>(d, n, 3 * n + 1), name_of(d));
  });
  ASSERT_TRUE(cuda::detail::set_tuning_overrides(nullptr));
}

// The streamed form's kernel 1 above the small sums, in each form the tuning offers (exact.load32 / exact.load64:
// 256-byte L2 fetches or plain 16-byte loads; exact.digits64: binary64 by extracted levels or by digit columns) is
// speed only: every type pair and data set just above the small-sum bound (16 MiB: whole chunks, then the rows after
// the last one), at offsets 0, 1 and 3, with the CPU's and the reference's bits under each (planted: the plain-load
// launch given n - 1 terms fails it).
TEST(CudaExactSum, EveryLoadFlavourGivesTheCpuBits) {
  DETRED_SKIP_WITHOUT_GPU();
  for (const char* spec : {"exact.load32=2,exact.load64=2,exact.digits64=0",
                           "exact.load32=0,exact.load64=0,exact.digits64=0", "exact.digits64=1"}) {
    ASSERT_TRUE(cuda::detail::set_tuning_overrides(spec));
    for_each_type_pair([&]<class A, class T>() {
      const std::size_t n = (std::size_t{1} << 24) / sizeof(T) + 4099;
      for (exact_dataset d : all_exact_datasets)
        expect_gpu_exact<A, T>(exact_data<T>(d, n, n + 7), std::string(spec) + " " + name_of(d));
    });
  }
  ASSERT_TRUE(cuda::detail::set_tuning_overrides(nullptr));
}

// The fast path's window (docs/EXACT.md "On the GPU"): terms at the window's bottom field and just below it, the
// window moving up mid-stream, subnormals and zeros among them, at sizes around the vector, step and block
// boundaries (and the offsets 0, 1, 3 of expect_gpu_exact: unaligned heads and tails).
TEST(CudaExactSum, FastPathWindowBoundaries) {
  DETRED_SKIP_WITHOUT_GPU();
  std::vector<std::size_t> sizes{
      1, 7, 9, 255, 4095, 4096, 4097, 2 * 256 * 16 + 3, (std::size_t{1} << 16) + 5, (std::size_t{1} << 20) + 7};
  if (!quick()) sizes.push_back((std::size_t{1} << 23) + 13);
  for_each_type_pair([&]<class A, class T>() {
    for (std::size_t n : sizes) expect_gpu_exact<A, T>(window_boundary_data<T>(n, 17 * n + 5), "window boundaries");
  });
}

// Fast-path terms that cancel exactly (+0.0), and large inputs of -0.0 only (-0.0): the zero's sign with every term
// in vectors.
TEST(CudaExactSum, CancellationAndNegativeZerosAtScale) {
  DETRED_SKIP_WITHOUT_GPU();
  for_each_type_pair([&]<class A, class T>() {
    for (std::size_t pairs : {std::size_t{3}, std::size_t{5000}, (std::size_t{1} << 19) + 1}) {
      expect_gpu_exact<A, T>(cancelling_pairs<T>(pairs, pairs, false), "x, -x pairs");
      expect_gpu_exact<A, T>(cancelling_pairs<T>(pairs, pairs, true), "-0.0 only");
    }
  });
}

// binary64's digit adds (docs/EXACT.md "The digit mode": a block of extracted levels whose first step went mostly by
// the slow path adds the rest by atomics into 16-bit digit rows; "Digit columns": every term so, into rows that six
// threads share; either way a NaN or an infinity is found again by a rescan of the thread's terms): full-range data
// above the small-sum size with -0.0 and +0.0 among them, and with a NaN, +Inf, -Inf or both infinities placed early,
// in the middle and at the end, under both kernel-1 algorithms (exact.digits64).
void expect_digit_adds_zeros_and_specials();
TEST(CudaExactSum, DigitModeZerosAndSpecials) {
  DETRED_SKIP_WITHOUT_GPU();
  for (const char* spec : {"exact.digits64=0", "exact.digits64=1"}) {
    ASSERT_TRUE(cuda::detail::set_tuning_overrides(spec));
    SCOPED_TRACE(spec);
    expect_digit_adds_zeros_and_specials();
  }
  ASSERT_TRUE(cuda::detail::set_tuning_overrides(nullptr));
}
void expect_digit_adds_zeros_and_specials() {
  using T = double;
  const std::size_t n = (std::size_t{3} << 20) + 5;  // 24 MiB: the large form
  const std::vector<T> base = exact_data<T>(exact_dataset::full_range, n, 41);
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> zeros = base;
  for (std::size_t i = 0; i < n; i += 7) zeros[i] = (i / 7) % 3 == 0 ? T(0.0) : T(-0.0);
  expect_gpu_exact<T, T>(zeros, "full range with zeros");
  // Full-range x, -x pairs and zeros of both signs, shuffled: the sum is exactly zero (+0.0), so a digit of the wrong
  // size from any term, -0.0 included, shows in the result.
  std::vector<T> pairs(base.begin(), base.begin() + std::ptrdiff_t(n / 3));
  for (std::size_t i = 0; i < n / 3; ++i) pairs.push_back(-base[i]);
  for (std::size_t i = 0; i < n / 3; ++i) pairs.push_back(i % 2 ? T(-0.0) : T(0.0));
  std::shuffle(pairs.begin(), pairs.end(), std::mt19937_64(43));
  expect_gpu_exact<T, T>(pairs, "full-range pairs and zeros");
  for (const std::vector<T>& specials : std::vector<std::vector<T>>{{nan}, {inf}, {-inf}, {inf, -inf}}) {
    for (std::size_t at : {std::size_t{100}, n / 2, n - 3}) {
      std::vector<T> x = base;
      for (std::size_t j = 0; j < specials.size(); ++j) x[at + 1000 * j] = specials[j];
      expect_gpu_exact<T, T>(x, "full range with a NaN or infinities");
    }
  }
}

// Small sums (docs/EXACT.md "Small sums"): the single pass of the binary32 family, whose last block finds the total
// and puts the arrival word back at rest, and binary64's short steps. Their bits on one workspace reused call after
// call, on a workspace first filled with arbitrary bytes (a stale arrival word), and between canonical sums that use
// the same word, at sizes from one block to hundreds of blocks and on both sides of the single-pass size (2^16 floats)
// and of the small-sum size (16 MiB).
template <class T>
void expect_small_sums_on_reused_and_dirty_workspaces() {
  const std::size_t edge = (std::size_t{1} << 24) / sizeof(T);
  for (unsigned char fill : {0x00, 0xa5, 0xff}) {
    for (std::size_t n : {std::size_t{1000}, std::size_t{1} << 16, (std::size_t{1} << 16) + 1,
                          (std::size_t{1} << 20) + 3, edge, edge + 2}) {
      const std::vector<T> x = exact_data<T>(exact_dataset::full_range, n, n + 5);
      const T cpu = sum<T>(x.data(), x.size(), sum_method::exact);
      const std::size_t ws_bytes = device_sum_input<T>::bytes_for(n);
      device_bytes input(n * sizeof(T)), out(sizeof(T)), workspace(ws_bytes);
      cuda::check(cudaMemcpy(input.get(), x.data(), n * sizeof(T), cudaMemcpyHostToDevice), "copy");
      cuda::check(cudaMemset(workspace.get(), fill, ws_bytes), "cudaMemset");
      const T* d_x = reinterpret_cast<const T*>(input.get());
      T* d_out = reinterpret_cast<T*>(out.get());
      for (int call = 0; call < 3; ++call) {
        for (sum_method method : {sum_method::exact, sum_method::tree}) {     // tree: the same arrival word
          cuda::check(cudaMemset(out.get(), 0xff, sizeof(T)), "cudaMemset");  // all ones until written
          std::size_t bytes = ws_bytes;
          cuda::sum(workspace.get(), bytes, d_x, d_out, n, nullptr, cuda::sum_options{.method = method});
          const T got = cuda::to_host(static_cast<const T*>(d_out), nullptr);
          if (method == sum_method::exact)
            ASSERT_EQ(raw(got), raw(cpu))
                << float_traits<T>::name << " fill " << int(fill) << " n=" << n << " call " << call;
          else
            ASSERT_NE(raw(got), raw(detred::bit_cast<T>(~typename float_traits<T>::bits_type{0})))
                << "tree after exact: fill " << int(fill) << " n=" << n << " call " << call;
        }
      }
    }
  }
}

TEST(CudaExactSum, SmallSumsOnReusedAndDirtyWorkspaces) {
  DETRED_SKIP_WITHOUT_GPU();
  expect_small_sums_on_reused_and_dirty_workspaces<float>();
  expect_small_sums_on_reused_and_dirty_workspaces<double>();
}

TEST(CudaExactSum, MoreThanTwoToThe31Terms) {
  DETRED_SKIP_WITHOUT_GPU();
  if (quick()) GTEST_SKIP() << "quick mode (sanitizers): no 4 GiB input";
  // 2^31 + 1000 halves, each 0x3c3c = 1084/1024: the exact sum n * 1084/1024 is a double, rounded once to float.
  const std::uint64_t n = (std::uint64_t{1} << 31) + 1000;
  device_bytes x(n * sizeof(half));
  cuda::check(cudaMemset(x.get(), 0x3c, n * sizeof(half)), "cudaMemset");
  const half* d_x = reinterpret_cast<const half*>(x.get());
  const double exact = double(n) * 1084.0 / 1024.0;
  EXPECT_EQ(test::sum_to_host<double>(d_x, n, {.method = sum_method::exact}), exact);
  EXPECT_EQ(test::sum_to_host<float>(d_x, n, {.method = sum_method::exact}), static_cast<float>(exact));
}

TEST(CudaExactSum, EmptyInputIsNegativeZero) {
  DETRED_SKIP_WITHOUT_GPU();
  const std::vector<double> none;
  EXPECT_EQ(raw(test::sum_host_data<double, double>(std::span<const double>(none), {.method = sum_method::exact})),
            raw(-0.0));
}

}  // namespace
