// The GPU reduce family against the CPU backend, bit for bit: product (reduce.hpp), min/max/argmin/argmax
// (extrema.hpp), dot/nrm2/asum (blas.hpp), for every type pair, >= 20 launch configurations, sizes around every pass,
// tile and chunk boundary, 16-byte aligned and misaligned pointers, special values (NaN, Inf, signed zeros, ties,
// overflow), and n >= 2^31 for float. Label `gpu`: every test skips, saying why, without a CUDA device.
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

template <class T>
struct device_copy {
  void* base = nullptr;
  T* data = nullptr;
  void* ws = nullptr;
  std::size_t ws_bytes = 0;
  device_copy(const std::vector<T>& host, std::size_t offset) {
    cuda::check(cudaMalloc(&base, 256 + (offset + host.size()) * sizeof(T)), "cudaMalloc");
    data = reinterpret_cast<T*>(static_cast<unsigned char*>(base) + 256) + offset;
    if (!host.empty())
      cuda::check(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    ws_bytes = cuda::sum_workspace_bytes(host.size());
    cuda::check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  }
  ~device_copy() {
    cudaFree(base);
    cudaFree(ws);
  }
};

#define DETRED_CONFIG_MESSAGE(c) \
  " block=" << c.block_threads << " grid=" << c.grid_blocks << " tiles=" << c.tiles_per_chunk

// Every function of the family for inputs x (and y for dot) against the CPU, over every configuration.
template <class A, class T>
int check_all(const std::vector<T>& x, const std::vector<T>& y, std::size_t offset, const char* what) {
  const std::size_t n = x.size();
  device_copy<T> dx(x, offset), dy(y, offset);
  const A cpu_product = detred::product<A>(x), cpu_dot = detred::dot<A>(x.data(), y.data(), n),
          cpu_nrm2 = detred::nrm2<A>(x.data(), n), cpu_asum = detred::asum<A>(x.data(), n);
  int checked = 0;
  for (const auto& c : test::canonical_launch_configs()) {
    const A p = cuda::product_to_host<A>(static_cast<const T*>(dx.data), n, dx.ws, dx.ws_bytes, nullptr, c);
    EXPECT_EQ(bits_of(p), bits_of(cpu_product))
        << what << " product n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    const A d = cuda::blas_to_host<A>(cuda::blas_kind::dot, static_cast<const T*>(dx.data),
                                      static_cast<const T*>(dy.data), n, dx.ws, dx.ws_bytes, nullptr, c);
    EXPECT_EQ(bits_of(d), bits_of(cpu_dot))
        << what << " dot n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    const A r = cuda::blas_to_host<A>(cuda::blas_kind::nrm2, static_cast<const T*>(dx.data),
                                      static_cast<const T*>(nullptr), n, dx.ws, dx.ws_bytes, nullptr, c);
    EXPECT_EQ(bits_of(r), bits_of(cpu_nrm2))
        << what << " nrm2 n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    const A s = cuda::blas_to_host<A>(cuda::blas_kind::asum, static_cast<const T*>(dx.data),
                                      static_cast<const T*>(nullptr), n, dx.ws, dx.ws_bytes, nullptr, c);
    EXPECT_EQ(bits_of(s), bits_of(cpu_asum))
        << what << " asum n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
    if constexpr (std::is_same_v<A, default_accumulation_t<T>>) {
      using K = cuda::extremum_kind;
      const T* d_x = dx.data;
      EXPECT_EQ(bits_of(cuda::extremum_to_host(d_x, n, K::min, dx.ws, dx.ws_bytes, nullptr, c)),
                bits_of(detred::min(x)))
          << what << " min n=" << n << DETRED_CONFIG_MESSAGE(c);
      EXPECT_EQ(bits_of(cuda::extremum_to_host(d_x, n, K::max, dx.ws, dx.ws_bytes, nullptr, c)),
                bits_of(detred::max(x)))
          << what << " max n=" << n << DETRED_CONFIG_MESSAGE(c);
      EXPECT_EQ(cuda::arg_extremum_to_host(d_x, n, K::argmin, dx.ws, dx.ws_bytes, nullptr, c), detred::argmin(x))
          << what << " argmin n=" << n << DETRED_CONFIG_MESSAGE(c);
      EXPECT_EQ(cuda::arg_extremum_to_host(d_x, n, K::argmax, dx.ws, dx.ws_bytes, nullptr, c), detred::argmax(x))
          << what << " argmax n=" << n << DETRED_CONFIG_MESSAGE(c);
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
  using K = cuda::extremum_kind;
  int checked = 0;
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
      device_copy<T> d(x, offset);
      const T* p = d.data;
      for (const auto& c : test::canonical_launch_configs()) {
        EXPECT_EQ(cuda::extremum_to_host(p, n, K::min, d.ws, d.ws_bytes, nullptr, c), detred::min(x))
            << "min n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        EXPECT_EQ(cuda::extremum_to_host(p, n, K::max, d.ws, d.ws_bytes, nullptr, c), detred::max(x))
            << "max n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        EXPECT_EQ(cuda::arg_extremum_to_host(p, n, K::argmin, d.ws, d.ws_bytes, nullptr, c), detred::argmin(x))
            << "argmin n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        EXPECT_EQ(cuda::arg_extremum_to_host(p, n, K::argmax, d.ws, d.ws_bytes, nullptr, c), detred::argmax(x))
            << "argmax n=" << n << " offset=" << offset << DETRED_CONFIG_MESSAGE(c);
        if (::testing::Test::HasFailure()) return;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
}
// The generic engine's variants (DETRED_GENERIC_ENGINE) give the CPU's bits for product, dot, nrm2 and asum (and
// leave the extrema alone): fp32 (the variants' own kernels) and bf16 (prefold, batch, single), into fp32, every
// configuration and size.
TEST(CudaReduceFamily, EngineVariantsAsOnTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  for (const std::string& variant : test::generic_engine_variants()) {
    if (variant.empty()) continue;  // the default: every other test
    const test::scoped_generic_engine engine(variant);
    SCOPED_TRACE("DETRED_GENERIC_ENGINE=" + variant);
    every_pair{}.operator()<float, float>();
    every_pair{}.operator()<float, detred::bfloat16>();
    if (::testing::Test::HasFailure()) return;
  }
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
  device_copy<float> d(x, 0);
  using K = cuda::extremum_kind;
  const float* p = d.data;
  EXPECT_EQ(cuda::arg_extremum_to_host(p, n, K::argmin, d.ws, d.ws_bytes), n - 7);
  EXPECT_EQ(cuda::arg_extremum_to_host(p, n, K::argmax, d.ws, d.ws_bytes), (std::size_t{1} << 31) + 3);
  EXPECT_EQ(bits_of(cuda::blas_to_host<double>(cuda::blas_kind::asum, p, p, n, d.ws, d.ws_bytes)),
            bits_of(detred::asum<double>(x.data(), n)));
  EXPECT_EQ(bits_of(cuda::blas_to_host<float>(cuda::blas_kind::dot, p, p, n, d.ws, d.ws_bytes)),
            bits_of(detred::dot<float>(x.data(), x.data(), n)));
}

TEST(CudaReduceFamily, RejectsBadArguments) {
  DETRED_SKIP_WITHOUT_GPU();
  device_copy<float> d(std::vector<float>(100, 1.0f), 0);
  const float* p = d.data;
  EXPECT_THROW(cuda::product_to_host(p, 100, d.ws, 16), invalid_argument);
  EXPECT_THROW(cuda::product_to_host(p, 100, d.ws, d.ws_bytes, nullptr, {33, 0, 0}), invalid_argument);
  EXPECT_THROW(cuda::product_to_host(static_cast<const float*>(nullptr), 100, d.ws, d.ws_bytes), invalid_argument);
  EXPECT_THROW(
      cuda::product_to_host(reinterpret_cast<const float*>(reinterpret_cast<const char*>(p) + 1), 10, d.ws, d.ws_bytes),
      invalid_argument);
}

}  // namespace
