// Device-wide sums on the GPU in the canonical order (docs/ORDER.md): bit for bit the result detred::sum gives on the
// CPU with sum_method::tree or tree_neumaier, for every n, launch configuration, pointer alignment and GPU.
//
// Methods: sum_method::tree (plain additions, |error| <= gamma_{h(n)} sum|x_i|) and sum_method::tree_neumaier
// (Neumaier merges, |error| <= u|s| + gamma_{h(n)+1}^2 sum|x_i|), and sum_method::exact (the correctly rounded sum,
// the same bits as the CPU's exact sum and any exact method; launch_config is ignored; n <= 2^42, docs/EXACT.md);
// the other methods are sequential by definition and have no GPU version (invalid_argument). Type pairs (input ->
// accumulation): half, bfloat16 -> float or double; float -> float or double; double -> double; the default
// accumulation is as on the CPU (float for 16-bit inputs).
// IEEE rules as on the CPU: empty sum -0.0, NaN results canonical, Inf and overflow as IEEE addition gives them.
//
// Memory: the caller provides the workspace (sum_workspace_bytes); no call allocates. The input pointer needs only
// the alignment of its element type; 16-byte aligned inputs take the vectorised path. Calls are asynchronous on
// `stream` except sum_to_host, which waits for its result. CUDA failures throw detred::cuda::cuda_error.
//
// Thread safety: any number of host threads may call these at once, each with its own workspace (a workspace is
// used by one sum at a time: two sums in flight on one workspace race) and, for overlap, its own stream; results are
// the CPU's bits whatever the interleaving (tests/cuda/test_concurrent_streams.cpp, compute-sanitizer racecheck
// clean). sum() is asynchronous on `stream`; sum_to_host and sum_host_data wait for it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "detred/cuda/launch_config.hpp"
#include "detred/reduce.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

// Bytes of device workspace that a sum of n elements needs, for every type pair, method and launch configuration
// (an upper bound: about n / 128 bytes, plus a constant). Pointers from cudaMalloc are suitably aligned.
std::size_t sum_workspace_bytes(std::uint64_t n);

namespace detail {
template <class A, class T>
void sum_on_device(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, std::size_t workspace_bytes,
                   cudaStream_t stream, sum_method method, const launch_config& config);
template <class A, class T>
A sum_to_host(const T* d_in, std::uint64_t n, void* d_workspace, std::size_t workspace_bytes, cudaStream_t stream,
              sum_method method, const launch_config& config);
template <class A, class T>
A sum_host_data(std::span<const T> host, sum_method method, const launch_config& config, std::size_t offset);
}  // namespace detail

// Writes the sum of d_in[0..n) to *d_out (device memory), asynchronously on `stream`.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void sum(const T* d_in, std::uint64_t n, accumulation_for<Acc, T>* d_out, void* d_workspace,
         std::size_t workspace_bytes, cudaStream_t stream = nullptr, sum_method method = sum_method::tree,
         const launch_config& config = {}) {
  detail::sum_on_device(d_in, n, d_out, d_workspace, workspace_bytes, stream, method, config);
}

// The same sum, returned to the host: the result is staged in the workspace's last bytes and copied back; waits for
// `stream`.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> sum_to_host(
    const T* d_in, std::uint64_t n, void* d_workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr,
    sum_method method = sum_method::tree, const launch_config& config = {}) {
  return detail::sum_to_host<accumulation_for<Acc, T>>(d_in, n, d_workspace, workspace_bytes, stream, method, config);
}

// Convenience for tools and tests, not for hot loops: copies host data to a fresh device buffer (placed `offset`
// elements past a 256-byte boundary, to exercise unaligned inputs), sums it there, frees everything and returns the
// result. Allocates on every call.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> sum_host_data(
    std::span<const T> host, sum_method method = sum_method::tree, const launch_config& config = {},
    std::size_t offset = 0) {
  return detail::sum_host_data<accumulation_for<Acc, T>>(host, method, config, offset);
}

}  // namespace detred::cuda
