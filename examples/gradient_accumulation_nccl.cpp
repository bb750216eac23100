// gradient_accumulation_nccl: gradients that do not depend on the number of GPUs (docs/DISTRIBUTED.md,
// "all_reduce_micro_batches"). A training step accumulates M = 8 micro-batch gradients in one fixed global order; the
// step is run on 1 GPU (all 8 micro-batches on it), then on every GPU count P that divides 8 and is present (8 / P
// micro-batches a GPU), and the reduced gradient's bits are compared with the one-GPU result, for detred and for the
// usual loop (each GPU adds its micro-batches in a loop, then ncclAllReduce). One process drives the GPUs, a thread
// per GPU, as detred's NCCL tests do. Usage: gradient_accumulation_nccl [elements]
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/nccl.hpp"

namespace {

constexpr int micro_batches = 8;

// Micro-batch g's gradient: values of many magnitudes, so that the order of additions shows in the bits.
float gradient(int g, std::uint64_t e) {
  std::uint64_t s = (std::uint64_t(g) + 1) * 0x9E3779B97F4A7C15ull ^ (e + 1) * 0xD1B54A32D192ED03ull;
  s ^= s >> 31;
  s *= 0xBF58476D1CE4E5B9ull;
  s ^= s >> 29;
  const float unit = float(std::int32_t(s >> 32)) * 0x1p-31f;
  return std::ldexp(unit, int(s % 24) - 12);
}

// One step on `gpus` GPUs; returns rank 0's reduced gradient (every rank holds the same) for detred and the loop.
void step(int gpus, std::uint64_t n, std::vector<float>& detred_sum, std::vector<float>& loop_sum) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(gpus));
  std::vector<int> devices(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) devices[std::size_t(g)] = g;
  detred::nccl::check(ncclCommInitAll(comms.data(), gpus, devices.data()), "ncclCommInitAll");
  const int rows = micro_batches / gpus;
  detred_sum.assign(n, 0.0f);
  loop_sum.assign(n, 0.0f);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < gpus; ++rank)
    threads.emplace_back([&, rank] {
      detred::cuda::check(cudaSetDevice(rank), "cudaSetDevice");
      detred::nccl::context ctx(comms[std::size_t(rank)]);
      // This rank's micro-batches, rank * rows .. rank * rows + rows - 1, one row each.
      std::vector<float> host(std::size_t(rows) * n);
      for (int k = 0; k < rows; ++k)
        for (std::uint64_t e = 0; e < n; ++e) host[std::size_t(k) * n + e] = gradient(rank * rows + k, e);
      float *grads = nullptr, *out = nullptr, *loop = nullptr;
      detred::cuda::check(cudaMalloc(&grads, host.size() * sizeof(float)), "cudaMalloc");
      detred::cuda::check(cudaMalloc(&out, n * sizeof(float)), "cudaMalloc");
      detred::cuda::check(cudaMalloc(&loop, n * sizeof(float)), "cudaMalloc");
      detred::cuda::check(cudaMemcpy(grads, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
                          "cudaMemcpy");
      // detred: the canonical order over all 8 micro-batches, whatever the split.
      detred::nccl::all_reduce_micro_batches(ctx, grads, n, rows, out, n);
      // The usual loop: accumulate locally in order, then ncclAllReduce.
      std::vector<float> acc(host.begin(), host.begin() + std::ptrdiff_t(n));
      for (int k = 1; k < rows; ++k)
        for (std::uint64_t e = 0; e < n; ++e) acc[e] += host[std::size_t(k) * n + e];
      detred::cuda::check(cudaMemcpy(loop, acc.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
      detred::nccl::check(ncclAllReduce(loop, loop, n, ncclFloat32, ncclSum, ctx.comm(), nullptr), "ncclAllReduce");
      if (rank == 0) {
        detred::cuda::check(cudaMemcpy(detred_sum.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost),
                            "cudaMemcpy");
        detred::cuda::check(cudaMemcpy(loop_sum.data(), loop, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
      }
      detred::cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      cudaFree(grads);
      cudaFree(out);
      cudaFree(loop);
    });
  for (std::thread& t : threads) t.join();
  for (ncclComm_t c : comms) ncclCommDestroy(c);
}

std::size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::printf("no GPU: nothing to run\n");
    return 0;
  }
  std::vector<float> one_detred, one_loop;
  step(1, n, one_detred, one_loop);
  std::printf("%d micro-batches of %llu elements; against the step on 1 GPU:\n", micro_batches, (unsigned long long)n);
  int status = 0;
  for (int p = 2; p <= gpus && p <= micro_batches; p *= 2) {
    std::vector<float> d, l;
    step(p, n, d, l);
    const std::size_t dd = differing(d, one_detred), ld = differing(l, one_loop);
    std::printf("  %d GPUs: detred %zu elements differ; local loop + ncclAllReduce %zu elements differ\n", p, dd, ld);
    if (dd != 0) status = 1;
  }
  return status;
}
