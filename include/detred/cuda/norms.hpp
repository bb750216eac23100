// LayerNorm, RMSNorm (forward, backward) and softmax on the GPU (detred::cuda), in the call shape of docs/API.md; the
// CPU twins of the same names (detred/norms.hpp) take the same arguments less the workspace and the stream, and give
// the same bits.
//
// Contract. One warp per row; each of the row's reductions is the canonical one (docs/ORDER.md) of that row alone
// (include/detred/cuda/warp/row_warp.cuh), and the per-element formulas (detred/rows/norm_formulas.hpp) use
// detred::specified's exp and rsqrt: each row's outputs are batch-invariant (the first k rows of a batch give the bits
// of a batch of k), do not depend on row_options or on the GPU, and equal the CPU twin's (determinism::cpu_gpu).
// rmsnorm_backward's dweight is a column reduction canonical over the rows, without atomics.
//
// T float or bfloat16; device pointers; asynchronous on `stream`. LayerNorm and RMSNorm take a dense [rows x cols]
// shape (dense_rows: lengths, causal_period and stride != cols are rejected, naming the field); softmax takes any
// row_shape; rows shorter than 2^32 elements. row_options: the launch shape (speed only); method must be tree (these
// calls have no other). Workspace: only rmsnorm_backward needs one (for dweight); the others use none (their size
// query answers min_workspace_bytes). Throws detred::invalid_argument or detred::cuda::cuda_error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/rows.hpp"
#include "detred/rows/row_shape.hpp"

namespace detred::cuda {

// out = (x - mean) rstd weight + bias row by row; d_mean[t], d_rstd[t] = 1/sqrt(var + eps) (population variance, a
// second canonical pass over the centred row). cols = 0: nothing is written. Same bits as detred::layernorm_forward.
template <class T>
void layernorm_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const T* d_weight,
                       const T* d_bias, T* d_out, float* d_mean, float* d_rstd, const row_shape& shape,
                       float eps = 1e-5f, cudaStream_t stream = nullptr, const row_options& options = {});

// out = x rstd weight, d_rstd[t] = 1/sqrt(mean(x^2) + eps). cols = 0: nothing is written. Same bits as
// detred::rmsnorm_forward.
template <class T>
void rmsnorm_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const T* d_weight, T* d_out,
                     float* d_rstd, const row_shape& shape, float eps = 1e-5f, cudaStream_t stream = nullptr,
                     const row_options& options = {});

// The gradients of rmsnorm_forward: d_dx row by row, d_dweight[i] = sum over t of (dy x)[t, i] rstd[t], canonical over
// t (-0.0 when rows is 0). Workspace: the column reduction's chunk roots (the size query gives the bytes). Same bits as
// detred::rmsnorm_backward.
template <class T>
void rmsnorm_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_dy, const T* d_x, const T* d_weight,
                      const float* d_rstd, T* d_dx, float* d_dweight, const row_shape& shape,
                      cudaStream_t stream = nullptr, const row_options& options = {});

// out[r, i] = exp(x[r, i] - lse_r) for i < shape.length(r) (full, strided, per-row lengths or causal rows); out has
// x's layout; entries past a row's length are not written. Same bits as detred::softmax_forward (NaN and Inf there).
template <class T>
void softmax_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, T* d_out, const row_shape& shape,
                     cudaStream_t stream = nullptr, const row_options& options = {});

}  // namespace detred::cuda
