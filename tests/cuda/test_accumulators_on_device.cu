// The accumulators and the canonical order are written once for host and device (DETRED_HD). This test runs them
// inside a CUDA kernel and requires the device's bits to equal the host's: plain, Kahan and Neumaier sequential sums,
// the pairwise accumulator (the canonical order) with plain and Neumaier nodes, and the binary16/bfloat16
// conversions. Label `gpu`: skipped, with the reason, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <vector>

#include "detred/accumulators/accumulator.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/reduce.hpp"
#include "tests/support/device_array.hpp"

namespace {
using namespace detred;

constexpr int kResults = 5;

template <class A>
__global__ void accumulate_on_device(const A* x, std::size_t n, A* out) {
  plain_accumulator<A> plain;
  kahan_accumulator<A> kahan;
  neumaier_accumulator<A> neumaier;
  pairwise_accumulator<plain_accumulator<A>> tree;
  pairwise_accumulator<neumaier_accumulator<A>> tree_neumaier;
  for (std::size_t i = 0; i < n; ++i) {
    plain.add(x[i]);
    kahan.add(x[i]);
    neumaier.add(x[i]);
    tree.add(x[i]);
    tree_neumaier.add(x[i]);
  }
  out[0] = plain.result();
  out[1] = kahan.result();
  out[2] = neumaier.result();
  out[3] = tree.result();
  out[4] = tree_neumaier.result();
}

__global__ void convert_on_device(std::uint32_t count, std::uint32_t* half_to_float, std::uint16_t* float_to_half,
                                  std::uint16_t* float_to_bf16, const float* probes) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  if (i < 65536) half_to_float[i] = detred::bit_cast<std::uint32_t>(half::from_bits(std::uint16_t(i)).to_float());
  float_to_half[i] = half::from_float(probes[i]).bits;
  float_to_bf16[i] = bfloat16::from_float(probes[i]).bits;
}

using test::device_array;
using test::have_gpu;

template <class A>
void expect_device_matches_host(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(-30, 30);
  std::vector<A> x(n);
  for (A& v : x) v = A(std::ldexp(1.0 + double(rng() % 1000000) / 1e6, int(mag(rng)))) * ((rng() & 1) ? A(1) : A(-1));
  device_array<A> dx(n), dout(kResults);
  cuda::check(cudaMemcpy(dx.ptr, x.data(), n * sizeof(A), cudaMemcpyHostToDevice), "copy in");
  accumulate_on_device<A><<<1, 1>>>(dx.ptr, n, dout.ptr);
  cuda::check(cudaGetLastError(), "launch");
  A device[kResults];
  cuda::check(cudaMemcpy(device, dout.ptr, sizeof(device), cudaMemcpyDeviceToHost), "copy out");
  const A host[kResults] = {sum(x, sum_method::sequential), sum(x, sum_method::kahan), sum(x, sum_method::neumaier),
                            sum(x, sum_method::tree), sum(x, sum_method::tree_neumaier)};
  for (int k = 0; k < kResults; ++k) {
    EXPECT_EQ(bits_of(device[k]), bits_of(host[k])) << "result " << k << " n=" << n;
  }
}

TEST(DeviceAccumulators, SameBitsAsTheHost) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  for (std::size_t n : {1u, 2u, 3u, 100u, 1000u, 4097u}) {
    expect_device_matches_host<float>(n, n);
    expect_device_matches_host<double>(n, n + 1);
  }
}

TEST(DeviceConversions, Binary16AndBfloat16SameBitsAsTheHost) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  const std::uint32_t count = 1u << 20;
  std::vector<float> probes(count);
  std::mt19937 rng(3);
  for (float& p : probes) p = detred::bit_cast<float>(static_cast<std::uint32_t>(rng()));
  device_array<std::uint32_t> h2f(65536);
  device_array<std::uint16_t> f2h(count), f2b(count);
  device_array<float> dprobes(count);
  cuda::check(cudaMemcpy(dprobes.ptr, probes.data(), count * sizeof(float), cudaMemcpyHostToDevice), "copy in");
  convert_on_device<<<count / 256, 256>>>(count, h2f.ptr, f2h.ptr, f2b.ptr, dprobes.ptr);
  cuda::check(cudaGetLastError(), "launch");
  std::vector<std::uint32_t> widened(65536);
  std::vector<std::uint16_t> narrowed(count), narrowed_bf(count);
  cuda::check(cudaMemcpy(widened.data(), h2f.ptr, 65536 * 4, cudaMemcpyDeviceToHost), "copy out");
  cuda::check(cudaMemcpy(narrowed.data(), f2h.ptr, count * 2, cudaMemcpyDeviceToHost), "copy out");
  cuda::check(cudaMemcpy(narrowed_bf.data(), f2b.ptr, count * 2, cudaMemcpyDeviceToHost), "copy out");
  for (std::uint32_t i = 0; i < 65536; ++i)
    ASSERT_EQ(widened[i], detred::bit_cast<std::uint32_t>(half::from_bits(std::uint16_t(i)).to_float())) << i;
  for (std::uint32_t i = 0; i < count; ++i) {
    ASSERT_EQ(narrowed[i], half::from_float(probes[i]).bits) << i;
    ASSERT_EQ(narrowed_bf[i], bfloat16::from_float(probes[i]).bits) << i;
  }
}

TEST(DeviceRuntime, ReportsTheDevice) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  const cuda::device_summary d = cuda::describe_device(0);
  std::printf("device 0: %s, sm_%d%d, %d SMs, %zu MiB L2\n", d.name.c_str(), d.compute_capability_major,
              d.compute_capability_minor, d.multiprocessors, d.l2_cache_bytes >> 20);
  EXPECT_GT(d.multiprocessors, 0);
  EXPECT_THROW(cuda::check(cudaErrorInvalidValue, "planted"), cuda::cuda_error);
}

}  // namespace
