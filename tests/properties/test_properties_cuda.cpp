// The property suites against the CUDA backend (label gpu): the same SumProperties as test_properties_cpu, with
// random launch configurations and unaligned inputs; CanonicalMethodsGiveTheCpuSingleThreadBits is here the
// GPU == CPU cross-check. Plus one input beyond 2^31 elements. Without a CUDA device every test is skipped, saying so.
// Compiled as plain C++ against detred::cuda's host API.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/properties/sum_properties.hpp"
#include "detred/verify/error_bounds.hpp"
#include "detred/verify/exact_sum.hpp"
#include "tests/properties/cuda_backend.hpp"
#include "tests/properties/exact_method_properties.hpp"

namespace detred::test {

INSTANTIATE_TYPED_TEST_SUITE_P(properties, SumProperties, ::testing::Types<cuda_backend>, backend_name);
INSTANTIATE_TYPED_TEST_SUITE_P(properties, ExactMethodProperties, ::testing::Types<cuda_backend>, backend_name);

// n = 2^31 + 3 bfloat16 values (4 GiB): past every 32-bit index. The reference is the CPU backend's tree sum (same
// bits) and the exact sum (the bound), for tree and tree_neumaier, in float, at an unaligned offset and with the
// default launch configuration.
TEST(CudaLargeInput, BeyondTwoToThe31ElementsSameBitsAsTheCpuAndWithinTheBound) {
  if (!cuda_backend::available()) GTEST_SKIP() << cuda_backend::unavailable_reason();
  const std::uint64_t n = (std::uint64_t{1} << 31) + 3;
  const cuda::device_summary device = cuda::describe_device(0);
  if (device.global_memory_bytes < 3 * n * sizeof(bfloat16))
    GTEST_SKIP() << "the device has " << device.global_memory_bytes << " bytes; this test needs about "
                 << 3 * n * sizeof(bfloat16);
  // Values in [-1, 1) with a positive drift, from a 64-bit LCG: quick to make, nothing special about them.
  std::vector<bfloat16> x(n);
  std::uint64_t state = 2026;
  for (auto& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = bfloat16::from_float(static_cast<float>(static_cast<std::int64_t>(state >> 40) - (std::int64_t{1} << 23) / 2) *
                             0x1p-23f);
  }
  verify::exact_sum s, S;
  for (const bfloat16& v : x) {
    s.add(v);
    S.add(bfloat16::from_bits(std::uint16_t(v.bits & 0x7fffu)));
  }
  std::cout << "n = " << n << ", exact sum " << s.to_decimal(20) << "\n";
  for (sum_method method : {sum_method::tree, sum_method::tree_neumaier}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
      const float gpu = test::sum_host_data<float>(std::span<const bfloat16>(x), {.method = method}, offset);
      const float cpu = detred::sum<float>(x.data(), x.size(), method);
      std::cout << to_string(method) << ", offset " << offset << ": GPU " << std::hexfloat << gpu << ", CPU " << cpu
                << std::defaultfloat << "\n";
      EXPECT_EQ(bits(gpu), bits(cpu)) << to_string(method) << ", offset " << offset;
      EXPECT_TRUE(within_bound(s, gpu, verify::error_bound<float>(method, s, S))) << to_string(method);
    }
  }
}

}  // namespace detred::test
