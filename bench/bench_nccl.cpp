// detred::nccl on the GPU machine (docs/PERFORMANCE.md, "Distributed"): one process, a thread per GPU
// (tests/nccl/gpu_ranks.hpp). Peers in the same program:
//   A. element-wise all-reduce of 256 MiB per GPU on 2 GPUs: ncclAllReduce (sum) against detred::nccl::all_reduce
//      (sum_method::tree at several chunk sizes, with and without the argument check; sum_method::exact), and an
//      ncclAllGather of the whole buffers (the transport alone of the naive approach, which gathers every rank's
//      buffer and then combines); fp32 and bf16. Each iteration: both threads meet at a barrier, then time their call
//      with CUDA events; an iteration's time is the slower rank's; figures are medians.
//   B. scalar sums of 1 GiB of fp32 per GPU: detred::cuda::sum and cuda::to_host on one GPU against
//      detred::nccl::sum on 1 and 2 GPUs (tree and exact), host wall-clock per call (each call returns its value to
//      the host), medians; and the bits of all of them against the CPU.
// Usage: bench_nccl [iterations]
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/support/bench_support.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/nccl.hpp"
#include "detred/reduce.hpp"
#include "tests/nccl/gpu_ranks.hpp"

namespace {
using namespace detred;

int iterations = 30;

using bench::median;

template <class T>
std::vector<T> host_values(std::size_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const float f = float(std::int32_t(s >> 32)) * 0x1p-31f;  // (-1, 1)
    if constexpr (std::is_same_v<T, float>)
      v[i] = f;
    else
      v[i] = T::from_float(f);
  }
  return v;
}

// Times op on every rank (events on `stream`), an iteration's time being the slower rank's.
struct timer {
  int ranks;
  std::barrier<> meet;
  std::vector<std::vector<double>> ms;
  explicit timer(int r) : ranks(r), meet(r), ms(std::size_t(r)) {}
  double run(int rank, cudaStream_t stream, const std::function<void()>& op) {
    bench::event_pair events;
    ms[std::size_t(rank)].clear();
    for (int i = 0; i < 3 + iterations; ++i) {
      meet.arrive_and_wait();
      const double t = events.seconds_per_call(op, 1, stream) * 1e3;
      if (i >= 3) ms[std::size_t(rank)].push_back(t);
    }
    meet.arrive_and_wait();
    std::vector<double> slower(ms[0].size());
    for (std::size_t i = 0; i < slower.size(); ++i)
      for (int r = 0; r < ranks; ++r) slower[i] = std::max(slower[i], ms[std::size_t(r)][i]);
    meet.arrive_and_wait();  // everyone has read ms before the next run clears it
    return median(slower);
  }
};

template <class T>
void all_reduce_table(int gpus, std::size_t bytes) {
  const std::size_t n = bytes / sizeof(T);
  const char* type = std::is_same_v<T, float> ? "fp32" : "bf16";
  const ncclDataType_t nccl_type = std::is_same_v<T, float> ? ncclFloat32 : ncclBfloat16;
  timer clock(gpus);
  test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
    const std::vector<T> h = host_values<T>(n, std::uint64_t(rank + 1));
    T *in = nullptr, *out = nullptr;
    cuda::check(cudaMalloc(&in, bytes), "cudaMalloc");
    cuda::check(cudaMalloc(&out, bytes), "cudaMalloc");
    cuda::check(cudaMemcpy(in, h.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    cudaStream_t s;
    cuda::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    const double base = clock.run(
        rank, s, [&] { nccl::check(ncclAllReduce(in, out, n, nccl_type, ncclSum, ctx.comm(), s), "ncclAllReduce"); });
    auto report = [&](const std::string& name, double t) {
      if (rank == 0)
        std::printf("all_reduce %s %d GPUs %zu MiB/GPU  %-58s %8.3f ms  %7.1f GB/s  %.3fx ncclAllReduce\n", type, gpus,
                    bytes >> 20, name.c_str(), t, double(bytes) / t / 1e6, base / t);
    };
    report("ncclAllReduce (sum, NCCL's choice of algorithm)", base);
    auto detred_variant = [&](const std::string& name, const nccl::all_reduce_options& o) {
      report(name, clock.run(rank, s, [&] { nccl::all_reduce(ctx, in, out, n, s, o); }));
    };
    for (std::size_t chunk_mib : {8, 16, 32, 64, 128, 256}) {
      const std::string chunk = "chunk " + std::to_string(chunk_mib) + " MiB";
      detred_variant("detred tree, " + chunk, {.chunk_bytes = chunk_mib << 20});
      detred_variant("detred tree, " + chunk + ", no arg check",
                     {.chunk_bytes = chunk_mib << 20, .check_arguments = false});
    }
    detred_variant("detred exact (default options)", {.method = sum_method::exact});
    T* gathered = nullptr;
    cuda::check(cudaMalloc(&gathered, bytes * std::size_t(gpus)), "cudaMalloc");
    report("ncclAllGather of whole buffers (naive approach, no combine)", clock.run(rank, s, [&] {
      nccl::check(ncclAllGather(in, gathered, n, nccl_type, ctx.comm(), s), "ncclAllGather");
    }));
    cudaFree(gathered);
    cudaFree(in);
    cudaFree(out);
    cudaStreamDestroy(s);
  });
}

double host_median_ms(const std::function<void()>& op) {
  std::vector<double> t;
  for (int i = 0; i < 3 + iterations; ++i) {
    const auto a = std::chrono::steady_clock::now();
    op();
    const auto b = std::chrono::steady_clock::now();
    if (i >= 3) t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  return median(t);
}

void scalar_sums(int max_gpus) {
  const std::size_t n = std::size_t{1} << 28;  // 1 GiB of fp32 per GPU
  std::vector<float> all = host_values<float>(n * std::size_t(max_gpus), 42);
  for (sum_method method : {sum_method::tree, sum_method::exact}) {
    const char* m = method == sum_method::tree ? "tree " : "exact";
    double single_ms = 0;
    {
      cuda::check(cudaSetDevice(0), "cudaSetDevice");
      float* d = nullptr;
      cuda::check(cudaMalloc(&d, n * sizeof(float)), "cudaMalloc");
      cuda::check(cudaMemcpy(d, all.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
      float* d_out = nullptr;
      cuda::check(cudaMalloc(&d_out, sizeof(float)), "cudaMalloc");
      const cuda::sum_options options{.method = method};
      std::size_t wb = 0;
      cuda::sum(nullptr, wb, d, d_out, n, nullptr, options);
      void* w = nullptr;
      cuda::check(cudaMalloc(&w, wb), "cudaMalloc");
      float r = 0;
      single_ms = host_median_ms([&] {
        cuda::sum(w, wb, d, d_out, n, nullptr, options);
        r = cuda::to_host(d_out);
      });
      std::printf(
          "sum %s 1 GiB fp32, 1 GPU, cuda::sum + to_host         %8.3f ms  %7.1f GB/s  bits 0x%08x (CPU 0x%08x)\n", m,
          single_ms, double(n * 4) / single_ms / 1e6, unsigned(bits_of(r)),
          unsigned(bits_of(sum(all.data(), n, method))));
      cudaFree(d_out);
      cudaFree(d);
      cudaFree(w);
    }
    for (int gpus = 1; gpus <= max_gpus; ++gpus) {
      const float cpu = sum(all.data(), n * std::size_t(gpus), method);
      std::vector<double> ms(static_cast<std::size_t>(gpus));
      std::vector<float> got(static_cast<std::size_t>(gpus));
      std::barrier meet(gpus);
      test::run_on_gpus(gpus, [&](nccl::context& ctx, int rank) {
        float* d = nullptr;
        cuda::check(cudaMalloc(&d, n * sizeof(float)), "cudaMalloc");
        cuda::check(cudaMemcpy(d, all.data() + std::size_t(rank) * n, n * sizeof(float), cudaMemcpyHostToDevice),
                    "cudaMemcpy");
        float r = 0;
        ms[std::size_t(rank)] = host_median_ms([&] {
          meet.arrive_and_wait();
          r = nccl::sum(ctx, d, n, nullptr, {.method = method});
        });
        got[std::size_t(rank)] = r;
        cudaFree(d);
      });
      const double t = *std::max_element(ms.begin(), ms.end());
      std::printf(
          "sum %s %d GiB fp32, %d GPU(s), nccl::sum (1 GiB/GPU)    %8.3f ms  %7.1f GB/s  %.2fx single-GPU "
          "throughput  bits 0x%08x 0x%08x (CPU 0x%08x)\n",
          m, gpus, gpus, t, double(n * 4 * std::size_t(gpus)) / t / 1e6, (double(gpus) / t) / (1.0 / single_ms),
          unsigned(bits_of(got[0])), unsigned(bits_of(got[std::size_t(gpus - 1)])), unsigned(bits_of(cpu)));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) iterations = std::atoi(argv[1]);
  const int gpus = test::gpu_count();
  if (gpus < 1) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
  int version = 0;
  ncclGetVersion(&version);
  std::printf("NCCL %d, %d GPU(s), NCCL_NVLS_ENABLE=%s, %d iterations\n", version, gpus,
              std::getenv("NCCL_NVLS_ENABLE") ? std::getenv("NCCL_NVLS_ENABLE") : "(unset: set to 0)", iterations);
  if (gpus >= 2) {
    all_reduce_table<float>(2, std::size_t{256} << 20);
    all_reduce_table<bfloat16>(2, std::size_t{256} << 20);
  }
  scalar_sums(std::min(gpus, 2));
  return 0;
}
