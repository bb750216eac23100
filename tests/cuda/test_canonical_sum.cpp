// The device-wide canonical sum (detred/cuda/sum.hpp) against the CPU backend: bit for bit equal to
// detred::sum(..., tree / tree_neumaier) for every type pair, size class, launch configuration and input alignment,
// and within each accumulator's documented error bound against the exact reference on ill-conditioned inputs.
// Label `gpu`: every test skips, saying why, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/reduce.hpp"
#include "detred/verify/error_bounds.hpp"
#include "detred/verify/exact_sum.hpp"
#include "detred/verify/generators.hpp"
#include "tests/support/device_sum.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;

// A device copy of one input, placed `offset` elements past a 256-byte boundary, and a workspace for it.
template <class T>
using device_input = test::device_sum_input<T>;

// Sizes at and around every boundary: warp lanes, tiles (2^11..2^13 elements), chunks (up to 16 tiles), the finishing
// block (512 roots), plus seeded random sizes.
std::vector<std::size_t> boundary_sizes() {
  std::vector<std::size_t> sizes{0, 1, 2, 3, 7, 8, 31, 32, 33, 255, 1000};
  for (std::size_t base : {std::size_t{1} << 11, std::size_t{1} << 12, std::size_t{1} << 13, std::size_t{1} << 15,
                           std::size_t{1} << 16, std::size_t{1} << 17, std::size_t{17} << 13, std::size_t{513} << 15})
    for (long d : {-1L, 0L, 1L}) sizes.push_back(base + d);
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < 6; ++i) sizes.push_back(rng() % (std::size_t{3} << 20));
  if (test::gpu_test_quick()) std::erase_if(sizes, [](std::size_t n) { return n > (std::size_t{1} << 17) + 1; });
  return sizes;
}

// Values over a wide exponent range with random signs (heavy cancellation), and a few zeros of both signs.
template <class T>
std::vector<T> wide_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int e = int(rng() % 24) - 12;
    double v = std::ldexp(mantissa(rng), e) * ((rng() & 1) ? -1.0 : 1.0);
    if (rng() % 97 == 0) v = (rng() & 1) ? -0.0 : 0.0;
    x[i] = test::make<T>(v);
  }
  return x;
}

template <class T, class A>
void expect_equal_to_cpu_everywhere() {
  const auto configs = test::canonical_launch_configs();
  int checked = 0;
  for (std::size_t n : boundary_sizes()) {
    const std::vector<T> x = wide_values<T>(n, n * 31 + 7);
    for (sum_method method : {sum_method::tree, sum_method::tree_neumaier}) {
      const A cpu = detred::sum<A>(x, method);
      for (std::size_t offset : {0, 1, 3}) {
        device_input<T> input(x, offset);
        for (cuda::sum_options c : configs) {
          c.method = method;
          const A gpu = input.template sum<A>(c);
          ASSERT_EQ(bits_of(gpu), bits_of(cpu))
              << "n=" << n << " method=" << to_string(method) << " offset=" << offset << " block=" << c.block_threads
              << " grid=" << c.grid_blocks << " tiles=" << c.tiles_per_chunk;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(CudaCanonicalSum, BitwiseEqualToCpuForEveryLaunchConfiguration) {
  DETRED_SKIP_WITHOUT_GPU();
  expect_equal_to_cpu_everywhere<float, float>();
  expect_equal_to_cpu_everywhere<double, double>();
  expect_equal_to_cpu_everywhere<float, double>();
  expect_equal_to_cpu_everywhere<half, float>();
  expect_equal_to_cpu_everywhere<half, double>();
  expect_equal_to_cpu_everywhere<bfloat16, float>();
  expect_equal_to_cpu_everywhere<bfloat16, double>();
}

// Sets the process's tuning overrides (include/detred/cuda/detail/tuning.hpp) for the scope.
class scoped_tuning {
 public:
  explicit scoped_tuning(const char* spec) { EXPECT_TRUE(cuda::detail::set_tuning_overrides(spec)) << spec; }
  ~scoped_tuning() { cuda::detail::set_tuning_overrides(""); }
  scoped_tuning(const scoped_tuning&) = delete;
  scoped_tuning& operator=(const scoped_tuning&) = delete;
};

// Sizes where the tuning changes the work per warp: one and several tiles per chunk (the shapes below force 2, 4 and
// 16), the spread path (2^16, 2^20) and chunks with a tail. At most about 2^20 elements, so that the test takes
// seconds.
std::vector<std::size_t> tuning_sizes() {
  std::vector<std::size_t> sizes{0, 1, 1000, 4097};
  for (std::size_t base :
       {std::size_t{1} << 13, std::size_t{1} << 16, std::size_t{1} << 17, std::size_t{33} << 14, std::size_t{1} << 20})
    for (long d : {-1L, 0L, 4096L + 7L}) sizes.push_back(base + d);
  if (test::gpu_test_quick()) std::erase_if(sizes, [](std::size_t n) { return n > (std::size_t{1} << 17) + 4103; });
  return sizes;
}

template <class T, class A>
int expect_cpu_bits_under_tuning(const char* spec) {
  const scoped_tuning tuning(spec);
  const auto shape = [](int block, int grid, int tiles) {
    return cuda::sum_options{.block_threads = block, .grid_blocks = grid, .tiles_per_chunk = tiles};
  };
  const std::vector<cuda::sum_options> configs{
      {}, shape(32, 0, 0), shape(256, 0, 1), shape(256, 0, 16), shape(128, 0, 4), shape(256, 7, 2)};
  int checked = 0;
  for (std::size_t n : tuning_sizes()) {
    // Wide values, and ill-conditioned ones (condition 1e30): Neumaier's result is nearly exact on the first, so an
    // order gone wrong inside a compensated pass shows only on the second.
    for (bool ill : {false, true}) {
      const std::vector<T> x = ill && n >= 3 ? verify::generate<T>({verify::distribution::ill, n, n * 7 + 1, 1e30})
                                             : wide_values<T>(n, n * 13 + 5);
      for (sum_method method : {sum_method::tree, sum_method::tree_neumaier}) {
        const A cpu = detred::sum<A>(x, method);
        for (std::size_t offset : {0, 1}) {  // aligned: the tuned kernels; unaligned: pass_depth is ignored
          device_input<T> input(x, offset);
          for (cuda::sum_options c : configs) {
            c.method = method;
            const A gpu = input.template sum<A>(c);
            EXPECT_EQ(bits_of(gpu), bits_of(cpu))
                << "tuning=" << spec << " n=" << n << (ill ? " ill-conditioned" : " wide values")
                << " method=" << to_string(method) << " offset=" << offset << " block=" << c.block_threads
                << " grid=" << c.grid_blocks << " tiles=" << c.tiles_per_chunk;
            if (bits_of(gpu) != bits_of(cpu)) return checked;
            ++checked;
          }
        }
      }
    }
  }
  return checked;
}

// tuning.hpp: "Each value changes speed only, never bits". Both device classes' sum tunings on whatever device runs
// the test (standard: 256 threads, one pass in flight; high: 128 threads, two passes), and each of the high class's
// two values alone, on wide and on ill-conditioned values (planted: fp64 Neumaier's wide pass reading its rows rotated
// by one passes on the wide values and fails on the ill-conditioned ones).
TEST(CudaCanonicalSum, EveryTuningKeepsTheCpuBits) {
  DETRED_SKIP_WITHOUT_GPU();
  for (const char* spec : {"sum.block_threads=256,sum.depth=1", "sum.block_threads=128,sum.depth=2",
                           "sum.block_threads=128,sum.depth=1", "sum.block_threads=256,sum.depth=2"}) {
    EXPECT_GT((expect_cpu_bits_under_tuning<float, float>(spec)), 0) << spec;
    EXPECT_GT((expect_cpu_bits_under_tuning<double, double>(spec)), 0) << spec;
    EXPECT_GT((expect_cpu_bits_under_tuning<float, double>(spec)), 0) << spec;
  }
}

// Inf, NaN, overflow, signed zeros and subnormals: the GPU gives the CPU's bits, for float and double inputs, under
// both sum tunings' pass depths (the compensated merge keeps no finiteness test, neumaier.hpp).
template <class T>
void expect_special_values_as_on_the_cpu() {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T big = std::numeric_limits<T>::max() / T(2);
  const std::vector<std::vector<T>> cases{{},
                                          {T(-0.0)},
                                          {T(-0.0), T(-0.0), T(-0.0)},
                                          {T(0.0), T(-0.0)},
                                          {inf, T(1.0)},
                                          {inf, -inf},
                                          {nan, T(1.0)},
                                          {big, big, -big},
                                          {big, T(1.0), big, -inf},
                                          {std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::denorm_min()}};
  for (const char* spec : {"sum.depth=1", "sum.depth=2"}) {
    const scoped_tuning tuning(spec);
    for (const auto& values : cases) {
      for (std::size_t repeat : {std::size_t{1}, std::size_t{5000}, std::size_t{70000}}) {
        std::vector<T> x;
        for (std::size_t r = 0; r < repeat; ++r) x.insert(x.end(), values.begin(), values.end());
        for (sum_method method : {sum_method::tree, sum_method::tree_neumaier}) {
          const T cpu = detred::sum(x, method);
          const T gpu = test::sum_host_data(std::span<const T>(x), {.method = method});
          EXPECT_EQ(bits_of(gpu), bits_of(cpu))
              << spec << ": case of " << values.size() << " values x" << repeat << " method=" << to_string(method);
        }
      }
    }
  }
}

TEST(CudaCanonicalSum, SpecialValuesFollowIeeeAsOnTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  expect_special_values_as_on_the_cpu<float>();
  expect_special_values_as_on_the_cpu<double>();
}

TEST(CudaCanonicalSum, RejectsBadArguments) {
  DETRED_SKIP_WITHOUT_GPU();
  std::vector<float> x(10, 1.0f);
  const std::span<const float> xs(x);
  EXPECT_THROW(test::sum_host_data(xs, {.method = sum_method::kahan}), invalid_argument);
  EXPECT_THROW(test::sum_host_data(xs, {.block_threads = 33}), invalid_argument);
  EXPECT_THROW(test::sum_host_data(xs, {.tiles_per_chunk = 3}), invalid_argument);
  EXPECT_THROW(test::sum_host_data(xs, {.grid_blocks = -1}), invalid_argument);
  // The size query checks the options too, and writes nothing else.
  std::size_t bytes = 7;
  float* none = nullptr;
  EXPECT_THROW(
      cuda::sum(nullptr, bytes, static_cast<const float*>(none), none, 10, nullptr, {.method = sum_method::pairwise}),
      invalid_argument);
  void* ws = nullptr;
  cuda::check(cudaMalloc(&ws, 64), "cudaMalloc");
  float* out = static_cast<float*>(ws);
  std::size_t small = 64;  // a query for 2^30 elements answers far more
  EXPECT_THROW(cuda::sum(ws, small, static_cast<const float*>(out), out, std::uint64_t{1} << 30), invalid_argument);
  std::size_t enough = 0;
  cuda::sum(nullptr, enough, static_cast<const float*>(out), out, 0);
  EXPECT_GT(enough, 0u);
  EXPECT_THROW(cuda::sum(ws, enough, static_cast<const float*>(nullptr), out, 1), invalid_argument);
  EXPECT_THROW(cuda::sum(ws, enough, static_cast<const float*>(out), static_cast<float*>(nullptr), 0),
               invalid_argument);
  cudaFree(ws);
}

// The size query: a function of n and the method only (docs/API.md), growing with n for the tree methods.
TEST(CudaCanonicalSum, SizeQueryDependsOnNAndMethodOnly) {
  const auto query = [](std::uint64_t n, cuda::sum_options o) {
    std::size_t bytes = 0;
    cuda::sum(nullptr, bytes, static_cast<const double*>(nullptr), static_cast<double*>(nullptr), n, nullptr, o);
    return bytes;
  };
  EXPECT_EQ(query(1000, {}), query(1000, {.block_threads = 64, .grid_blocks = 3, .tiles_per_chunk = 1}));
  EXPECT_LT(query(1000, {}), query(std::uint64_t{1} << 30, {}));
  EXPECT_EQ(query(1000, {}), query(1000, {.method = sum_method::tree_neumaier}));
  EXPECT_GT(query(1000, {.method = sum_method::exact}), 0u);
}

// Each accumulator's a-priori bound (docs/ACCURACY.md, as detred::verify::error_bound) against the exact sum, on
// ill-conditioned inputs (condition numbers 1e2 .. 1e30).
template <class T, class A>
void expect_within_bound() {
  for (double condition : {1e2, 1e8, 1e16, 1e30}) {
    for (std::size_t n : {std::size_t{4096}, std::size_t{1000003}}) {
      const std::vector<T> x = verify::generate<T>({verify::distribution::ill, n, 42, condition});
      const verify::exact_sum s = verify::exact_sum_of(std::span<const T>(x));
      const verify::exact_sum S = verify::exact_sum_of_magnitudes(std::span<const T>(x));
      for (sum_method method : {sum_method::tree, sum_method::tree_neumaier}) {
        const A gpu = test::sum_host_data<A>(std::span<const T>(x), {.method = method});
        verify::exact_sum diff = s;
        diff.add(-gpu);  // exact: s - gpu
        const double error = std::abs(diff.rounded<double>());
        const double bound = verify::error_bound<A>(method, s, S);
        EXPECT_LE(error, bound) << "n=" << n << " condition=" << condition << " " << to_string(method);
      }
    }
  }
}

TEST(CudaCanonicalSum, ErrorWithinDocumentedBoundOnIllConditionedInputs) {
  DETRED_SKIP_WITHOUT_GPU();
  expect_within_bound<float, float>();
  expect_within_bound<double, double>();
  expect_within_bound<float, double>();
}

// n >= 2^31: 64-bit counts and indexing all the way through (4 GiB of bfloat16).
TEST(CudaCanonicalSum, InputsBeyondTwoToTheThirtyOne) {
  DETRED_SKIP_WITHOUT_GPU();
  if (test::gpu_test_quick()) GTEST_SKIP() << "DETRED_GPU_TEST_QUICK: the 4 GiB case is left to the full run";
  const std::size_t n = (std::size_t{1} << 31) + 12345;
  std::vector<bfloat16> x(n);
  std::uint64_t state = 1;
  for (auto& v : x) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = bfloat16::from_bits(std::uint16_t(0x3f80 | ((state >> 40) & 0x7f) | ((state >> 33) & 0x8000)));
  }
  for (sum_method method : {sum_method::tree, sum_method::tree_neumaier}) {
    const float cpu = detred::sum(x, method);
    const float gpu = test::sum_host_data(std::span<const bfloat16>(x), {.method = method}, 1);
    EXPECT_EQ(bits_of(gpu), bits_of(cpu)) << to_string(method);
  }
}

}  // namespace
