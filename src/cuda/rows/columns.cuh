// Column sums without atomics (include/detred/cuda/rows.hpp) and the column reduction behind rmsnorm_backward's
// dweight (norms.cuh): canonical over the row index.
//
// Kernel 1: thread (column group g, chunk c) computes, for its CW adjacent columns, the root of rows
// [c 2^K, (c + 1) 2^K) (column_chunk_root) and stores it in the workspace, roots[c][j]. Kernel 2: one thread per
// column pushes the chunk roots at level K into the binary counter (32 at a time as a complete tree of 32 when
// enough remain, level K + 5), then the rows after the last full chunk one by one, and left-folds. Every chunk is an
// aligned complete subtree, so K, the grid and the block size change speed only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/accumulators/pairwise.hpp"
#include "detred/cuda/block/column_chunk.cuh"
#include "detred/cuda/error.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/errors.hpp"
#include "detred/order.hpp"

namespace detred::cuda::detail {

// The leaves of a plain column sum: x[i * stride + j] widened.
template <class T>
struct matrix_columns {
  const T* x;
  std::uint64_t stride;
  template <int CW, bool Vector>
  __device__ __forceinline__ void load(std::uint64_t i, std::uint64_t j, float (&v)[CW]) const {
    load_columns<T, CW, Vector>(x + i * stride + j, v);
  }
};

template <class Source, int CW, bool Vector>
__global__ void __launch_bounds__(512) column_chunks_kernel(Source source, std::uint64_t cols, int chunk_level,
                                                            std::uint64_t chunks, float* __restrict__ roots) {
  const std::uint64_t j = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) * CW;
  if (j >= cols) return;
  for (std::uint64_t c = blockIdx.y; c < chunks; c += gridDim.y) {
    float root[CW];
    const auto load = [&](std::uint64_t i, float(&v)[CW]) { source.template load<CW, Vector>(i, j, v); };
    column_chunk_root<CW>(load, c << chunk_level, chunk_level, root);
#pragma unroll
    for (int i = 0; i < CW; ++i) roots[c * cols + j + i] = root[i];
  }
}

// Where column j's result goes: out[j] (a plain column sum), or a Source's own layout (layernorm_backward's
// interleaved dweight and dbias).
struct column_out {
  float* out;
  __device__ __forceinline__ void store(std::uint64_t j, float v) const { out[j] = v; }
};

// Chunk roots of one level: roots[i * cols + j] is column j's root of rows [i 2^level, (i + 1) 2^level), for i in
// [from, to); every such chunk an aligned complete subtree of the column's canonical tree.
struct chunk_roots_range {
  const float* roots;
  int level;
  std::uint64_t from, to;
};

// Pushes column j's roots of r into the counter in row order: 32 at a time as one complete tree of level + 5 where
// 32 aligned ones remain, one at a time otherwise.
template <class Counter>
__device__ __forceinline__ void push_chunk_roots(Counter& counter, const chunk_roots_range& r, std::uint64_t cols,
                                                 std::uint64_t j) {
  using Acc = plain_accumulator<float>;
  std::uint64_t c = r.from;
  for (; c < r.to && c % 32 != 0; ++c) counter.push(Acc::from_value(r.roots[c * cols + j]), r.level);
  for (; c + 32 <= r.to; c += 32) {
    float v[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) v[i] = r.roots[(c + i) * cols + j];
#pragma unroll
    for (int width = 32; width > 1; width /= 2) {
#pragma unroll
      for (int i = 0; i < width / 2; ++i) v[i] = v[2 * i] + v[2 * i + 1];
    }
    counter.push(Acc::from_value(v[0]), r.level + 5);
  }
  for (; c < r.to; ++c) counter.push(Acc::from_value(r.roots[c * cols + j]), r.level);
}

// One thread a column: the coarse chunk roots, then the fine ones after them, then the rows after the fine ones
// (from the Source) pushed into the binary counter, left-folded: the canonical order over the row index.
template <class Source, class Out>
__global__ void __launch_bounds__(256) column_finish_kernel(Source source, std::uint64_t rows, std::uint64_t cols,
                                                            chunk_roots_range coarse, chunk_roots_range fine, Out out) {
  using Acc = plain_accumulator<float>;
  const std::uint64_t j = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  binary_counter<Acc, merge_accumulators> counter;
  push_chunk_roots(counter, coarse, cols, j);
  push_chunk_roots(counter, fine, cols, j);
  for (std::uint64_t i = fine.to << fine.level; i < rows; ++i) {
    float v[1];
    source.template load<1, false>(i, j, v);
    counter.push(Acc::from_value(v[0]), 0);
  }
  out.store(j, canonicalize_nan(counter.empty() ? Acc{}.result() : counter.fold().result()));
}

inline int chosen_chunk_level(std::uint64_t rows, std::uint64_t cols, const column_options& options) {
  if (options.chunk_level != 0) return options.chunk_level;
  // Enough threads to fill the device (about 132 SMs x 1024), the fewest chunk roots otherwise.
  int k = 10;
  while (k > 3 && (rows >> k) * ((cols + 3) / 4) < 132u * 1024u) --k;
  return k;
}

inline void check_column_options(const column_options& options, const char* what) {
  if (options.chunk_level != 0 && (options.chunk_level < 3 || options.chunk_level > 13))
    detred::detail::throw_invalid(what, "column_options.chunk_level must be 0 or in [3, 13]");
  if (options.block_threads != 0 &&
      (options.block_threads < 32 || options.block_threads > 512 || options.block_threads % 32))
    detred::detail::throw_invalid(what, "column_options.block_threads must be 0 or a multiple of 32 in [32, 512]");
  if (options.grid_rows < 0 || options.grid_rows > 65535)
    detred::detail::throw_invalid(what, "column_options.grid_rows must be in [0, 65535]");
}

// The workspace of a column reduction of rows x cols leaves: the chunk roots, (rows >> chunk_level) * cols floats.
inline std::size_t column_workspace_bytes(std::uint64_t rows, std::uint64_t cols, const column_options& options) {
  return std::size_t((rows >> chosen_chunk_level(rows, cols, options)) * cols * sizeof(float));
}

// Column sums of any Source (rows x cols leaves), after the checks and the workspace query (d_workspace holds
// column_workspace_bytes). vector: every row's columns start 16-byte aligned and cols is a multiple of
// CW = 16 / sizeof(T), so that Source may read CW columns with one 16-byte load per matrix. Column j's result goes to
// out.store(j, value).
template <class T, class Source, class Out>
void launch_column_reduce(const Source& source, std::uint64_t rows, std::uint64_t cols, bool vector, Out out,
                          void* d_workspace, cudaStream_t stream, const column_options& options, const char* what) {
  if (cols == 0) return;
  const int k = chosen_chunk_level(rows, cols, options);
  const std::uint64_t chunks = rows >> k;
  float* roots = static_cast<float*>(d_workspace);
  const int threads = options.block_threads ? options.block_threads : 256;
  if (chunks > 0) {
    constexpr int CW = int(16 / sizeof(T));
    const std::uint64_t grid_rows =
        options.grid_rows ? std::uint64_t(options.grid_rows) : (chunks < 65535 ? chunks : 65535);
    if (vector && cols % CW == 0) {
      const dim3 grid(unsigned((cols / CW + threads - 1) / threads), unsigned(grid_rows));
      column_chunks_kernel<Source, CW, true><<<grid, threads, 0, stream>>>(source, cols, k, chunks, roots);
    } else {
      const dim3 grid(unsigned((cols + threads - 1) / threads), unsigned(grid_rows));
      column_chunks_kernel<Source, 1, false><<<grid, threads, 0, stream>>>(source, cols, k, chunks, roots);
    }
    check(cudaGetLastError(), what);
  }
  column_finish_kernel<Source, Out><<<unsigned((cols + 255) / 256), 256, 0, stream>>>(
      source, rows, cols, chunk_roots_range{roots, k, 0, chunks}, chunk_roots_range{roots, k, chunks, chunks}, out);
  check(cudaGetLastError(), what);
}

// Column sums of a Source whose first (rows >> level) chunks of 2^level rows already have their roots in `roots`
// (roots[i * cols + j], cols a multiple of 4, roots 16-byte aligned): a second level of chunks over those roots into
// second_roots (column_workspace_bytes(rows >> level, cols) bytes), then the finish, which adds the rows after the
// last full chunk from the Source; column j's result to out.store(j, value). The same tree as launch_column_reduce's.
template <class T, class Source, class Out>
void launch_column_reduce_of_roots(const Source& source, std::uint64_t rows, std::uint64_t cols, const float* roots,
                                   int level, float* second_roots, Out out, cudaStream_t stream, const char* what) {
  if (cols == 0) return;
  const std::uint64_t chunks = rows >> level;
  const int k = chosen_chunk_level(chunks, cols, column_options{});
  const std::uint64_t coarse = chunks >> k;
  if (coarse > 0) {
    constexpr int threads = 256;
    const dim3 grid(unsigned((cols / 4 + threads - 1) / threads), unsigned(coarse < 65535 ? coarse : 65535));
    column_chunks_kernel<matrix_columns<float>, 4, true>
        <<<grid, threads, 0, stream>>>(matrix_columns<float>{roots, cols}, cols, k, coarse, second_roots);
    check(cudaGetLastError(), what);
  }
  column_finish_kernel<Source, Out><<<unsigned((cols + 255) / 256), 256, 0, stream>>>(
      source, rows, cols, chunk_roots_range{second_roots, level + k, 0, coarse},
      chunk_roots_range{roots, level, coarse << k, chunks}, out);
  check(cudaGetLastError(), what);
}

template <class T, class Source>
void launch_column_reduce(const Source& source, std::uint64_t rows, std::uint64_t cols, bool vector, float* d_out,
                          void* d_workspace, cudaStream_t stream, const column_options& options, const char* what) {
  launch_column_reduce<T>(source, rows, cols, vector, column_out{d_out}, d_workspace, stream, options, what);
}

}  // namespace detred::cuda::detail

namespace detred::cuda {
template <class T>
void column_sum(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
                cudaStream_t stream, const column_options& options) {
  constexpr const char* what = "cuda::column_sum";
  detred::detail::check_column_shape(shape, what);
  detail::check_column_options(options, what);
  if (detail::workspace_query(d_workspace, workspace_bytes,
                              detail::column_workspace_bytes(shape.rows, shape.cols, options), what))
    return;
  if (shape.cols == 0) return;
  if (d_out == nullptr) detred::detail::throw_invalid(what, "d_out is null");
  if (shape.rows > 0 && d_x == nullptr) detred::detail::throw_invalid(what, "d_x is null");
  const bool vector = reinterpret_cast<std::uintptr_t>(d_x) % 16 == 0 && (shape.stride * sizeof(T)) % 16 == 0;
  detail::launch_column_reduce<T>(detail::matrix_columns<T>{d_x, shape.stride}, shape.rows, shape.cols, vector, d_out,
                                  d_workspace, stream, options, what);
}
}  // namespace detred::cuda
