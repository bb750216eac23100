// Device-wide min, max, argmin, argmax on the GPU, with the CPU's contracts (detred/reduce.hpp): IEEE 754-2019
// minimum / maximum (exact; NaN if any input is NaN, returned as the canonical NaN; -0 < +0), argmin / argmax the
// lowest index of that value (a NaN anywhere: the first NaN's index). Empty input: +Inf (min), -Inf (max), n = 0
// (argmin, argmax). Bit for bit the CPU's results for every n (64-bit), launch configuration and pointer alignment.
// Inputs: half, bfloat16, float, double, int32, int64 (integers: plain minimum / maximum, the lowest index of it;
// empty: the type's largest value for min, its smallest for max). Streaming kernels over integer keys in the
// contract's total order (src/cuda/reduce/extrema.cuh), not the canonical tree: the result is order-free.
// Workspace: sum_workspace_bytes(n); asynchronous on `stream` except the *_to_host forms.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/launch_config.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

enum class extremum_kind { min, max, argmin, argmax };

namespace detail {
template <class T>
void extremum_on_device(const T* d_in, std::uint64_t n, T* d_value_out, std::uint64_t* d_index_out, extremum_kind kind,
                        void* d_workspace, std::size_t workspace_bytes, cudaStream_t stream,
                        const launch_config& config);
}  // namespace detail

template <detred::detail::extremum_input T>
void min(const T* d_in, std::uint64_t n, T* d_out, void* d_workspace, std::size_t workspace_bytes,
         cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::extremum_on_device(d_in, n, d_out, nullptr, extremum_kind::min, d_workspace, workspace_bytes, stream, config);
}
template <detred::detail::extremum_input T>
void max(const T* d_in, std::uint64_t n, T* d_out, void* d_workspace, std::size_t workspace_bytes,
         cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::extremum_on_device(d_in, n, d_out, nullptr, extremum_kind::max, d_workspace, workspace_bytes, stream, config);
}
template <detred::detail::extremum_input T>
void argmin(const T* d_in, std::uint64_t n, std::uint64_t* d_out, void* d_workspace, std::size_t workspace_bytes,
            cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::extremum_on_device(d_in, n, static_cast<T*>(nullptr), d_out, extremum_kind::argmin, d_workspace,
                             workspace_bytes, stream, config);
}
template <detred::detail::extremum_input T>
void argmax(const T* d_in, std::uint64_t n, std::uint64_t* d_out, void* d_workspace, std::size_t workspace_bytes,
            cudaStream_t stream = nullptr, const launch_config& config = {}) {
  detail::extremum_on_device(d_in, n, static_cast<T*>(nullptr), d_out, extremum_kind::argmax, d_workspace,
                             workspace_bytes, stream, config);
}

// min/max (value) or argmin/argmax (index, as a double-free integer) returned to the host; waits for `stream`.
template <detred::detail::extremum_input T>
T extremum_to_host(const T* d_in, std::uint64_t n, extremum_kind kind, void* d_workspace, std::size_t workspace_bytes,
                   cudaStream_t stream = nullptr, const launch_config& config = {}) {
  return detail::result_to_host<T>(
      d_workspace, stream,
      [&](T* slot) {
        detail::extremum_on_device(d_in, n, slot, nullptr, kind, d_workspace, workspace_bytes, stream, config);
      },
      "cuda::extremum_to_host");
}
template <detred::detail::extremum_input T>
std::uint64_t arg_extremum_to_host(const T* d_in, std::uint64_t n, extremum_kind kind, void* d_workspace,
                                   std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                                   const launch_config& config = {}) {
  return detail::result_to_host<std::uint64_t>(
      d_workspace, stream,
      [&](std::uint64_t* slot) {
        detail::extremum_on_device(d_in, n, static_cast<T*>(nullptr), slot, kind, d_workspace, workspace_bytes, stream,
                                   config);
      },
      "cuda::arg_extremum_to_host");
}

}  // namespace detred::cuda
