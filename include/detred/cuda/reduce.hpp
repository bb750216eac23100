// Device-wide product on the GPU in the canonical order (docs/ORDER.md): bit for bit detred::product on the CPU, for
// every n (64-bit), launch configuration, pointer alignment and GPU. The generic reduce for a user's operator (any
// element type, commutative or not) and the generic map-reduce are templates in detred/cuda/transform_reduce.cuh
// (compile the caller with nvcc); extrema in extrema.hpp; dot, nrm2, asum in blas.hpp.
//
// Contract as on the CPU: |error| <= gamma_{n-1} |product| without overflow or underflow; empty product 1; NaN
// results canonical; Inf and overflow as IEEE multiplication gives them. Type pairs: half, bfloat16 -> float or
// double; float -> float or double; double -> double. Workspace: sum_workspace_bytes(n) bytes (the bound of
// cuda::sum holds for every family of this issue: product, extrema, blas); no call allocates. Asynchronous on
// `stream` except the *_to_host forms, which wait. CUDA failures throw detred::cuda::cuda_error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/error.hpp"
#include "detred/cuda/launch_config.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/reduce.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

namespace detail {
template <class A, class T>
void product_on_device(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, std::size_t workspace_bytes,
                       cudaStream_t stream, const launch_config& config);

// Runs launch(slot) with slot = the workspace's result slot (its first bytes), copies the result back, waits.
template <class R, class Launch>
R result_to_host(void* d_workspace, cudaStream_t stream, const Launch& launch, const char* what) {
  if (d_workspace == nullptr) detred::detail::throw_invalid(what, "d_workspace is null");
  R* slot = static_cast<R*>(d_workspace);
  launch(slot);
  R result{};
  check(cudaMemcpyAsync(&result, slot, sizeof(R), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return result;
}
}  // namespace detail

// Writes the product of d_in[0..n) to *d_out (device memory), asynchronously on `stream`.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void product(const T* d_in, std::uint64_t n, accumulation_for<Acc, T>* d_out, void* d_workspace,
             std::size_t workspace_bytes, cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::product_on_device(d_in, n, d_out, d_workspace, workspace_bytes, stream, config);
}

// The same product, returned to the host (staged in the workspace's first bytes); waits for `stream`.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> product_to_host(
    const T* d_in, std::uint64_t n, void* d_workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr,
    const launch_config& config = {}) {
  using A = accumulation_for<Acc, T>;
  return detail::result_to_host<A>(
      d_workspace, stream,
      [&](A* slot) { detail::product_on_device(d_in, n, slot, d_workspace, workspace_bytes, stream, config); },
      "cuda::product_to_host");
}

}  // namespace detred::cuda
