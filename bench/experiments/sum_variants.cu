// Experiment, not product code: where does detred::cuda::sum's time go at 1 GiB, and which load strategy closes the
// gap to CUB? (Run on the first production kernel; it now times today's finishing kernel. Results and conclusions:
// docs/PERFORMANCE.md, docs/device-runs/2026-11-22-sum-variants.txt.) Times the chunk kernel alone, the finishing
// kernel alone, and load-strategy variants of the chunk kernel (plain __ldg; ld.global.nc with the L2::256B prefetch
// hint; an L2 prefetch of the next tile; a register double buffer of the next tile). Each variant's result is checked
// bit for bit against the library's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/cuda/sum.hpp"
#include "src/cuda/sum/canonical_sum_kernels.cuh"

using namespace detred;
using namespace detred::cuda;
namespace cdetail = detred::cuda::detail;

#define CHECK(x) detred::cuda::check((x), #x)

enum load_kind { plain_ldg = 0, nc_256 = 1, prefetch_next = 2, double_buffer = 3 };

__device__ __forceinline__ uint4 load_nc_256(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

template <class Acc, class T>
__device__ __forceinline__ Acc vec_root(uint4 raw) {
  using A = typename Acc::value_type;
  constexpr int V = tile_shape<T>::vector_elements;
  T e[V];
  std::memcpy(e, &raw, 16);
  Acc node[V];
#pragma unroll
  for (int i = 0; i < V; ++i) node[i] = Acc::from_value(widen<A>(e[i]));
#pragma unroll
  for (int width = V; width > 1; width /= 2)
#pragma unroll
    for (int i = 0; i < width / 2; ++i) node[i] = cdetail::merged(node[2 * i], node[2 * i + 1]);
  return node[0];
}

template <class Acc>
__device__ __forceinline__ Acc rows_root(Acc (&v)[32], int lane) {
  cdetail::transpose_step<0>(v, lane);
  cdetail::transpose_step<1>(v, lane);
  cdetail::transpose_step<2>(v, lane);
  cdetail::transpose_step<3>(v, lane);
  cdetail::transpose_step<4>(v, lane);
  Acc root = v[0];
#pragma unroll
  for (int mask = 16; mask >= 1; mask /= 2) {
    const Acc other = cdetail::shuffle_xor(root, mask);
    root = (lane & mask) ? cdetail::merged(other, root) : cdetail::merged(root, other);
  }
  return root;
}

template <class Acc, class T, int Kind>
__global__ void __launch_bounds__(256)
    variant_kernel(const T* __restrict__ x, std::uint64_t chunks, int tiles, Acc* __restrict__ roots) {
  constexpr std::uint64_t tile = tile_shape<T>::elements;
  const int lane = threadIdx.x & 31;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t c = warp; c < chunks; c += warps) {
    const uint4* base = reinterpret_cast<const uint4*>(x + c * tile * tiles) + lane;
    register_tree32<Acc> joined;
    Acc root{};
    uint4 raw[32];
    if constexpr (Kind == double_buffer) {
#pragma unroll
      for (int r = 0; r < 32; ++r) raw[r] = __ldg(base + r * 32);
    }
#pragma unroll 1
    for (int t = 0; t < tiles; ++t) {
      const uint4* p = base + std::uint64_t(t) * (tile * sizeof(T) / 16);
      Acc v[32];
      if constexpr (Kind == double_buffer) {
#pragma unroll
        for (int r = 0; r < 32; ++r) v[r] = vec_root<Acc, T>(raw[r]);
        if (t + 1 < tiles) {
#pragma unroll
          for (int r = 0; r < 32; ++r) raw[r] = __ldg(p + (tile * sizeof(T) / 16) + r * 32);
        }
      } else {
        if constexpr (Kind == prefetch_next) {
          if (t + 1 < tiles) {
            const char* next = reinterpret_cast<const char*>(p + (tile * sizeof(T) / 16) - lane);
#pragma unroll
            for (int k = 0; k < 4; ++k) asm volatile("prefetch.global.L2 [%0];" ::"l"(next + (k * 32 + lane) * 128));
          }
        }
#pragma unroll
        for (int r = 0; r < 32; ++r)
          v[r] = vec_root<Acc, T>(Kind == nc_256 ? load_nc_256(p + r * 32) : __ldg(p + r * 32));
      }
      root = joined.push(rows_root(v, lane), t);
    }
    if (lane == 0) roots[c] = root;
  }
}

template <class F>
float median_ms(F&& f) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  f();
  f();
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[15];
}

template <class T>
__global__ void fill(T* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    x[i] = T(float(h >> 40) * 0x1p-23f - 1.0f);
  }
}

template <class T, int Kind>
void run_variant(const char* name, const T* x, std::size_t n, plain_accumulator<T>* roots, int tiles, int block,
                 int blocks_per_sm, int sms, T reference) {
  using Acc = plain_accumulator<T>;
  const std::uint64_t chunks = n / (tile_shape<T>::elements * tiles);
  int occ = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, variant_kernel<Acc, T, Kind>, block, 0));
  const int grid = std::min<std::uint64_t>(std::uint64_t(sms) * (blocks_per_sm ? blocks_per_sm : occ),
                                           (chunks * 32 + block - 1) / block);
  const float ms = median_ms([&] { variant_kernel<Acc, T, Kind><<<grid, block>>>(x, chunks, tiles, roots); });
  int chunk_level = 0;
  while ((std::uint64_t{1} << chunk_level) < tile_shape<T>::elements * tiles) ++chunk_level;
  T* out = reinterpret_cast<T*>(roots + chunks + 64);
  const float fin = median_ms([&] {
    cdetail::finish_kernel<Acc, T><<<1, cdetail::finish_threads>>>({roots, chunks, chunk_level, 0, x, 0}, out);
  });
  T result;
  CHECK(cudaMemcpy(&result, out, sizeof(T), cudaMemcpyDeviceToHost));
  std::printf(
      "%-14s %s tiles=%2d block=%3d occ=%d grid=%5d: chunk kernel %.1f us = %.0f GB/s, finish %.1f us, total %.0f "
      "GB/s, bits %s\n",
      name, sizeof(T) == 4 ? "f32" : "f64", tiles, block, occ, grid, ms * 1e3, n * sizeof(T) / ms / 1e6, fin * 1e3,
      n * sizeof(T) / (ms + fin) / 1e6, bits_of(result) == bits_of(reference) ? "equal" : "DIFFER");
}

template <class T>
void run_type() {
  const std::size_t n = (std::size_t{1} << 30) / sizeof(T);
  T* x;
  CHECK(cudaMalloc(&x, n * sizeof(T)));
  fill<<<1024, 256>>>(x, n);
  const std::size_t ws_bytes = sum_workspace_bytes(n) + 1024;
  void* ws;
  CHECK(cudaMalloc(&ws, ws_bytes));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const T reference = sum_to_host<T>(static_cast<const T*>(x), n, ws, ws_bytes);
  T* out = static_cast<T*>(ws);
  const float lib = median_ms([&] { sum<T>(static_cast<const T*>(x), n, out, ws, ws_bytes); });
  std::printf("library default: %.1f us = %.0f GB/s\n", lib * 1e3, n * sizeof(T) / lib / 1e6);
  auto* roots = reinterpret_cast<plain_accumulator<T>*>(static_cast<char*>(ws) + 256);
  for (int tiles : {4, 16}) {
    for (int block : {128, 256}) {
      run_variant<T, plain_ldg>("ldg", x, n, roots, tiles, block, 0, sms, reference);
      run_variant<T, nc_256>("nc.L2::256B", x, n, roots, tiles, block, 0, sms, reference);
      run_variant<T, prefetch_next>("prefetch-next", x, n, roots, tiles, block, 0, sms, reference);
      run_variant<T, double_buffer>("double-buffer", x, n, roots, tiles, block, 0, sms, reference);
    }
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(ws));
}

int main() {
  run_type<float>();
  run_type<double>();
}
