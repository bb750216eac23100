// Batch-invariant row and column reductions on the GPU (detred::cuda), in the call shape of docs/API.md; the CPU twins
// of the same names (detred/rows.hpp) take the same arguments less the workspace and the stream, and give the same
// bits.
//
// Contract. Row r's result is the canonical reduction (docs/ORDER.md) of its own length(r) elements: one warp reduces
// the row in the order fixed by its length alone (include/detred/cuda/warp/row_warp.cuh), so the result is
// batch-invariant (it does not depend on the number of rows in the call, the row's position or the other rows:
// f(x[:k]) == f(x)[:k], bitwise), does not depend on row_options or on the GPU, and equals the CPU twin's bit for bit
// (determinism::cpu_gpu). Column sums are canonical over the row index: rows cut into aligned chunks of 2^chunk_level
// rows whose roots a second kernel joins by the binary counter, without atomics, so every column_options gives the
// same bits (determinism::cpu_gpu).
//
// Inputs half, bfloat16 or float (device pointers; any alignment: 16-byte aligned rows take vector loads); float
// accumulation and outputs (device pointers); asynchronous on `stream`. Rows shorter than 2^32 elements
// (row_shape.cols < 2^32, a limit the CPU twins do not have). Workspace: the row reductions need none (the
// size query answers min_workspace_bytes, docs/API.md); column_sum needs the chunk roots. Throws
// detred::invalid_argument for a bad argument (naming it) and detred::cuda::cuda_error when a launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/rows/row_shape.hpp"
#include "detred/sum_method.hpp"

namespace detred::cuda {

// The options of the row reductions and the norms (detred/cuda/norms.hpp). The launch fields change speed only, never
// bits; 0 = chosen (256 threads, one row per warp).
struct row_options {
  sum_method method = sum_method::tree;  // row_sum: tree or tree_neumaier; every other call: tree only
  int block_threads = 0;                 // 0, or a multiple of 32 in [32, 256]
  int grid_blocks = 0;                   // 0 (one row per warp), or fewer blocks whose warps take rows grid-stride
  // softmax_forward and log_softmax_forward only (other calls reject it): also write the entries [length(r), cols)
  // of every row, +0 (softmax) or -Inf (log_softmax), as a causal mask leaves them, so that the output is a whole
  // tensor without a separate fill pass. The CPU twins take the same flag.
  bool fill_past_length = false;
};

// out[r] = sum of row r, canonical order; options.method tree (plain) or tree_neumaier (compensated): the bits of
// detred::row_sum and of detred::sum of that row. Error as detred::sum (sum_method.hpp); NaN if any input is NaN or
// Inf - Inf occurs, +-Inf on overflow; empty row -0.0.
template <class T>
void row_sum(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
             cudaStream_t stream = nullptr, const row_options& options = {});

// out[r] = IEEE maximum of row r (exact: NaN if any NaN, +0 above -0; -Inf for an empty row). Same bits as
// detred::row_max.
template <class T>
void row_max(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
             cudaStream_t stream = nullptr, const row_options& options = {});

// Mean and population variance of each row by Chan's merges of Welford states in the canonical order (error: see
// detred::row_mean_variance); NaN for an empty row or a NaN or Inf input. Same bits as detred::row_mean_variance.
template <class T>
void row_mean_variance(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_mean, float* d_variance,
                       const row_shape& shape, cudaStream_t stream = nullptr, const row_options& options = {});

// out[r] = log sum exp of row r: its maximum m, then m + log of the canonical sum of exp(x - m) (row_accumulators.hpp;
// detred::specified's exp and log). -Inf for an empty row, +Inf if any input is +Inf, NaN if any is NaN. Same bits as
// detred::row_logsumexp.
template <class T>
void row_logsumexp(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
                   cudaStream_t stream = nullptr, const row_options& options = {});

// The options of column_sum. Speed only, never bits; 0 = chosen from the shape.
struct column_options {
  int chunk_level = 0;    // rows per chunk = 2^chunk_level: 0, or 3..13 (chosen: enough chunks to fill the GPU)
  int block_threads = 0;  // 0 (256), or a multiple of 32 in [32, 512]
  int grid_rows = 0;  // row blocks, chunks taken grid-stride: 0 (one chunk per row block, at most 65535) or 1..65535
};

// out[j] = sum over i in [0, shape.rows) of x[i * shape.stride + j], j < shape.cols: plain float, canonical over i
// (error as detred::sum of the column); -0.0 when rows is 0. Full rows only (shape.lengths and causal_period are
// rejected). Workspace: (rows >> chunk_level) * cols floats (the size query gives it). Same bits as
// detred::column_sum for every column_options.
template <class T>
void column_sum(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
                cudaStream_t stream = nullptr, const column_options& options = {});

}  // namespace detred::cuda
