// Batch-invariant row and column reductions on the GPU (detred::cuda), the same bits as the CPU twins in
// detred/rows.hpp.
//
// Row r's result is the canonical reduction (docs/ORDER.md) of its own length(r) elements: one warp reduces the row
// in the order fixed by its length alone (include/detred/cuda/warp/row_warp.cuh), so the result does not depend on
// the number of rows in the launch, the row's position, the other rows, the launch configuration or the GPU, and it
// equals detred::row_sum & co. bit for bit (determinism::cpu_gpu). Column sums: canonical over the row index, rows cut
// into aligned chunks of 2^chunk_level rows (one thread per column group and chunk) whose roots a second kernel joins
// by the binary counter, without atomics: the same bits for every chunk level, grid and block size.
//
// Inputs half, bfloat16 or float (device pointers; any alignment: 16-byte aligned rows take vector loads), float
// accumulation and outputs (device pointers), asynchronous on `stream`. Throws detred::invalid_argument for a bad
// argument and detred::cuda::cuda_error when a launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/rows/row_shape.hpp"
#include "detred/sum_method.hpp"

namespace detred::cuda {

// Speed only, never bits. 0: chosen.
struct row_launch {
  int block_threads = 0;  // multiple of 32 in [32, 256]; chosen: 256
  int grid_blocks = 0;    // warps take rows grid-stride; chosen: one row per warp
};

// out[r] = sum of row r: method tree (plain) or tree_neumaier; empty row -0.0. Same bits as detred::row_sum.
template <class T>
void row_sum(const T* d_x, const row_shape& shape, float* d_out, sum_method method = sum_method::tree,
             cudaStream_t stream = nullptr, const row_launch& launch = {});
// out[r] = IEEE maximum of row r (-Inf for an empty row). Same bits as detred::row_max.
template <class T>
void row_max(const T* d_x, const row_shape& shape, float* d_out, cudaStream_t stream = nullptr,
             const row_launch& launch = {});
// Mean and population variance of each row by Chan merges of Welford states. Same bits as detred::row_mean_variance.
template <class T>
void row_mean_variance(const T* d_x, const row_shape& shape, float* d_mean, float* d_variance,
                       cudaStream_t stream = nullptr, const row_launch& launch = {});
// out[r] = log sum exp of row r, one pass. Same bits as detred::row_logsumexp.
template <class T>
void row_logsumexp(const T* d_x, const row_shape& shape, float* d_out, cudaStream_t stream = nullptr,
                   const row_launch& launch = {});

// Speed only, never bits. 0: chosen.
struct column_launch {
  int chunk_level = 0;    // rows per chunk = 2^chunk_level, 3..13; chosen from the shape (8 for [65536 x 4096])
  int block_threads = 0;  // multiple of 32 in [32, 512]; chosen: 256
  int grid_rows = 0;      // row blocks (chunks are taken grid-stride); chosen: one chunk per row block
};

// Device workspace for column_sum with this shape and launch (the chunk roots).
std::size_t column_sum_workspace_bytes(std::uint64_t rows, std::uint64_t cols, const column_launch& launch = {});

// out[j] = sum over i of x[i * stride + j] (plain float, canonical over i; -0.0 for rows = 0). Same bits as
// detred::column_sum for every column_launch. d_workspace: column_sum_workspace_bytes(rows, cols, launch) bytes.
template <class T>
void column_sum(const T* d_x, std::uint64_t rows, std::uint64_t cols, std::uint64_t stride, float* d_out,
                void* d_workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                const column_launch& launch = {});

}  // namespace detred::cuda
