// The exact scattered and segmented sums (detred/cuda/scatter.hpp) against their peers in the same program, on the
// shapes of docs/SCATTER.md's bars: medians of CUDA-event timings of single calls (workspace preallocated).
//   scatter_add of 2^26 fp32 values into 2^20 slots (uniform and Zipf(1.1) indices) and into 256 slots, against a
//     plain float atomicAdd scatter kernel (not deterministic);
//   index_add of bf16 rows [2^20 x 128] into fp32 [2^16 x 128] with Zipf indices, against a float atomicAdd kernel;
//   segment_sum (canonical and exact) with random segment lengths of mean 16, 256 and 4096 over 2^26 fp32 values,
//     against cub::DeviceSegmentedReduce::Sum on the same offsets.
// Output: one line a case, "ratio" = peer time / detred time (>= 1: detred faster). Usage: bench_scatter [reps] [tune]
// [only] (tune: also the launch shapes and kernel variants of each case; only: run just the cases whose name holds
// this text, e.g. "index_add" or "mean 4096", so that a profiler sees only their kernels).
#include <cub/device/device_segmented_reduce.cuh>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/support/bench_support.hpp"
#include "bench/support/segment_offsets.hpp"
#include "detred/cuda/scatter.hpp"

namespace {

using namespace detred::bench;

// Indices: kind 0 uniform over [0, m), kind 1 Zipf(1.1) over [0, m) by the continuous inverse CDF
// (x = ((m^(1-s) - 1) u + 1)^(1/(1-s)), slot floor(x) - 1): slot 0 gets about 10% of the terms.
__global__ void fill_index(int* index, std::uint64_t n, std::uint64_t m, int kind, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = index_hash(i, seed);
    if (kind == 0) {
      index[i] = int(h % m);
    } else {
      const double u = double(h >> 11) * 0x1p-53, e = 1.0 - 1.1;
      const double x = pow((pow(double(m), e) - 1.0) * u + 1.0, 1.0 / e);
      index[i] = int(min(double(m - 1), floor(x) - 1.0));
    }
  }
}

// The peer: out[index[i]] += widen(values[i]) by float atomicAdd, one term a thread, grid-stride.
template <class T>
__global__ void atomic_scatter(const T* values, const int* index, float* out, std::uint64_t n, std::uint64_t d) {
  for (std::uint64_t t = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; t < n * d;
       t += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t i = t / d, c = t - i * d;
    atomicAdd(out + std::uint64_t(index[i]) * d + c, detred::widen<float>(values[t]));
  }
}

void row(const std::string& name, double detred_s, double peer_s, const char* peer) {
  std::printf("%-44s %10.3f %10.3f  %-18s %6.2f\n", name.c_str(), detred_s * 1e3, peer_s * 1e3, peer,
              peer_s / detred_s);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const bool tune = argc > 2 && std::string(argv[2]) == "tune";
  const std::string only = argc > 3 ? argv[3] : "";
  const auto wanted = [&](const std::string& name) { return name.find(only) != std::string::npos; };
  const std::uint64_t n = std::uint64_t{1} << 26;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("bench_scatter on %s, medians of %d single calls (ms)\n", prop.name, reps);
  std::printf("%-44s %10s %10s  %-18s %6s\n", "case", "detred", "peer", "peer", "ratio");

  device_buffer<float> values(n);
  fill_uniform(values.get(), n, 1);
  device_buffer<int> index(n);

  // scatter_add.
  struct scatter_case {
    const char* name;
    std::uint64_t m;
    int kind;
  };
  for (const scatter_case c : {scatter_case{"scatter_add 2^26 -> 2^20 uniform", 1u << 20, 0},
                               scatter_case{"scatter_add 2^26 -> 2^20 Zipf(1.1)", 1u << 20, 1},
                               scatter_case{"scatter_add 2^26 -> 256 uniform", 256, 0}}) {
    if (!wanted(c.name)) continue;
    fill_index<<<1024, 256>>>(index.get(), n, c.m, c.kind, 7);
    device_buffer<float> out(c.m);
    check(cudaMemset(out.get(), 0, c.m * sizeof(float)), "cudaMemset");
    std::size_t bytes = 0;
    detred::cuda::scatter_add(nullptr, bytes, values.get(), index.get(), out.get(), n, c.m);
    device_buffer<unsigned char> ws(bytes);
    const double t_detred = single_call_seconds(
        [&] { detred::cuda::scatter_add(ws.get(), bytes, values.get(), index.get(), out.get(), n, c.m); }, reps);
    const double t_peer = single_call_seconds(
        [&] {
          atomic_scatter<float><<<prop.multiProcessorCount * 8, 256>>>(values.get(), index.get(), out.get(), n, 1);
        },
        reps);
    row(c.name, t_detred, t_peer, "float atomicAdd");
    if (tune)
      for (int threads : {256, 512, 1024}) {
        detred::cuda::scatter_options o;
        o.block_threads = threads;
        const double t = single_call_seconds(
            [&] {
              detred::cuda::scatter_add(ws.get(), bytes, values.get(), index.get(), out.get(), n, c.m, nullptr, o);
            },
            reps);
        row("  threads " + std::to_string(threads), t, t_peer, "float atomicAdd");
      }
  }

  // index_add: bf16 [2^20 x 128] into fp32 [2^16 x 128], Zipf indices.
  if (wanted("index_add")) {
    const std::uint64_t rows = std::uint64_t{1} << 20, d = 128, m = std::uint64_t{1} << 16;
    device_buffer<detred::bfloat16> source(rows * d);
    fill_uniform(source.get(), rows * d, 3);
    fill_index<<<1024, 256>>>(index.get(), rows, m, 1, 9);
    device_buffer<float> out(m * d);
    check(cudaMemset(out.get(), 0, m * d * sizeof(float)), "cudaMemset");
    std::size_t bytes = 0;
    detred::cuda::index_add(nullptr, bytes, source.get(), index.get(), out.get(), rows, m, d);
    device_buffer<unsigned char> ws(bytes);
    const double t_detred = single_call_seconds(
        [&] { detred::cuda::index_add(ws.get(), bytes, source.get(), index.get(), out.get(), rows, m, d); }, reps);
    const double t_peer = single_call_seconds(
        [&] {
          atomic_scatter<detred::bfloat16>
              <<<prop.multiProcessorCount * 8, 256>>>(source.get(), index.get(), out.get(), rows, d);
        },
        reps);
    row("index_add bf16 [2^20x128] -> [2^16x128] Zipf", t_detred, t_peer, "float atomicAdd");
    if (tune)
      for (int threads : {256, 512, 1024})
        for (int grid : {0, 132 * 4, 132 * 32}) {
          detred::cuda::scatter_options o;
          o.block_threads = threads;
          o.grid_blocks = grid;
          const double t = single_call_seconds(
              [&] {
                detred::cuda::index_add(ws.get(), bytes, source.get(), index.get(), out.get(), rows, m, d, nullptr, o);
              },
              reps);
          row("  threads " + std::to_string(threads) + " grid " + std::to_string(grid), t, t_peer, "float atomicAdd");
        }
  }

  // segment_sum against CUB's segmented reduce.
  for (std::uint64_t mean : {16u, 256u, 4096u}) {
    if (!wanted("segment_sum mean " + std::to_string(mean))) continue;
    const std::vector<int> offsets = make_segment_offsets(n, mean);
    const std::uint64_t segments = offsets.size() - 1;
    device_buffer<int> d_offsets(offsets.size());
    check(cudaMemcpy(d_offsets.get(), offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
          "cudaMemcpy");
    device_buffer<float> out(segments);
    std::size_t cub_bytes = 0;
    check(cub::DeviceSegmentedReduce::Sum(nullptr, cub_bytes, values.get(), out.get(), int(segments), d_offsets.get(),
                                          d_offsets.get() + 1),
          "cub::DeviceSegmentedReduce::Sum");
    device_buffer<unsigned char> cub_ws(cub_bytes);
    const double t_cub = single_call_seconds(
        [&] {
          cub::DeviceSegmentedReduce::Sum(cub_ws.get(), cub_bytes, values.get(), out.get(), int(segments),
                                          d_offsets.get(), d_offsets.get() + 1);
        },
        reps);
    std::size_t bytes = 0;
    for (auto method : {detred::sum_method::tree, detred::sum_method::exact}) {
      const double t = single_call_seconds(
          [&] {
            detred::cuda::segment_sum(out.get(), bytes, values.get(), d_offsets.get(), out.get(), segments, nullptr,
                                      {method, 0, n});
          },
          reps);
      row("segment_sum " + std::string(method == detred::sum_method::tree ? "canonical" : "exact") + " mean " +
              std::to_string(mean),
          t, t_cub, "cub SegmentedReduce");
    }
    if (tune && mean == 4096) {
      // The same lengths from 16-byte aligned starts (offsets rounded down to multiples of 4): the reads' alignment
      // alone.
      std::vector<int> aligned = offsets;
      for (std::size_t i = 0; i + 1 < aligned.size(); ++i) aligned[i] &= ~3;
      check(cudaMemcpy(d_offsets.get(), aligned.data(), aligned.size() * sizeof(int), cudaMemcpyHostToDevice),
            "cudaMemcpy");
      const double t_cub_aligned = single_call_seconds(
          [&] {
            cub::DeviceSegmentedReduce::Sum(cub_ws.get(), cub_bytes, values.get(), out.get(), int(segments),
                                            d_offsets.get(), d_offsets.get() + 1);
          },
          reps);
      const double t = single_call_seconds(
          [&] {
            detred::cuda::segment_sum(out.get(), bytes, values.get(), d_offsets.get(), out.get(), segments, nullptr,
                                      {detred::sum_method::tree, 0, n});
          },
          reps);
      row("  canonical, aligned starts", t, t_cub_aligned, "cub SegmentedReduce");
      check(cudaMemcpy(d_offsets.get(), offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    }
  }
  return 0;
}
