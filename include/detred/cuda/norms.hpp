// LayerNorm, RMSNorm (forward, backward) and softmax kernels, batch-invariant and with the same bits as the CPU
// references in detred/norms.hpp (determinism::cpu_gpu): one warp per row, the row's reductions in the canonical
// order of its length (include/detred/cuda/warp/row_warp.cuh), detred::specified's exp and rsqrt. dweight is a
// column reduction canonical over the rows without atomics. T float or bfloat16; device pointers; asynchronous on
// `stream`; throws detred::invalid_argument or detred::cuda::cuda_error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/rows.hpp"
#include "detred/rows/row_shape.hpp"

namespace detred::cuda {

template <class T>
void layernorm_forward(const T* d_x, const T* d_weight, const T* d_bias, std::uint64_t rows, std::uint64_t c, T* d_out,
                       float* d_mean, float* d_rstd, float eps = 1e-5f, cudaStream_t stream = nullptr,
                       const row_launch& launch = {});
template <class T>
void rmsnorm_forward(const T* d_x, const T* d_weight, std::uint64_t rows, std::uint64_t c, T* d_out, float* d_rstd,
                     float eps = 1e-5f, cudaStream_t stream = nullptr, const row_launch& launch = {});
// Workspace for rmsnorm_backward: column_sum_workspace_bytes(rows, c).
template <class T>
void rmsnorm_backward(const T* d_dy, const T* d_x, const T* d_weight, const float* d_rstd, std::uint64_t rows,
                      std::uint64_t c, T* d_dx, float* d_dweight, void* d_workspace, std::size_t workspace_bytes,
                      cudaStream_t stream = nullptr, const row_launch& launch = {});
template <class T>
void softmax_forward(const T* d_x, const row_shape& shape, T* d_out, cudaStream_t stream = nullptr,
                     const row_launch& launch = {});

}  // namespace detred::cuda
