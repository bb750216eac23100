// RMSNorm's backward (include/detred/cuda/norms.hpp). Rows that fit the registers take one pass over dy and x: the
// register-resident dx rows (norms.cuh) that also reduce dweight's
// leaves (dy x) rstd over aligned chunks of 32 rows, so that the column reduction reads chunk roots (a sixteenth of
// dy and x's bytes for bfloat16, an eighth for float) instead of dy and x again.
//
// A block of 8 warps takes chunk q, rows [32 q, 32 q + 32), as 4 groups of 8 rows, one row a warp. Each warp writes
// its row's leaves into shared memory; then thread i reduces columns 4 i .. 4 i + 3 (and every 1024th after) over the
// group's 8 rows by the complete tree of 8 and joins the group roots as (g0 + g1) + (g2 + g3): T(32 q, 32) of
// docs/ORDER.md for each column, the node column_chunk_root computes. The chunk roots then go through
// column_chunks_kernel (a second level of aligned chunks) and column_finish_kernel, which adds the rows of the last
// partial chunk from dy and x: the same tree, so the same bits, as rmsnorm_backward's two-pass form and the CPU.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "src/cuda/rows/columns.cuh"
#include "src/cuda/rows/norms.cuh"

namespace detred::cuda::detail {

// The fused kernel's geometry: 8 warps a block, one row a warp, chunks of 2^5 rows.
inline constexpr int dweight_group_rows = 8;
inline constexpr int dweight_chunk_level = 5;
inline constexpr int dweight_fused_threads = 32 * dweight_group_rows;

// Shared memory of the fused kernel for rows of c elements: the 8 rows' leaves and two pending group roots a column.
inline std::size_t dweight_fused_shared_bytes(std::uint64_t c) {
  return std::size_t(dweight_group_rows + 2) * std::size_t(c) * sizeof(float);
}

// A warp's row of leaves in shared memory.
struct shared_row_leaves {
  float* row;
  template <int V, class T>
  __device__ __forceinline__ void vector(std::uint64_t i, const T (&dy)[V], const T (&x)[V], float rstd) const {
    static_assert(V % 4 == 0, "whole float4 stores");
    float leaf[V];
#pragma unroll
    for (int e = 0; e < V; ++e) leaf[e] = (widen<float>(dy[e]) * widen<float>(x[e])) * rstd;
#pragma unroll
    for (int e = 0; e < V; e += 4)
      *reinterpret_cast<float4*>(row + i + e) = make_float4(leaf[e], leaf[e + 1], leaf[e + 2], leaf[e + 3]);
  }
  template <class T>
  __device__ __forceinline__ void scalar(std::uint64_t i, T dy, T x, float rstd) const {
    row[i] = (widen<float>(dy) * widen<float>(x)) * rstd;
  }
};

__device__ __forceinline__ float4 added(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// Group g (0..3) of a chunk: the complete tree of 8 over the group's rows (leaves[r * c + j], r = 0..7) for columns
// [j, j + 4), joined with the pending roots of the earlier groups (pending[j], pending[c + j]); the chunk root
// (chunk_root[j]) after group 3.
__device__ __forceinline__ void join_group(const float* leaves, float* pending, std::uint64_t c, std::uint64_t j, int g,
                                           float* chunk_root) {
  float4 v[dweight_group_rows];
#pragma unroll
  for (int r = 0; r < dweight_group_rows; ++r) v[r] = *reinterpret_cast<const float4*>(leaves + r * c + j);
  const float4 root = added(added(added(v[0], v[1]), added(v[2], v[3])), added(added(v[4], v[5]), added(v[6], v[7])));
  float4* first = reinterpret_cast<float4*>(pending + j);      // g0, then g0 + g1
  float4* third = reinterpret_cast<float4*>(pending + c + j);  // g2
  if (g == 0)
    *first = root;
  else if (g == 1)
    *first = added(*first, root);
  else if (g == 2)
    *third = root;
  else
    *reinterpret_cast<float4*>(chunk_root + j) = added(*first, added(*third, root));
}

// dx of every row, and the dweight root of every full chunk of 32 rows into chunk_roots[q * c + j] (grid-stride over
// the chunks). c: at most Segs full segments plus a tail, a multiple of 4, every array 16-byte aligned. The block's
// steps (chunk, group) run in order; each warp issues its next row's loads before the block joins the current group's
// leaves, so that the loads are in flight across the barriers.
template <class T, int Segs>
__global__ void __launch_bounds__(dweight_fused_threads, 1)
    rmsnorm_dx_dweight_kernel(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w,
                              const float* __restrict__ rstd, std::uint64_t rows, std::uint64_t c, T* __restrict__ dx,
                              float* __restrict__ chunk_roots) {
  extern __shared__ float4 dweight_shared[];
  float* leaves = reinterpret_cast<float*>(dweight_shared);
  float* pending = leaves + dweight_group_rows * c;
  const int warp = int(threadIdx.x >> 5);
  constexpr std::uint64_t chunk = std::uint64_t{1} << dweight_chunk_level;
  constexpr int groups = int(chunk) / dweight_group_rows;
  const std::uint64_t chunks = (rows + chunk - 1) / chunk;
  // Step s of this block: chunk blockIdx.x + (s / groups) gridDim.x, group s % groups; its warp's row.
  const auto row_of = [&](std::uint64_t s) {
    return (blockIdx.x + (s / groups) * gridDim.x) * chunk + (s % groups) * dweight_group_rows + std::uint64_t(warp);
  };
  const std::uint64_t steps = blockIdx.x < chunks ? ((chunks - 1 - blockIdx.x) / gridDim.x + 1) * groups : 0;
  rmsnorm_dx_row_registers<T, Segs> r;
  if (steps > 0 && row_of(0) < rows) r.load(dy, x, row_of(0), c);
  for (std::uint64_t s = 0; s < steps; ++s) {
    const std::uint64_t q = blockIdx.x + (s / groups) * gridDim.x, t = row_of(s);
    const int g = int(s % groups);
    const bool full = (q + 1) * chunk <= rows;  // the same in every thread of the block
    if (full)
      rmsnorm_dx_registers_row<T, Segs>(r, dy, x, w, rstd, t, c, dx, shared_row_leaves{leaves + warp * c});
    else if (t < rows)
      rmsnorm_dx_registers_row<T, Segs>(r, dy, x, w, rstd, t, c, dx, no_leaves{});
    if (s + 1 < steps && row_of(s + 1) < rows) r.load(dy, x, row_of(s + 1), c);
    if (full) {
      __syncthreads();
      for (std::uint64_t j = std::uint64_t(threadIdx.x) * 4; j < c; j += 4 * dweight_fused_threads)
        join_group(leaves, pending, c, j, g, chunk_roots + q * c);
      __syncthreads();
    }
  }
}

// The largest shared memory the fused kernel asks for with Segs segments: rows of Segs full segments and a tail.
template <class T, int Segs>
std::size_t dweight_fused_shared_capacity() {
  return dweight_fused_shared_bytes(std::uint64_t(Segs + 1) * 32 * tile_shape<T>::vector_elements);
}

// Opts a kernel into `bytes` of dynamic shared memory (past 48 KiB) once per device: Kernel's largest request. Keyed by
// the kernel's address: two copies of this library in one process (two Python extension modules, each linking detred
// statically) share this function's static variables (GNU unique symbols) but not their kernels, and each kernel
// needs its own opt-in.
template <auto Kernel>
void opt_into_shared_memory(std::size_t bytes, const char* what) {
  static std::array<std::atomic<const void*>, 64> opted_in{};
  const void* kernel = reinterpret_cast<const void*>(Kernel);
  int device = 0;
  check(cudaGetDevice(&device), what);
  if (device < int(opted_in.size()) && opted_in[std::size_t(device)].load(std::memory_order_acquire) == kernel) return;
  check(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), what);
  if (device < int(opted_in.size())) opted_in[std::size_t(device)].store(kernel, std::memory_order_release);
}

// The workspace of the fused form: the chunk roots (rows / 32 of c floats) and the second level's roots.
inline std::size_t dweight_fused_workspace_bytes(std::uint64_t rows, std::uint64_t c) {
  const std::uint64_t chunks = rows >> dweight_chunk_level;
  const std::uint64_t second = chunks >> chosen_chunk_level(chunks, c, column_options{});
  return std::size_t((chunks + second) * c * sizeof(float));
}

// dx and dweight of rows x c (Segs the register capacity, every array aligned), d_workspace holding
// dweight_fused_workspace_bytes: the fused kernel, the second level of chunks over the chunk roots, the finish.
template <class T, int Segs>
void launch_rmsnorm_dx_dweight(const T* d_dy, const T* d_x, const T* d_weight, const float* d_rstd, T* d_dx,
                               float* d_dweight, std::uint64_t rows, std::uint64_t c, void* d_workspace,
                               cudaStream_t stream, const row_options& options, const char* what) {
  const std::uint64_t chunks = rows >> dweight_chunk_level;
  float* roots = static_cast<float*>(d_workspace);
  float* second_roots = roots + chunks * c;
  const std::uint64_t all_chunks = (rows + (1u << dweight_chunk_level) - 1) >> dweight_chunk_level;
  std::uint64_t grid = all_chunks < 0x7fffffffu ? all_chunks : 0x7fffffffu;
  if (options.grid_blocks != 0 && std::uint64_t(options.grid_blocks) < grid) grid = std::uint64_t(options.grid_blocks);
  const std::size_t shared = dweight_fused_shared_bytes(c);
  opt_into_shared_memory<rmsnorm_dx_dweight_kernel<T, Segs>>(dweight_fused_shared_capacity<T, Segs>(), what);
  rmsnorm_dx_dweight_kernel<T, Segs>
      <<<unsigned(grid), dweight_fused_threads, shared, stream>>>(d_dy, d_x, d_weight, d_rstd, rows, c, d_dx, roots);
  check(cudaGetLastError(), what);
  launch_column_reduce_of_roots<T>(dweight_columns<T>{d_dy, d_x, d_rstd, c}, rows, c, roots, dweight_chunk_level,
                                   second_roots, column_out{d_dweight}, stream, what);
}

}  // namespace detred::cuda::detail

namespace detred::cuda {

// dx by rows; dweight canonical over the row index: fused with dx where the rows fit the registers (every array
// 16-byte aligned), else the streaming dx kernel and launch_column_reduce over dy and x. The same bits either way.
template <class T>
void rmsnorm_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_dy, const T* d_x, const T* d_weight,
                      const float* d_rstd, T* d_dx, float* d_dweight, const row_shape& shape, cudaStream_t stream,
                      const row_options& options) {
  constexpr const char* what = "cuda::rmsnorm_backward";
  const std::uint64_t rows = shape.rows, c = shape.cols;
  // dweight's column reduction runs with the default column options: its bits do not depend on them. The size does
  // not depend on the pointers: the larger of the two forms' where the fused one may apply.
  const column_options columns{};
  std::size_t needed = detail::column_workspace_bytes(rows, c, columns);
  if (detail::backward_register_segments<T>(c) != 0 && detail::dweight_fused_workspace_bytes(rows, c) > needed)
    needed = detail::dweight_fused_workspace_bytes(rows, c);
  if (detail::norm_prologue(d_workspace, workspace_bytes, needed, shape, options,
                            {{d_dy, "d_dy"}, {d_x, "d_x"}, {d_weight, "d_weight"}, {d_rstd, "d_rstd"}, {d_dx, "d_dx"}},
                            {{d_dweight, "d_dweight"}}, what))
    return;
  if (c == 0) return;
  const bool all_aligned = detail::rows_aligned<T>(d_dy, c) && detail::rows_aligned<T>(d_x, c) &&
                           detail::rows_aligned<T>(d_weight, 0) && detail::rows_aligned<T>(d_dx, c);
  const int segs = all_aligned && rows > 0 ? detail::backward_register_segments<T>(c) : 0;
  if (segs == 8) {
    detail::launch_rmsnorm_dx_dweight<T, 8>(d_dy, d_x, d_weight, d_rstd, d_dx, d_dweight, rows, c, d_workspace, stream,
                                            options, what);
    return;
  }
  if (segs == 16) {
    detail::launch_rmsnorm_dx_dweight<T, 16>(d_dy, d_x, d_weight, d_rstd, d_dx, d_dweight, rows, c, d_workspace, stream,
                                             options, what);
    return;
  }
  if (rows > 0) {
    const int threads = detail::row_threads(options);
    const unsigned grid = detail::row_grid(rows, options, threads);
    if (detail::rows_aligned<T>(d_dy, c))
      detail::rmsnorm_dx_kernel<T, true><<<grid, threads, 0, stream>>>(d_dy, d_x, d_weight, d_rstd, rows, c, d_dx);
    else
      detail::rmsnorm_dx_kernel<T, false><<<grid, threads, 0, stream>>>(d_dy, d_x, d_weight, d_rstd, rows, c, d_dx);
    check(cudaGetLastError(), what);
  }
  const bool vector = detail::rows_aligned<T>(d_dy, c) && detail::rows_aligned<T>(d_x, c);
  detail::launch_column_reduce<T>(detail::dweight_columns<T>{d_dy, d_x, d_rstd, c}, rows, c, vector, d_dweight,
                                  d_workspace, stream, columns, what);
}

}  // namespace detred::cuda
