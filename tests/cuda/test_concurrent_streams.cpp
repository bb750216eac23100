// Concurrent use of the CUDA backend: several host threads, each with its own stream, workspace and input copy,
// calling detred::cuda::sum at once, all get the CPU's single-threaded bits. Label gpu; skips without a device.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/reduce.hpp"
#include "tests/support/reference.hpp"

namespace {
using namespace detred;
using test::bits;

TEST(CudaConcurrency, HostThreadsWithTheirOwnStreamsGetTheCpuBits) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: detred's GPU tests need one (ctest -L gpu)";
  // DETRED_GPU_TEST_QUICK (under compute-sanitizer): a smaller input and fewer rounds.
  const bool quick = std::getenv("DETRED_GPU_TEST_QUICK") != nullptr;
  const std::size_t n = (std::size_t{1} << (quick ? 18 : 22)) + 12345;
  const int rounds = quick ? 3 : 20;
  const std::vector<float> x = test::random_fixed_range<float>(n, 30, 21, true);
  const float expected_tree = sum(x, sum_method::tree, {.threads = 1});
  const float expected_neumaier = sum(x, sum_method::tree_neumaier, {.threads = 1});

  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&, t] {
      try {
        cudaStream_t stream;
        cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        float* d_in = nullptr;
        float* d_out = nullptr;
        void* workspace = nullptr;
        const sum_method method = t % 2 ? sum_method::tree_neumaier : sum_method::tree;
        const float expected = t % 2 ? expected_neumaier : expected_tree;
        std::size_t workspace_bytes = 0;
        cuda::sum(nullptr, workspace_bytes, static_cast<const float*>(d_in), d_out, n, stream, {.method = method});
        cuda::check(cudaMalloc(&d_in, n * sizeof(float)), "cudaMalloc");
        cuda::check(cudaMalloc(&d_out, sizeof(float)), "cudaMalloc");
        cuda::check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc");
        cuda::check(cudaMemcpyAsync(d_in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream), "copy");
        for (int round = 0; round < rounds; ++round) {
          cuda::sum(workspace, workspace_bytes, static_cast<const float*>(d_in), d_out, n, stream, {.method = method});
          if (bits(cuda::to_host(static_cast<const float*>(d_out), stream)) != bits(expected)) ++mismatches;
        }
        cudaFree(d_in);
        cudaFree(d_out);
        cudaFree(workspace);
        cudaStreamDestroy(stream);
      } catch (const std::exception&) {
        ++failures;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
