// Device-wide dot, nrm2 and asum on the GPU (the reduce family: options in reduce.hpp; the call shape of
// docs/API.md). Each writes one value of the accumulation type to *d_out in device memory, asynchronously on `stream`.
//
// Order: the canonical order of n (docs/ORDER.md), the map (product, |x|, the scaled square) fused into the loads:
// the same bits as detred::dot, nrm2, asum on the CPU for every n (64-bit), launch shape, pointer alignment and GPU
// (cpu_gpu). Error bounds, NaN, Inf and empty inputs as on the CPU (detred/blas.hpp): dot |error| <= gamma_{h(n)+1}
// sum |x_i y_i|, empty -0.0; nrm2 a scaled sum of squares, no overflow or underflow of squares before the result
// overflows or underflows, empty +0.0; asum |error| <= gamma_{h(n)} sum |x_i|, empty +0.0; NaN results canonical.
// Type pairs (Acc, T): half, bfloat16 -> float or double; float -> float or double; double -> double. Workspace: the
// bytes a size query gives (a function of n and the types); no allocation. Throws invalid_argument for a null input
// with n > 0, a null d_out, a misaligned pointer, too small a workspace or an option out of range; cuda_error on a
// CUDA failure.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/reduce.hpp"

namespace detred::cuda {

namespace detail {
enum class blas_kind { dot, nrm2, asum };

// d_y is read for dot only.
template <class A, class T>
void blas_on_device(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const T* d_y, A* d_out,
                    std::uint64_t n, blas_kind kind, cudaStream_t stream, const reduce_options& options);
}  // namespace detail

// sum of widen(x[i]) * widen(y[i]).
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void dot(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const T* d_y, accumulation_for<Acc, T>* d_out,
         std::uint64_t n, cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::blas_on_device(d_workspace, workspace_bytes, d_x, d_y, d_out, n, detail::blas_kind::dot, stream, options);
}
// sqrt(sum x[i]^2).
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void nrm2(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, accumulation_for<Acc, T>* d_out,
          std::uint64_t n, cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::blas_on_device(d_workspace, workspace_bytes, d_x, static_cast<const T*>(nullptr), d_out, n,
                         detail::blas_kind::nrm2, stream, options);
}
// sum of |x[i]|.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void asum(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, accumulation_for<Acc, T>* d_out,
          std::uint64_t n, cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::blas_on_device(d_workspace, workspace_bytes, d_x, static_cast<const T*>(nullptr), d_out, n,
                         detail::blas_kind::asum, stream, options);
}

}  // namespace detred::cuda
