// Properties of the GPU reduce family (issue 14; label gpu): for random inputs (sizes up to 40 tiles, values over a
// wide range with special values mixed in), random launch configurations and random element offsets (0..7, the
// misaligned load path), every function equals the CPU backend bit for bit: product, dot, nrm2, asum (float and
// double accumulation of float inputs; bf16 into float), min, max, argmin, argmax. Without a CUDA device every test
// is skipped, saying so. Plain C++ against detred::cuda's host API.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "detred/blas.hpp"
#include "detred/cuda/blas.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/extrema.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/properties/property.hpp"
#include "detred/reduce.hpp"
#include "tests/properties/cuda_backend.hpp"

namespace detred::test {
namespace {

// x and y on the device at `offset` elements past a 256-byte boundary, with a workspace; freed on scope exit.
template <class T>
struct device_pair {
  void* block = nullptr;
  void* ws = nullptr;
  std::size_t ws_bytes = 0;
  const T* x = nullptr;
  const T* y = nullptr;
  device_pair(const std::vector<T>& hx, const std::vector<T>& hy, std::size_t offset) {
    const std::size_t n = hx.size(), stride = (offset + n + 255) / 256 * 256 + 256;
    cuda::check(cudaMalloc(&block, 2 * stride * sizeof(T) + 256), "cudaMalloc");
    T* px = reinterpret_cast<T*>(static_cast<unsigned char*>(block) + 256) + offset;
    T* py = px + stride;
    if (n) {
      cuda::check(cudaMemcpy(px, hx.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
      cuda::check(cudaMemcpy(py, hy.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    x = px;
    y = py;
    ws_bytes = cuda::sum_workspace_bytes(n);
    cuda::check(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  }
  ~device_pair() {
    cudaFree(block);
    cudaFree(ws);
  }
};

// n values from a seed: 24 binades, random signs, and with probability 1/64 each a special value.
template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  const double specials[] = {0.0,
                             -0.0,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             1e300};
  std::vector<T> x(n);
  for (auto& v : x) {
    double d = std::ldexp(mantissa(rng), int(rng() % 24) - 12) * ((rng() & 1) ? -1.0 : 1.0);
    if (rng() % 64 == 0) d = specials[rng() % 6];
    if constexpr (sizeof(T) == 2)
      v = T::from_float(float(d));
    else
      v = T(d);
  }
  return x;
}

template <class A, class T>
void same_bits_as_cpu() {
  check_property([] {
    const std::size_t n =
        *rc::gen::oneOf(rc::gen::inRange<std::size_t>(0, 2000), rc::gen::inRange<std::size_t>(0, 163841));
    const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
    const cuda_backend::config c = *cuda_backend::configs();
    const std::vector<T> x = random_values<T>(n, seed), y = random_values<T>(n, seed ^ 0x5bd1e995u);
    device_pair<T> d(x, y, c.offset);
    RC_LOG() << "n " << n << ", seed " << seed << "\n";
    RC_ASSERT(bits(cuda::product_to_host<A>(d.x, n, d.ws, d.ws_bytes, nullptr, c.launch)) ==
              bits(detred::product<A>(x)));
    using K = cuda::blas_kind;
    RC_ASSERT(bits(cuda::blas_to_host<A>(K::dot, d.x, d.y, n, d.ws, d.ws_bytes, nullptr, c.launch)) ==
              bits(detred::dot<A>(x.data(), y.data(), n)));
    RC_ASSERT(bits(cuda::blas_to_host<A>(K::nrm2, d.x, d.y, n, d.ws, d.ws_bytes, nullptr, c.launch)) ==
              bits(detred::nrm2<A>(x.data(), n)));
    RC_ASSERT(bits(cuda::blas_to_host<A>(K::asum, d.x, d.y, n, d.ws, d.ws_bytes, nullptr, c.launch)) ==
              bits(detred::asum<A>(x.data(), n)));
    using E = cuda::extremum_kind;
    RC_ASSERT(bits(cuda::extremum_to_host(d.x, n, E::min, d.ws, d.ws_bytes, nullptr, c.launch)) ==
              bits(detred::min(x)));
    RC_ASSERT(bits(cuda::extremum_to_host(d.x, n, E::max, d.ws, d.ws_bytes, nullptr, c.launch)) ==
              bits(detred::max(x)));
    RC_ASSERT(cuda::arg_extremum_to_host(d.x, n, E::argmin, d.ws, d.ws_bytes, nullptr, c.launch) == detred::argmin(x));
    RC_ASSERT(cuda::arg_extremum_to_host(d.x, n, E::argmax, d.ws, d.ws_bytes, nullptr, c.launch) == detred::argmax(x));
  });
}

TEST(CudaReduceFamilyProperties, FloatSameBitsAsTheCpu) {
  if (!cuda_backend::available()) GTEST_SKIP() << cuda_backend::unavailable_reason();
  same_bits_as_cpu<float, float>();
}
TEST(CudaReduceFamilyProperties, FloatIntoDoubleSameBitsAsTheCpu) {
  if (!cuda_backend::available()) GTEST_SKIP() << cuda_backend::unavailable_reason();
  same_bits_as_cpu<double, float>();
}
TEST(CudaReduceFamilyProperties, Bfloat16IntoFloatSameBitsAsTheCpu) {
  if (!cuda_backend::available()) GTEST_SKIP() << cuda_backend::unavailable_reason();
  same_bits_as_cpu<float, bfloat16>();
}

}  // namespace
}  // namespace detred::test
