// Device-wide dot, nrm2 and asum on the GPU in the canonical order: bit for bit detred::dot, nrm2, asum on the CPU
// (detred/blas.hpp: contracts, error bounds) for every n (64-bit), launch configuration and pointer alignment. The
// map (product, |x|, the scaled square) is fused into the loads (detred/cuda/transform_reduce.cuh). Type pairs:
// half, bfloat16 -> float or double; float -> float or double; double -> double. Workspace: sum_workspace_bytes(n);
// asynchronous on `stream` except the *_to_host forms.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/blas.hpp"
#include "detred/cuda/launch_config.hpp"
#include "detred/cuda/reduce.hpp"

namespace detred::cuda {

enum class blas_kind { dot, nrm2, asum };

namespace detail {
// y is read for dot only.
template <class A, class T>
void blas_on_device(const T* d_x, const T* d_y, std::uint64_t n, A* d_out, blas_kind kind, void* d_workspace,
                    std::size_t workspace_bytes, cudaStream_t stream, const launch_config& config);
}  // namespace detail

template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void dot(const T* d_x, const T* d_y, std::uint64_t n, accumulation_for<Acc, T>* d_out, void* d_workspace,
         std::size_t workspace_bytes, cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::blas_on_device(d_x, d_y, n, d_out, blas_kind::dot, d_workspace, workspace_bytes, stream, config);
}
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void nrm2(const T* d_x, std::uint64_t n, accumulation_for<Acc, T>* d_out, void* d_workspace,
          std::size_t workspace_bytes, cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::blas_on_device(d_x, static_cast<const T*>(nullptr), n, d_out, blas_kind::nrm2, d_workspace, workspace_bytes,
                         stream, config);
}
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void asum(const T* d_x, std::uint64_t n, accumulation_for<Acc, T>* d_out, void* d_workspace,
          std::size_t workspace_bytes, cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::blas_on_device(d_x, static_cast<const T*>(nullptr), n, d_out, blas_kind::asum, d_workspace, workspace_bytes,
                         stream, config);
}

// Any of the three, returned to the host; waits for `stream`. d_y is read for blas_kind::dot only.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> blas_to_host(
    blas_kind kind, const T* d_x, const T* d_y, std::uint64_t n, void* d_workspace, std::size_t workspace_bytes,
    cudaStream_t stream = nullptr, const launch_config& config = {}) {
  using A = accumulation_for<Acc, T>;
  return detail::result_to_host<A>(
      d_workspace, stream,
      [&](A* slot) { detail::blas_on_device(d_x, d_y, n, slot, kind, d_workspace, workspace_bytes, stream, config); },
      "cuda::blas_to_host");
}

}  // namespace detred::cuda
