// exp_float_fast against exp_float on the GPU, for every binary32 x in its fast range [-87, 88] (about 2.2e9 inputs):
// the fast path's contract is the specified function's bits, and this test is its proof by exhaustion on the device
// (the CPU runs the same code, and tests/rows/test_rows_cpu.cpp samples it there). It also counts how often the fast
// path defers to exp_float (the inputs whose result lies near a binary32 rounding midpoint).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "detred/cuda/error.hpp"
#include "detred/rows/specified_math.hpp"
#include "tests/support/gpu_test.hpp"

namespace {

// Counts, over the bit patterns [first, first + count) read as binary32, the inputs whose fast result differs from
// exp_float in bits; the first such pattern goes to *example.
__global__ void count_differences(std::uint32_t first, std::uint64_t count, unsigned long long* differences,
                                  unsigned* example) {
  unsigned long long mine = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint32_t b = first + std::uint32_t(i);
    const float x = __uint_as_float(b);
    const float fast = detred::specified::exp_float_fast(x), reference = detred::specified::exp_float(x);
    if (__float_as_uint(fast) != __float_as_uint(reference)) {
      ++mine;
      atomicCAS(example, 0xffffffffu, b);
    }
  }
  if (mine) atomicAdd(differences, mine);
}

std::uint64_t differences_over(std::uint32_t lo_bits, std::uint32_t hi_bits, unsigned* example) {
  unsigned long long* d = nullptr;
  unsigned* e = nullptr;
  detred::cuda::check(cudaMalloc(&d, sizeof(*d)), "cudaMalloc");
  detred::cuda::check(cudaMalloc(&e, sizeof(*e)), "cudaMalloc");
  detred::cuda::check(cudaMemset(d, 0, sizeof(*d)), "memset");
  detred::cuda::check(cudaMemset(e, 0xff, sizeof(*e)), "memset");
  count_differences<<<4096, 256>>>(lo_bits, std::uint64_t(hi_bits) - lo_bits + 1, d, e);
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
  const std::uint64_t positive = differences_over(0u, detred::bit_cast<std::uint32_t>(hi), &example);
  EXPECT_EQ(positive, 0u) << "first difference at bits 0x" << std::hex << example;
  const std::uint64_t negative = differences_over(0x80000000u, detred::bit_cast<std::uint32_t>(lo), &example);
  EXPECT_EQ(negative, 0u) << "first difference at bits 0x" << std::hex << example;
  std::printf("exp_float_fast == exp_float on all %llu binary32 in [-87, 88]: %llu differences\n",
              (unsigned long long)(detred::bit_cast<std::uint32_t>(hi) + 1ull +
                                   (detred::bit_cast<std::uint32_t>(lo) - 0x80000000u + 1ull)),
              (unsigned long long)(positive + negative));
}

}  // namespace
