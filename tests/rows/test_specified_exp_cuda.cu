// The specified exponentials on the GPU, by exhaustion over their ranges (about 2.2e9 binary32 inputs each; the CPU
// runs the same code, and tests/rows/test_rows_cpu.cpp samples it there):
//   - exp_float_fast against exp_float for every x in its fast range [-87, 88]: the fast path's contract is the
//     specified function's bits;
//   - exp_float_lite faithful (one of the two binary32 neighbours of exp_double(x), itself within 2^-50) for every x in
//     [-104, 88.73], and the device's bits equal to the host's on a sample of 2^22 inputs spread over that range;
//   - exp_float_lite_nonpositive equal to exp_float_lite in bits on every binary32 d <= 0 (-0 to -Inf), its domain;
//   - exp_float_lite_one_step equal to exp_float_lite in bits on every binary32 in [exp_float_lite_one_step_min, 0].
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/rows/specified_math.hpp"
#include "tests/support/gpu_test.hpp"

namespace {

// The checks, one binary32 input each: true where the input fails.
// exp_float_fast's result differs from exp_float's bits.
struct fast_differs {
  __device__ bool operator()(float x) const {
    return __float_as_uint(detred::specified::exp_float_fast(x)) != __float_as_uint(detred::specified::exp_float(x));
  }
};
// exp_float_lite is not one of the two binary32 neighbours of exp_double(x).
struct lite_unfaithful {
  __device__ bool operator()(float x) const {
    const float lite = detred::specified::exp_float_lite(x);
    const double exact = detred::specified::exp_double(double(x));
    const float nearest = __double2float_rn(exact);
    const float other = double(nearest) < exact ? nextafterf(nearest, INFINITY) : nextafterf(nearest, -INFINITY);
    return __float_as_uint(lite) != __float_as_uint(nearest) && __float_as_uint(lite) != __float_as_uint(other);
  }
};
// exp_float_lite_nonpositive differs from exp_float_lite in bits.
struct nonpositive_differs {
  __device__ bool operator()(float x) const {
    return __float_as_uint(detred::specified::exp_float_lite_nonpositive(x)) !=
           __float_as_uint(detred::specified::exp_float_lite(x));
  }
};

// exp_float_lite_one_step differs from exp_float_lite in bits.
struct one_step_differs {
  __device__ bool operator()(float x) const {
    return __float_as_uint(detred::specified::exp_float_lite_one_step(x)) !=
           __float_as_uint(detred::specified::exp_float_lite(x));
  }
};

// Counts, over the bit patterns [first, first + count) read as binary32, the inputs where `fails` holds; the first
// such pattern goes to *example.
template <class Check>
__global__ void count_failures(std::uint32_t first, std::uint64_t count, unsigned long long* failures,
                               unsigned* example) {
  const Check fails{};
  unsigned long long mine = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint32_t b = first + std::uint32_t(i);
    if (fails(__uint_as_float(b))) {
      ++mine;
      atomicCAS(example, 0xffffffffu, b);
    }
  }
  if (mine) atomicAdd(failures, mine);
}

__global__ void lite_at(const std::uint32_t* bits, std::uint64_t count, std::uint32_t* out) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    out[i] = __float_as_uint(detred::specified::exp_float_lite(__uint_as_float(bits[i])));
}

template <class Kernel>
std::uint64_t differences_over(Kernel kernel, std::uint32_t lo_bits, std::uint32_t hi_bits, unsigned* example) {
  unsigned long long* d = nullptr;
  unsigned* e = nullptr;
  detred::cuda::check(cudaMalloc(&d, sizeof(*d)), "cudaMalloc");
  detred::cuda::check(cudaMalloc(&e, sizeof(*e)), "cudaMalloc");
  detred::cuda::check(cudaMemset(d, 0, sizeof(*d)), "memset");
  detred::cuda::check(cudaMemset(e, 0xff, sizeof(*e)), "memset");
  kernel<<<4096, 256>>>(lo_bits, std::uint64_t(hi_bits) - lo_bits + 1, d, e);
  detred::cuda::check(cudaDeviceSynchronize(), "count_differences");
  unsigned long long host = 0;
  detred::cuda::check(cudaMemcpy(&host, d, sizeof(host), cudaMemcpyDeviceToHost), "copy");
  detred::cuda::check(cudaMemcpy(example, e, sizeof(*e), cudaMemcpyDeviceToHost), "copy");
  cudaFree(d);
  cudaFree(e);
  return host;
}

TEST(SpecifiedExpCuda, FastExpEqualsExpFloatOnEveryBinary32InItsRange) {
  DETRED_SKIP_WITHOUT_GPU();
  const float lo = -87.0f, hi = 88.0f;
  unsigned example = 0;
  // Non-negative floats [+0, 88] and negative floats [-0, -87]: two ranges of bit patterns.
  const std::uint64_t positive =
      differences_over(count_failures<fast_differs>, 0u, detred::bit_cast<std::uint32_t>(hi), &example);
  EXPECT_EQ(positive, 0u) << "first difference at bits 0x" << std::hex << example;
  const std::uint64_t negative =
      differences_over(count_failures<fast_differs>, 0x80000000u, detred::bit_cast<std::uint32_t>(lo), &example);
  EXPECT_EQ(negative, 0u) << "first difference at bits 0x" << std::hex << example;
  std::printf("exp_float_fast == exp_float on all %llu binary32 in [-87, 88]: %llu differences\n",
              (unsigned long long)(detred::bit_cast<std::uint32_t>(hi) + 1ull +
                                   (detred::bit_cast<std::uint32_t>(lo) - 0x80000000u + 1ull)),
              (unsigned long long)(positive + negative));
}

TEST(SpecifiedExpCuda, LiteExpIsFaithfulOnEveryBinary32InItsRangeAndHasTheHostBits) {
  DETRED_SKIP_WITHOUT_GPU();
  const std::uint32_t top = detred::bit_cast<std::uint32_t>(88.73f), bottom = detred::bit_cast<std::uint32_t>(-104.0f);
  unsigned example = 0;
  const std::uint64_t positive = differences_over(count_failures<lite_unfaithful>, 0u, top, &example);
  EXPECT_EQ(positive, 0u) << "first unfaithful result at bits 0x" << std::hex << example;
  const std::uint64_t negative = differences_over(count_failures<lite_unfaithful>, 0x80000000u, bottom, &example);
  EXPECT_EQ(negative, 0u) << "first unfaithful result at bits 0x" << std::hex << example;
  std::printf("exp_float_lite faithful on all %llu binary32 in [-104, 88.73]: %llu exceptions\n",
              (unsigned long long)(top + 1ull + (bottom - 0x80000000u + 1ull)),
              (unsigned long long)(positive + negative));
  // The device's bits against the host's: 2^22 patterns spread over both ranges, and the special values.
  std::vector<std::uint32_t> bits;
  const std::uint64_t span = top + 1ull + (bottom - 0x80000000u + 1ull), step = span >> 22;
  for (std::uint64_t k = 0; k < span; k += step)
    bits.push_back(k <= top ? std::uint32_t(k) : std::uint32_t(0x80000000u + (k - top - 1)));
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -104.0001f, 88.7228394f})
    bits.push_back(detred::bit_cast<std::uint32_t>(v));
  std::uint32_t *d_bits = nullptr, *d_out = nullptr;
  const std::size_t bytes = bits.size() * sizeof(std::uint32_t);
  detred::cuda::check(cudaMalloc(&d_bits, bytes), "cudaMalloc");
  detred::cuda::check(cudaMalloc(&d_out, bytes), "cudaMalloc");
  detred::cuda::check(cudaMemcpy(d_bits, bits.data(), bytes, cudaMemcpyHostToDevice), "copy");
  lite_at<<<1024, 256>>>(d_bits, bits.size(), d_out);
  std::vector<std::uint32_t> device(bits.size());
  detred::cuda::check(cudaMemcpy(device.data(), d_out, bytes, cudaMemcpyDeviceToHost), "copy");
  cudaFree(d_bits);
  cudaFree(d_out);
  std::uint64_t mismatches = 0;
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (device[i] !=
        detred::bit_cast<std::uint32_t>(detred::specified::exp_float_lite(detred::bit_cast<float>(bits[i]))))
      ++mismatches;
  EXPECT_EQ(mismatches, 0u) << "of " << bits.size();
  std::printf("exp_float_lite, device against host on %zu inputs: %llu mismatches\n", bits.size(),
              (unsigned long long)mismatches);
}

TEST(SpecifiedExpCuda, NonpositiveLiteExpHasExpFloatLiteBitsOnEveryNonpositiveBinary32) {
  DETRED_SKIP_WITHOUT_GPU();
  unsigned example = 0;
  // -0 up to -Inf: the bit patterns 0x80000000 .. 0xff800000; and +0.
  const std::uint64_t negative =
      differences_over(count_failures<nonpositive_differs>, 0x80000000u, 0xff800000u, &example);
  EXPECT_EQ(negative, 0u) << "first difference at bits 0x" << std::hex << example;
  const std::uint64_t zero = differences_over(count_failures<nonpositive_differs>, 0u, 0u, &example);
  EXPECT_EQ(zero, 0u);
  std::printf("exp_float_lite_nonpositive == exp_float_lite on all %llu binary32 in [-Inf, 0]: %llu differences\n",
              (unsigned long long)(0xff800000ull - 0x80000000ull + 2), (unsigned long long)(negative + zero));
}

TEST(SpecifiedExpCuda, OneStepLiteExpHasExpFloatLiteBitsOnItsRange) {
  DETRED_SKIP_WITHOUT_GPU();
  unsigned example = 0;
  const std::uint32_t lowest = detred::bit_cast<std::uint32_t>(detred::specified::exp_float_lite_one_step_min);
  // -0 down to exp_float_lite_one_step_min: the bit patterns 0x80000000 .. lowest; and +0.
  const std::uint64_t negative = differences_over(count_failures<one_step_differs>, 0x80000000u, lowest, &example);
  EXPECT_EQ(negative, 0u) << "first difference at bits 0x" << std::hex << example;
  const std::uint64_t zero = differences_over(count_failures<one_step_differs>, 0u, 0u, &example);
  EXPECT_EQ(zero, 0u);
  std::printf("exp_float_lite_one_step == exp_float_lite on all %llu binary32 in [%g, 0]: %llu differences\n",
              (unsigned long long)(lowest - 0x80000000ull + 2), double(detred::specified::exp_float_lite_one_step_min),
              (unsigned long long)(negative + zero));
}

}  // namespace
