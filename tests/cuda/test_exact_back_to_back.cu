// Sums enqueued back to back on one stream and one workspace, with no synchronisation between them: every result is
// checked only after the last call. The exact sum's kernels are launched with programmatic dependent launch
// (docs/EXACT.md "Small sums"): each may be scheduled while the kernel before it on the stream still runs, and
// promises to touch no global memory (its input, the workspace's block states, the arrival word, the result) before
// cudaGridDependencySynchronize has seen that kernel complete. Here the kernel before a sum is, in turn, the last
// sum's finishing kernel (which reads the workspace the next kernel 1 overwrites) and a user kernel that writes the
// next sum's input after letting dependent grids start (cudaTriggerProgrammaticLaunchCompletion at its start, on
// few blocks, so the sum's blocks have free SMs to run early on). Sizes change from call to call (the single pass,
// the small sums' two kernels, the streamed large form), and canonical tree sums on the same workspace sit between
// them. Label `gpu`: skips, saying why, where no CUDA device is present.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/reduce.hpp"
#include "tests/support/device_sum.hpp"
#include "tests/support/exact_inputs.hpp"

namespace {
using namespace detred;
using namespace detred::test;

// Copies `vectors` 16-byte vectors from src to dst on few blocks, after letting any grid launched dependent on this
// one start: a kernel that reads dst before its cudaGridDependencySynchronize reads stale or half-written data.
__global__ void copy_after_early_trigger(const uint4* src, uint4* dst, std::uint64_t vectors) {
  cudaTriggerProgrammaticLaunchCompletion();
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < vectors;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

template <class T>
std::uint64_t raw(T x) {
  std::uint64_t r = 0;
  std::memcpy(&r, &x, sizeof(T));
  return r;
}

// One call of the sequence: which source, how many terms, which method, and whether the user kernel first writes the
// source into the shared staging buffer (the sum then reads the staging buffer).
struct call_plan {
  int source;
  std::uint64_t n;
  sum_method method;
  bool staged;
};

template <class T>
void expect_back_to_back_sums_each_exact() {
  using A = accumulation_for<default_accumulation, T>;
  // Sizes: the binary32 family's single pass, the small sums' two kernels at a few and at hundreds of blocks, and the
  // streamed large form just past the small-sum bound (16 MiB).
  const std::uint64_t large = (std::uint64_t{1} << 24) / sizeof(T) + 5;
  const std::vector<std::uint64_t> sizes = {1000, (std::uint64_t{1} << 16) + 1, (std::uint64_t{1} << 20) + 3, large};
  constexpr int sources = 8;
  // Every source holds `large` terms of its own data set and seed; a call sums a prefix of it.
  std::vector<std::vector<T>> host(sources);
  const std::uint64_t vectors = (large * sizeof(T) + 15) / 16;
  device_bytes source_bytes(sources * vectors * 16), staging(vectors * 16);
  for (int s = 0; s < sources; ++s) {
    host[s] = exact_data<T>(all_exact_datasets[s % 4], large, 1000 + s);
    cuda::check(
        cudaMemcpy(source_bytes.get() + s * vectors * 16, host[s].data(), large * sizeof(T), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  }
  std::vector<call_plan> plan;
  for (int round = 0; round < 6; ++round)
    for (std::size_t z = 0; z < sizes.size(); ++z) {
      const int source = int((round * 3 + z) % sources);
      plan.push_back({source, sizes[z], sum_method::exact, (round + z) % 2 == 0});
      if (z % 2 == 1) plan.push_back({(source + 1) % sources, sizes[z], sum_method::tree, false});
      plan.push_back({(source + 2) % sources, sizes[(z + 1) % sizes.size()], sum_method::exact, true});
    }
  const std::size_t ws_bytes = device_sum_input<T>::bytes_for(large);
  device_bytes workspace(ws_bytes), out(plan.size() * sizeof(A));
  cuda::check(cudaMemset(out.get(), 0xff, plan.size() * sizeof(A)), "cudaMemset");
  cudaStream_t stream = nullptr;
  cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (std::size_t c = 0; c < plan.size(); ++c) {
    const call_plan& p = plan[c];
    const unsigned char* src = source_bytes.get() + p.source * vectors * 16;
    if (p.staged) {
      copy_after_early_trigger<<<4, 256, 0, stream>>>(reinterpret_cast<const uint4*>(src),
                                                      reinterpret_cast<uint4*>(staging.get()), vectors);
      cuda::check(cudaGetLastError(), "copy kernel launch");
      src = staging.get();
    }
    std::size_t bytes = ws_bytes;
    cuda::sum(workspace.get(), bytes, reinterpret_cast<const T*>(src), reinterpret_cast<A*>(out.get()) + c, p.n, stream,
              cuda::sum_options{.method = p.method});
  }
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<A> got(plan.size());
  cuda::check(cudaMemcpy(got.data(), out.get(), plan.size() * sizeof(A), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cuda::check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  for (std::size_t c = 0; c < plan.size(); ++c) {
    const call_plan& p = plan[c];
    const A want = sum<A>(host[p.source].data(), p.n, p.method);
    EXPECT_EQ(raw(got[c]), raw(want)) << float_traits<T>::name << " call " << c << " of " << plan.size()
                                      << ": n=" << p.n << " source " << p.source
                                      << (p.method == sum_method::exact ? " exact" : " tree")
                                      << (p.staged ? ", input written by the kernel before it" : "");
  }
}

TEST(CudaExactSumBackToBack, EveryResultOfAnUnsynchronisedSequenceIsItsOwnSum) {
  if (cuda::device_count() == 0)
    GTEST_SKIP() << "no CUDA device: detred's GPU tests need one (ctest -L gpu on the GPU machine)";
  expect_back_to_back_sums_each_exact<float>();
  expect_back_to_back_sums_each_exact<double>();
  expect_back_to_back_sums_each_exact<bfloat16>();
}

}  // namespace
