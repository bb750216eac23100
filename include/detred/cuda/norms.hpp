// LayerNorm and RMSNorm (forward, backward), softmax and log-softmax (forward, backward) and log-sum-exp's backward on
// the GPU (detred::cuda), in the call shape of docs/API.md; the CPU twins of the same names (detred/norms.hpp) take the
// same arguments less the workspace and the stream, and give the same bits.
//
// Contract. One warp per row; each of the row's reductions is the canonical one (docs/ORDER.md) of that row alone
// (include/detred/cuda/warp/row_warp.cuh), and the per-element formulas (detred/rows/norm_formulas.hpp) use
// detred::specified's exp and rsqrt: each row's outputs are batch-invariant (the first k rows of a batch give the bits
// of a batch of k), do not depend on row_options or on the GPU, and equal the CPU twin's (determinism::cpu_gpu).
// The weight and bias gradients (rmsnorm_backward's dweight, layernorm_backward's dweight and dbias) are column
// reductions canonical over the rows, without atomics.
//
// T float, bfloat16 or half; float accumulation and statistics (mean, rstd, lse, dweight, dbias); outputs in T; device
// pointers; asynchronous on `stream`. LayerNorm's and RMSNorm's forward calls and rmsnorm_backward take a dense
// [rows x cols] shape (dense_rows: lengths, causal_period and stride != cols are rejected, naming the field);
// layernorm_backward takes full rows with any stride >= cols; the softmax family takes any row_shape; rows shorter
// than 2^32 elements. row_options: the launch shape (speed only); method must be tree (these calls have no other).
// Workspace: rmsnorm_backward and layernorm_backward need one (chunk roots, at most rows / 8 x cols floats); the others
// none (their size query answers min_workspace_bytes). Throws detred::invalid_argument or detred::cuda::cuda_error.
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

// out[r, i] = exp(x[r, i] - m_r) / s_r for i < shape.length(r), m_r and s_r the row's log-sum-exp passes (full,
// strided, per-row lengths or causal rows); out has x's layout; entries past a row's length are not written. Same bits
// as detred::softmax_forward (NaN and Inf there).
template <class T>
void softmax_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, T* d_out, const row_shape& shape,
                     cudaStream_t stream = nullptr, const row_options& options = {});

// The gradients of layernorm_forward given dy and its d_mean, d_rstd: d_dx row by row (two row sums, canonical over
// the row), d_dweight[i] = sum over t of (dy xhat)[t, i] and d_dbias[i] = sum over t of dy[t, i], canonical over t
// (-0.0 when rows is 0). Full rows, any stride (dy, x and dx share it). Workspace: the column reductions' chunk roots
// (the size query gives the bytes). Same bits as detred::layernorm_backward.
template <class T>
void layernorm_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_dy, const T* d_x, const T* d_weight,
                        const float* d_mean, const float* d_rstd, T* d_dx, float* d_dweight, float* d_dbias,
                        const row_shape& shape, cudaStream_t stream = nullptr, const row_options& options = {});

// out[r, i] = x[r, i] - lse_r for i < shape.length(r) (any row_shape); out has x's layout; entries past a row's
// length are not written. Same bits as detred::log_softmax_forward (NaN and Inf there).
template <class T>
void log_softmax_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, T* d_out,
                         const row_shape& shape, cudaStream_t stream = nullptr, const row_options& options = {});

// dx = y (dy - sum(dy y)) row by row, the sum canonical over the row (any row_shape; y, dy and dx share the layout;
// entries past a row's length are not written). Same bits as detred::softmax_backward.
template <class T>
void softmax_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_y, const T* d_dy, T* d_dx,
                      const row_shape& shape, cudaStream_t stream = nullptr, const row_options& options = {});

// dx = dy - exp(y) sum(dy) row by row, the sum canonical over the row (any row_shape; y, dy and dx share the layout;
// entries past a row's length are not written). Same bits as detred::log_softmax_backward.
template <class T>
void log_softmax_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_y, const T* d_dy, T* d_dx,
                          const row_shape& shape, cudaStream_t stream = nullptr, const row_options& options = {});

// dx[r, i] = dout[r] exp(x[r, i] - lse[r]) (d_lse: row_logsumexp's float results; d_dout: their gradients, one float
// per row); element-wise (any row_shape; dx has x's layout; entries past a row's length are not written). Same bits
// as detred::row_logsumexp_backward.
template <class T>
void row_logsumexp_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const float* d_lse,
                            const float* d_dout, T* d_dx, const row_shape& shape, cudaStream_t stream = nullptr,
                            const row_options& options = {});

}  // namespace detred::cuda
