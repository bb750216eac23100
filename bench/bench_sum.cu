// GPU benchmarks of detred::cuda::sum against its peers in the same binary: cub::DeviceReduce::Sum (two-phase call,
// workspace preallocated) for fp32/fp64, cub::DeviceReduce::TransformReduce (convert to float, then plus) for
// fp16/bf16, and a plain vectorised read of the same bytes (the read ceiling). Timing: CUDA events around one call,
// each repetition one call after two untimed warm-up calls; report the median over repetitions
// (bench/bench_sum_table.sh runs it and prints docs/PERFORMANCE.md's table). Inputs: 1 GiB (20x the H100's 50 MB L2),
// uniform in [-1, 1); latency rows at n = 2^16 and 2^20.
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>

#include "bench/support/bench_support.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"

namespace {
using detred::cuda::check;

constexpr std::size_t kBufferBytes = std::size_t{1} << 30;

// One 1 GiB buffer per element type, filled on the device (uniform in [-1, 1)).
template <class T>
T* device_buffer() {
  static T* buffer = [] {
    T* p = nullptr;
    check(cudaMalloc(&p, kBufferBytes), "cudaMalloc");
    detred::bench::fill_uniform(p, kBufferBytes / sizeof(T));
    return p;
  }();
  return buffer;
}

void* scratch(std::size_t bytes) {
  static void* p = nullptr;
  static std::size_t have = 0;
  if (bytes > have) {
    if (p) cudaFree(p);
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    have = bytes;
  }
  return p;
}

// Times `call` with CUDA events: two warm-up calls, then one timed call per benchmark iteration.
template <class Call>
void time_calls(benchmark::State& state, std::size_t bytes, Call call) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  call();
  call();
  for (auto _ : state) {
    check(cudaEventRecord(start), "cudaEventRecord");
    call();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(ms / 1e3);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(bytes));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

template <class T, class A, detred::sum_method Method>
void detred_sum(benchmark::State& state) {
  const std::size_t n = std::size_t(state.range(0));
  const detred::cuda::sum_options options{.method = Method,
                                          .block_threads = int(state.range(1)),
                                          .grid_blocks = int(state.range(2)),
                                          .tiles_per_chunk = int(state.range(3))};
  const T* x = device_buffer<T>();
  A* out = nullptr;
  std::size_t ws_bytes = 0;
  detred::cuda::sum<A>(nullptr, ws_bytes, x, out, n, nullptr, options);
  auto* ws = static_cast<unsigned char*>(scratch(ws_bytes + 64));
  out = reinterpret_cast<A*>(ws + ws_bytes);
  time_calls(state, n * sizeof(T), [&] { detred::cuda::sum<A>(ws, ws_bytes, x, out, n, nullptr, options); });
}

template <class T>
void cub_sum(benchmark::State& state) {
  const std::size_t n = std::size_t(state.range(0));
  const T* x = device_buffer<T>();
  std::size_t temp_bytes = 0;
  T* out = nullptr;
  check(cub::DeviceReduce::Sum(nullptr, temp_bytes, x, out, n), "cub::DeviceReduce::Sum");
  const std::size_t out_offset = (temp_bytes + 255) / 256 * 256;
  auto* temp = static_cast<unsigned char*>(scratch(out_offset + 64));
  out = reinterpret_cast<T*>(temp + out_offset);
  time_calls(state, n * sizeof(T), [&] { cub::DeviceReduce::Sum(temp, temp_bytes, x, out, n); });
}

struct widen_half {
  __device__ float operator()(detred::half h) const { return __half2float(__ushort_as_half(h.bits)); }
};
struct widen_bfloat16 {
  __device__ float operator()(detred::bfloat16 h) const { return __bfloat162float(__ushort_as_bfloat16(h.bits)); }
};

template <class T, class Widen>
void cub_transform_sum(benchmark::State& state) {
  const std::size_t n = std::size_t(state.range(0));
  const T* x = device_buffer<T>();
  std::size_t temp_bytes = 0;
  float* out = nullptr;
  check(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, x, out, n, cuda::std::plus<float>{}, Widen{}, 0.0f),
        "cub::DeviceReduce::TransformReduce");
  const std::size_t out_offset = (temp_bytes + 255) / 256 * 256;
  auto* temp = static_cast<unsigned char*>(scratch(out_offset + 64));
  out = reinterpret_cast<float*>(temp + out_offset);
  time_calls(state, n * sizeof(T), [&] {
    cub::DeviceReduce::TransformReduce(temp, temp_bytes, x, out, n, cuda::std::plus<float>{}, Widen{}, 0.0f);
  });
}

// The read ceiling: every byte read once with 16-byte loads, grid-stride, nothing else.
__global__ void read_only(const uint4* __restrict__ x, std::size_t n, unsigned* out) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldg(x + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *out = acc;  // keeps the loads alive
}

void read_ceiling(benchmark::State& state) {
  const std::size_t bytes = std::size_t(state.range(0));
  const auto* x = reinterpret_cast<const uint4*>(device_buffer<float>());
  auto* out = static_cast<unsigned*>(scratch(64));
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  time_calls(state, bytes, [&] { read_only<<<sms * 8, 256>>>(x, bytes / 16, out); });
}

constexpr int kRepetitions = 30;

void configure(benchmark::internal::Benchmark* b) {
  b->UseManualTime()
      ->Iterations(1)
      ->Repetitions(kRepetitions)
      ->ReportAggregatesOnly(true)
      ->Unit(benchmark::kMicrosecond);
}

// Sizes: the 1 GiB throughput case and the two latency cases, each with the default launch configuration.
template <class T>
void sizes(benchmark::internal::Benchmark* b) {
  configure(b);
  for (std::int64_t n : {std::int64_t(kBufferBytes / sizeof(T)), std::int64_t{1} << 20, std::int64_t{1} << 16})
    b->Args({n, 0, 0, 0});
}
template <class T>
void peer_sizes(benchmark::internal::Benchmark* b) {
  configure(b);
  for (std::int64_t n : {std::int64_t(kBufferBytes / sizeof(T)), std::int64_t{1} << 20, std::int64_t{1} << 16})
    b->Args({n});
}
// Tuning sweep (filter "sweep/"): block threads x tiles per chunk x grid blocks (0: one chunk a warp) at 1 GiB.
template <class T>
void sweep(benchmark::internal::Benchmark* b) {
  configure(b);
  for (int block : {64, 128, 192, 256})
    for (int tiles : {4, 8, 16})
      for (int grid : {0, 132 * 4, 132 * 8}) b->Args({std::int64_t(kBufferBytes / sizeof(T)), block, grid, tiles});
}

using detred::bfloat16;
using detred::half;
using detred::sum_method;

BENCHMARK(read_ceiling)->Apply(configure)->Arg(std::int64_t(kBufferBytes));
BENCHMARK(cub_sum<float>)->Name("cub/sum/f32")->Apply(peer_sizes<float>);
BENCHMARK(detred_sum<float, float, sum_method::tree>)->Name("detred/tree/f32")->Apply(sizes<float>);
BENCHMARK(detred_sum<float, float, sum_method::tree_neumaier>)->Name("detred/tree_neumaier/f32")->Apply(sizes<float>);
BENCHMARK(cub_sum<double>)->Name("cub/sum/f64")->Apply(peer_sizes<double>);
BENCHMARK(detred_sum<double, double, sum_method::tree>)->Name("detred/tree/f64")->Apply(sizes<double>);
BENCHMARK(detred_sum<double, double, sum_method::tree_neumaier>)
    ->Name("detred/tree_neumaier/f64")
    ->Apply(sizes<double>);
BENCHMARK(cub_transform_sum<half, widen_half>)->Name("cub/sum/f16@f32")->Apply(peer_sizes<half>);
BENCHMARK(detred_sum<half, float, sum_method::tree>)->Name("detred/tree/f16@f32")->Apply(sizes<half>);
BENCHMARK(cub_transform_sum<bfloat16, widen_bfloat16>)->Name("cub/sum/bf16@f32")->Apply(peer_sizes<bfloat16>);
BENCHMARK(detred_sum<bfloat16, float, sum_method::tree>)->Name("detred/tree/bf16@f32")->Apply(sizes<bfloat16>);
BENCHMARK(detred_sum<float, double, sum_method::tree>)->Name("detred/tree/f32@f64")->Apply(sizes<float>);
BENCHMARK(detred_sum<float, float, sum_method::tree>)->Name("sweep/tree/f32")->Apply(sweep<float>);
BENCHMARK(detred_sum<double, double, sum_method::tree>)->Name("sweep/tree/f64")->Apply(sweep<double>);
BENCHMARK(detred_sum<float, float, sum_method::tree_neumaier>)->Name("sweep/tree_neumaier/f32")->Apply(sweep<float>);
BENCHMARK(detred_sum<double, double, sum_method::tree_neumaier>)->Name("sweep/tree_neumaier/f64")->Apply(sweep<double>);

}  // namespace

BENCHMARK_MAIN();
