// The GPU reduce family against the CPU backend, bit for bit: product (reduce.hpp), min/max/argmin/argmax
// (extrema.hpp), dot/nrm2/asum (blas.hpp), for every type pair, >= 20 launch configurations, sizes around every pass,
// tile and chunk boundary, 16-byte aligned and misaligned pointers, special values (NaN, Inf, signed zeros, ties,
// overflow), and n >= 2^31 for float. Every call sizes its workspace with its own size query and returns its result
// through cuda::to_host (tests/support/device_reduce.hpp). Label `gpu`: every test skips, saying why, without a CUDA
// device.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "detred/blas.hpp"
#include "detred/cuda/blas.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/extrema.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/reduce.hpp"
#include "tests/support/device_reduce.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;

// Around passes (32 x 64 bytes), tiles (16 KiB) and chunks (1..16 tiles) of this element size.
std::vector<std::size_t> sizes_for(std::size_t element_bytes) {
  const std::size_t tile = 16384 / element_bytes;
  std::vector<std::size_t> sizes{0, 1, 2, 3, 31, 33, 1000};
  for (std::size_t base : {tile / 8, tile, 16 * tile, 17 * tile, 40 * tile})
    for (long d : {-1L, 0L, 1L}) sizes.push_back(base + d);
  std::mt19937_64 rng(element_bytes * 77 + 14);
  for (int i = 0; i < 3; ++i) sizes.push_back(rng() % (50 * tile));
  if (test::gpu_test_quick()) std::erase_if(sizes, [&](std::size_t n) { return n > 2 * tile + 1; });
  return sizes;
}

// Values over a wide exponent range, random signs, signed zeros, and repeated values (ties for argmin/argmax).
template <class T>
std::vector<T> values(std::size_t n, std::uint64_t seed, int exponent_span = 24) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = std::ldexp(mantissa(rng), int(rng() % exponent_span) - exponent_span / 2) * ((rng() & 1) ? -1.0 : 1.0);
    if (rng() % 97 == 0) v = (rng() & 1) ? -0.0 : 0.0;
    x[i] = test::make<T>(v);
    if (i > 0 && rng() % 5 == 0) x[i] = x[rng() % i];
  }
  return x;
}

#define DETRED_CONFIG_MESSAGE(c) \
  " block=" << c.block_threads << " grid=" << c.grid_blocks << " tiles=" << c.tiles_per_chunk

// Every function of the family for inputs x (and y for dot) against the CPU, over every launch shape.
template <class A, class T>
int check_all(const std::vector<T>& x, const std::vector<T>& y, std::size_t offset, const char* what) {
  const std::uint64_t n = x.size();
  const test::device_input<T> dx(x, offset), dy(y, offset);
  const T* d_x = dx.data;
  const T* d_y = dy.data;
  test::reduce_runner run;
  const A cpu_product = detred::product<A>(x), cpu_dot = detred::dot<A>(x.data(), y.data(), n),
          cpu_nrm2 = detred::nrm2<A>(x.data(), n), cpu_asum = detred::asum<A>(x.data(), n);
  int checked = 0;
  for (const auto& c : test::reduce_launch_options()) {
    const A p =
        run.run<A>([&](void* ws, std::size_t& bytes, A* out) { cuda::product<A>(ws, bytes, d_x, out, n, nullptr, c); });
    EXPECT_EQ(bits_of(p), bits_of(cpu_product))
        << what << " product n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    const A d = run.run<A>(
        [&](void* ws, std::size_t& bytes, A* out) { cuda::dot<A>(ws, bytes, d_x, d_y, out, n, nullptr, c); });
    EXPECT_EQ(bits_of(d), bits_of(cpu_dot))
        << what << " dot n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    const A r =
        run.run<A>([&](void* ws, std::size_t& bytes, A* out) { cuda::nrm2<A>(ws, bytes, d_x, out, n, nullptr, c); });
    EXPECT_EQ(bits_of(r), bits_of(cpu_nrm2))
        << what << " nrm2 n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    const A s =
        run.run<A>([&](void* ws, std::size_t& bytes, A* out) { cuda::asum<A>(ws, bytes, d_x, out, n, nullptr, c); });
    EXPECT_EQ(bits_of(s), bits_of(cpu_asum))
        << what << " asum n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    if constexpr (std::is_same_v<A, default_accumulation_t<T>>) {
      using index = std::uint64_t;
      const T lo =
          run.run<T>([&](void* ws, std::size_t& bytes, T* out) { cuda::min(ws, bytes, d_x, out, n, nullptr, c); });
      EXPECT_EQ(bits_of(lo), bits_of(detred::min(x))) << what << " min n=" << n << DETRED_CONFIG_MESSAGE(c);
      const T hi =
          run.run<T>([&](void* ws, std::size_t& bytes, T* out) { cuda::max(ws, bytes, d_x, out, n, nullptr, c); });
      EXPECT_EQ(bits_of(hi), bits_of(detred::max(x))) << what << " max n=" << n << DETRED_CONFIG_MESSAGE(c);
      const index at_lo = run.run<index>(
          [&](void* ws, std::size_t& bytes, index* out) { cuda::argmin(ws, bytes, d_x, out, n, nullptr, c); });
      EXPECT_EQ(at_lo, detred::argmin(x)) << what << " argmin n=" << n << DETRED_CONFIG_MESSAGE(c);
      const index at_hi = run.run<index>(
          [&](void* ws, std::size_t& bytes, index* out) { cuda::argmax(ws, bytes, d_x, out, n, nullptr, c); });
      EXPECT_EQ(at_hi, detred::argmax(x)) << what << " argmax n=" << n << DETRED_CONFIG_MESSAGE(c);
    }
    ++checked;
    if (::testing::Test::HasFailure()) return checked;
  }
  return checked;
}

struct every_pair {
  template <class A, class T>
  void operator()() const {
    int checked = 0;
    for (std::size_t n : sizes_for(sizeof(T))) {
      // Products of many wide values overflow or vanish: a narrow span keeps some products finite and nonzero.
      const std::vector<T> x = values<T>(n, n * 3 + 1, n > 64 ? 2 : 24), y = values<T>(n, n * 5 + 2);
      for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) checked += check_all<A>(x, y, offset, "wide");
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(checked, 20);
  }
};

TEST(CudaReduceFamily, BitwiseEqualToCpuForEveryTypePairAndLaunchConfiguration) {
  DETRED_SKIP_WITHOUT_GPU();
  test::for_each_type_pair(every_pair{});
}

template <class T>
void special_cases() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> cases{{-0.0},       {0.0, -0.0},        {-0.0, 0.0},           {inf, 1.0},
                                               {inf, -inf},  {nan, 1.0},         {1.0, -nan},           {2.0, 0.0, inf},
                                               {-inf, -inf}, {1e30, 1e30, 1e30}, {3.0, 3.0, -3.0, -3.0}};
  for (const auto& c : cases) {
    for (std::size_t repeat : {std::size_t{1}, std::size_t{3000}}) {
      std::vector<T> x;
      for (std::size_t r = 0; r < repeat; ++r)
        for (double v : c) x.push_back(test::make<T>(v));
      check_all<default_accumulation_t<T>>(x, x, repeat == 1 ? 0 : 1, "special");
    }
  }
}
TEST(CudaReduceFamily, SpecialValuesAsOnTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  special_cases<float>();
  special_cases<double>();
  special_cases<half>();
  special_cases<bfloat16>();
}

// int32/int64 extrema against the CPU: random values with many ties, the type's extremes, every configuration, both
// offsets (16-byte vector body with and without an unaligned head).
template <class T>
void integer_extrema() {
  using index = std::uint64_t;
  int checked = 0;
  test::reduce_runner run;
  for (std::size_t n : sizes_for(sizeof(T))) {
    std::mt19937_64 rng(n * 7 + sizeof(T));
    std::vector<T> x(n);
    for (auto& v : x) {
      const std::uint64_t r = rng();
      v = r % 50 == 0   ? std::numeric_limits<T>::min()
          : r % 50 == 1 ? std::numeric_limits<T>::max()
          : r % 3 == 0  ? T(rng() % 7) - 3  // ties
                        : T(rng());
    }
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const test::device_input<T> d(x, offset);
      const T* p = d.data;
      for (const auto& c : test::reduce_launch_options()) {
        const T lo =
            run.run<T>([&](void* ws, std::size_t& bytes, T* out) { cuda::min(ws, bytes, p, out, n, nullptr, c); });
        EXPECT_EQ(lo, detred::min(x)) << "min n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        const T hi =
            run.run<T>([&](void* ws, std::size_t& bytes, T* out) { cuda::max(ws, bytes, p, out, n, nullptr, c); });
        EXPECT_EQ(hi, detred::max(x)) << "max n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        const index at_lo = run.run<index>(
            [&](void* ws, std::size_t& bytes, index* out) { cuda::argmin(ws, bytes, p, out, n, nullptr, c); });
        EXPECT_EQ(at_lo, detred::argmin(x)) << "argmin n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        const index at_hi = run.run<index>(
            [&](void* ws, std::size_t& bytes, index* out) { cuda::argmax(ws, bytes, p, out, n, nullptr, c); });
        EXPECT_EQ(at_hi, detred::argmax(x)) << "argmax n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        if (::testing::Test::HasFailure()) return;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(CudaReduceFamily, IntegerExtremaAsOnTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  integer_extrema<std::int32_t>();
  integer_extrema<std::int64_t>();
}

// n >= 2^31 (64-bit indices and counts): float, with the extreme values planted beyond index 2^31.
TEST(CudaReduceFamily, MoreThanTwoToThe31Elements) {
  DETRED_SKIP_WITHOUT_GPU();
  if (test::gpu_test_quick()) GTEST_SKIP() << "n >= 2^31 is skipped in quick mode";
  const std::size_t n = (std::size_t{1} << 31) + 4099;
  std::vector<float> x(n);
  std::mt19937 rng(31);
  for (std::size_t i = 0; i < n; ++i) x[i] = 1.0f + float(rng() % 64) * 0x1p-20f;
  x[n - 7] = -5.0f;
  x[(std::size_t{1} << 31) + 3] = 9.0f;
  x[n - 1] = 9.0f;  // a tie: argmax is the lower index
  const test::device_input<float> d(x, 0);
  const float* p = d.data;
  test::reduce_runner run;
  using index = std::uint64_t;
  EXPECT_EQ(run.run<index>([&](void* ws, std::size_t& bytes, index* out) { cuda::argmin(ws, bytes, p, out, n); }),
            n - 7);
  EXPECT_EQ(run.run<index>([&](void* ws, std::size_t& bytes, index* out) { cuda::argmax(ws, bytes, p, out, n); }),
            (std::size_t{1} << 31) + 3);
  const double a =
      run.run<double>([&](void* ws, std::size_t& bytes, double* out) { cuda::asum<double>(ws, bytes, p, out, n); });
  EXPECT_EQ(bits_of(a), bits_of(detred::asum<double>(x.data(), n)));
  const float dd =
      run.run<float>([&](void* ws, std::size_t& bytes, float* out) { cuda::dot(ws, bytes, p, p, out, n); });
  EXPECT_EQ(bits_of(dd), bits_of(detred::dot<float>(x.data(), x.data(), n)));
}

// The workspace idiom (docs/API.md) and the argument checks, all on the host before any CUDA call, so this test runs
// without a device (the pointers are never dereferenced): a null workspace is a size query that needs no other valid
// pointer and gives the same bytes for every launch shape; too few bytes, an option out of range, a null or
// misaligned pointer throw invalid_argument.
TEST(CudaReduceFamily, SizeQueryAndArgumentChecksNeedNoDevice) {
  const auto* p = reinterpret_cast<const float*>(std::uintptr_t{1} << 20);  // 16-byte aligned, never read
  auto* out = reinterpret_cast<float*>(std::uintptr_t{2} << 20);
  auto* index_out = reinterpret_cast<std::uint64_t*>(std::uintptr_t{3} << 20);
  void* ws = reinterpret_cast<void*>(std::uintptr_t{4} << 20);
  const float* null_in = nullptr;
  float* null_out = nullptr;
  const std::uint64_t n = 1'000'000;
  std::size_t bytes = 0, extremum_bytes = 0, blas_bytes = 0;
  cuda::product(nullptr, bytes, null_in, null_out, n);
  cuda::argmax(nullptr, extremum_bytes, null_in, static_cast<std::uint64_t*>(nullptr), n);
  cuda::nrm2<double>(nullptr, blas_bytes, null_in, static_cast<double*>(nullptr), n);
  EXPECT_GT(bytes, 0u);
  EXPECT_GT(extremum_bytes, 0u);
  EXPECT_GT(blas_bytes, 0u);
  for (const auto& c : test::reduce_launch_options()) {
    std::size_t again = 0, extremum_again = 0;
    cuda::product(nullptr, again, p, out, n, nullptr, c);
    cuda::argmax(nullptr, extremum_again, p, index_out, n, nullptr, c);
    EXPECT_EQ(again, bytes) << DETRED_CONFIG_MESSAGE(c);
    EXPECT_EQ(extremum_again, extremum_bytes) << DETRED_CONFIG_MESSAGE(c);
  }
  std::size_t too_few = bytes - 1, extremum_too_few = extremum_bytes - 1;
  EXPECT_THROW(cuda::product(ws, too_few, p, out, n), invalid_argument);
  EXPECT_THROW(cuda::max(ws, extremum_too_few, p, out, n), invalid_argument);
  EXPECT_THROW(cuda::product(ws, bytes, p, out, n, nullptr, {33, 0, 0}), invalid_argument);
  EXPECT_THROW(cuda::product(ws, bytes, p, out, n, nullptr, {512, 0, 0}), invalid_argument);
  EXPECT_THROW(cuda::product(ws, bytes, p, out, n, nullptr, {0, -1, 0}), invalid_argument);
  EXPECT_THROW(cuda::product(ws, bytes, p, out, n, nullptr, {0, 0, 3}), invalid_argument);
  EXPECT_THROW(cuda::product(nullptr, bytes, p, out, n, nullptr, {0, 0, 32}), invalid_argument);
  EXPECT_THROW(cuda::argmin(nullptr, extremum_bytes, p, index_out, n, nullptr, {0, 0, 5}), invalid_argument);
  EXPECT_THROW(cuda::product(ws, bytes, null_in, out, n), invalid_argument);
  EXPECT_THROW(cuda::product(ws, bytes, p, null_out, n), invalid_argument);
  EXPECT_THROW(cuda::product(ws, bytes, reinterpret_cast<const float*>(reinterpret_cast<const char*>(p) + 1), out, n),
               invalid_argument);
  EXPECT_THROW(cuda::product(static_cast<unsigned char*>(ws) + 8, bytes, p, out, n), invalid_argument);
  EXPECT_THROW(cuda::min(ws, extremum_bytes, p, null_out, n), invalid_argument);
  EXPECT_THROW(cuda::argmin(ws, extremum_bytes, null_in, index_out, n), invalid_argument);
  EXPECT_THROW(cuda::argmin(ws, extremum_bytes, p, static_cast<std::uint64_t*>(nullptr), n), invalid_argument);
  EXPECT_THROW(cuda::dot(ws, blas_bytes, p, null_in, out, n), invalid_argument);
  EXPECT_THROW(cuda::asum(ws, blas_bytes, null_in, out, n), invalid_argument);
}

}  // namespace
