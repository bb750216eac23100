// Device-wide min, max, argmin, argmax on the GPU (the reduce family: options in reduce.hpp; the call shape of
// docs/API.md). Each writes one value (min, max: T; argmin, argmax: std::uint64_t) to *d_out in device memory,
// asynchronously on `stream`.
//
// Contract as on the CPU (detred/reduce.hpp): IEEE 754-2019 minimum / maximum, exact; NaN if any input is NaN,
// returned as the canonical NaN; -0 < +0. argmin / argmax: the lowest index of that value (a NaN anywhere: the first
// NaN's index). Empty input: +Inf (min), -Inf (max), 0 (argmin, argmax). Inputs: half, bfloat16, float, double,
// int32, int64 (integers: the plain minimum / maximum and the lowest index of it; empty: the type's largest value for
// min, its smallest for max). Order-independent: the result is a function of the multiset of (value, index) pairs, so
// it is the CPU's bits for every n (64-bit), launch shape, pointer alignment and GPU (cpu_gpu). Streaming kernels
// over integer keys in the contract's total order (src/cuda/reduce/extrema.cuh). Workspace: the bytes a size query
// gives (a function of n and T); no allocation. Throws invalid_argument for a null d_in with n > 0, a null d_out, a
// misaligned pointer, too small a workspace or an option out of range (tiles_per_chunk is checked, then ignored);
// cuda_error on a CUDA failure.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/reduce.hpp"
#include "detred/reduce.hpp"

namespace detred::cuda {

namespace detail {
enum class extremum_kind { min, max, argmin, argmax };

// Writes the value (min, max) to d_value_out or the index (argmin, argmax) to d_index_out.
template <class T>
void extremum_on_device(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_value_out,
                        std::uint64_t* d_index_out, std::uint64_t n, extremum_kind kind, cudaStream_t stream,
                        const reduce_options& options);
}  // namespace detail

template <detred::detail::extremum_input T>
void min(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_out, std::uint64_t n,
         cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::extremum_on_device(d_workspace, workspace_bytes, d_in, d_out, nullptr, n, detail::extremum_kind::min, stream,
                             options);
}
template <detred::detail::extremum_input T>
void max(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_out, std::uint64_t n,
         cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::extremum_on_device(d_workspace, workspace_bytes, d_in, d_out, nullptr, n, detail::extremum_kind::max, stream,
                             options);
}
template <detred::detail::extremum_input T>
void argmin(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, std::uint64_t* d_out, std::uint64_t n,
            cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::extremum_on_device(d_workspace, workspace_bytes, d_in, static_cast<T*>(nullptr), d_out, n,
                             detail::extremum_kind::argmin, stream, options);
}
template <detred::detail::extremum_input T>
void argmax(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, std::uint64_t* d_out, std::uint64_t n,
            cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::extremum_on_device(d_workspace, workspace_bytes, d_in, static_cast<T*>(nullptr), d_out, n,
                             detail::extremum_kind::argmax, stream, options);
}

}  // namespace detred::cuda
