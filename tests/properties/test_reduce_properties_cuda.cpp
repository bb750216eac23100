// Properties of the GPU reduce family (label gpu): for random inputs (sizes up to 40 tiles, values over a wide range
// with special values mixed in), random launch shapes (reduce_options) and random element offsets (0..7, the
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
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/extrema.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/properties/property.hpp"
#include "detred/reduce.hpp"
#include "tests/support/device_reduce.hpp"

namespace detred::test {
namespace {

// A launch shape: each field 0 ("choose") or a forced value (block_threads a multiple of 32 up to 256, grid_blocks
// 1..300, tiles_per_chunk a power of two up to 16), and an element offset 0..7 past a 256-byte boundary.
struct reduce_shape {
  cuda::reduce_options options;
  std::size_t offset = 0;
};
rc::Gen<reduce_shape> reduce_shapes() {
  namespace gen = rc::gen;
  return gen::apply(
      [](int block_threads, int grid_blocks, int tiles_per_chunk, std::size_t offset) {
        return reduce_shape{{block_threads, grid_blocks, tiles_per_chunk}, offset};
      },
      gen::oneOf(gen::just(0), gen::map(gen::inRange(1, 9), [](int k) { return 32 * k; })),
      gen::oneOf(gen::just(0), gen::inRange(1, 301)), gen::element(0, 1, 2, 4, 8, 16), gen::inRange<std::size_t>(0, 8));
}

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
    const reduce_shape shape = *reduce_shapes();
    const cuda::reduce_options& o = shape.options;
    const std::vector<T> x = random_values<T>(n, seed), y = random_values<T>(n, seed ^ 0x5bd1e995u);
    const device_input<T> dx(x, shape.offset), dy(y, shape.offset);
    const T* d_x = dx.data;
    const T* d_y = dy.data;
    RC_LOG() << "n " << n << ", seed " << seed << ", reduce_options{" << o.block_threads << ", " << o.grid_blocks
             << ", " << o.tiles_per_chunk << "}, offset " << shape.offset << "\n";
    reduce_runner run;
    const auto value = [&](auto call) { return run.run<A>(call); };
    RC_ASSERT(bits(value([&](void* ws, std::size_t& b, A* out) {
                cuda::product<A>(ws, b, d_x, out, n, nullptr, o);
              })) == bits(detred::product<A>(x)));
    RC_ASSERT(bits(value([&](void* ws, std::size_t& b, A* out) {
                cuda::dot<A>(ws, b, d_x, d_y, out, n, nullptr, o);
              })) == bits(detred::dot<A>(x.data(), y.data(), n)));
    RC_ASSERT(bits(value([&](void* ws, std::size_t& b, A* out) { cuda::nrm2<A>(ws, b, d_x, out, n, nullptr, o); })) ==
              bits(detred::nrm2<A>(x.data(), n)));
    RC_ASSERT(bits(value([&](void* ws, std::size_t& b, A* out) { cuda::asum<A>(ws, b, d_x, out, n, nullptr, o); })) ==
              bits(detred::asum<A>(x.data(), n)));
    using index = std::uint64_t;
    RC_ASSERT(bits(run.run<T>([&](void* ws, std::size_t& b, T* out) { cuda::min(ws, b, d_x, out, n, nullptr, o); })) ==
              bits(detred::min(x)));
    RC_ASSERT(bits(run.run<T>([&](void* ws, std::size_t& b, T* out) { cuda::max(ws, b, d_x, out, n, nullptr, o); })) ==
              bits(detred::max(x)));
    RC_ASSERT(run.run<index>([&](void* ws, std::size_t& b, index* out) {
      cuda::argmin(ws, b, d_x, out, n, nullptr, o);
    }) == detred::argmin(x));
    RC_ASSERT(run.run<index>([&](void* ws, std::size_t& b, index* out) {
      cuda::argmax(ws, b, d_x, out, n, nullptr, o);
    }) == detred::argmax(x));
  });
}

TEST(CudaReduceFamilyProperties, FloatSameBitsAsTheCpu) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  same_bits_as_cpu<float, float>();
}
TEST(CudaReduceFamilyProperties, FloatIntoDoubleSameBitsAsTheCpu) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  same_bits_as_cpu<double, float>();
}
TEST(CudaReduceFamilyProperties, Bfloat16IntoFloatSameBitsAsTheCpu) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  same_bits_as_cpu<float, bfloat16>();
}

}  // namespace
}  // namespace detred::test
