// Generic device-wide scans with a user's device operator, for code compiled by nvcc (the kernels are templates).
// Same contract as the CPU's detred::inclusive_scan / exclusive_scan (include/detred/scan.hpp), and the same operator
// arguments in the same order: out[i] is bit for bit the canonical reduce of x[0..i] (inclusive) or x[0..i)
// (exclusive), for every n, scan_options, element-aligned pointer and GPU, given an op that computes the same bits on
// host and device (e.g. __host__ __device__ with plain IEEE operations; no fast-math, FMA contraction off).
// Reproducibility: cpu_gpu.
//
// op(left, right) -> T must be associative; commutativity is not needed (operands are never swapped). T: trivially
// copyable and default-constructible, sizeof a multiple of 4. In-place (d_out == d_in) allowed; any other overlap is
// undefined. n == 0 writes nothing.
//
// Operator arguments as std::inclusive_scan(first, last, d_first, op) and std::exclusive_scan(first, last, d_first,
// init, op), with one difference: detred's exclusive scan takes an `identity` of op, written as out[0] and never
// combined with an input (std's `init` is also the left operand of every later output); the inclusive scan needs
// none.
//
// The call shape of docs/API.md (workspace idiom, stream, scan_options) and the errors of detred/cuda/scan.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/detail/scan_kernel.cuh"
#include "detred/cuda/scan.hpp"
#include "detred/cuda/workspace.hpp"

namespace detred::cuda {

namespace detail {
struct identity_cast {
  template <class T>
  __device__ __forceinline__ T operator()(const T& x) const {
    return x;
  }
};
}  // namespace detail

// d_out[i] = op-reduce of d_in[0..i] in the canonical order. See the file comment.
template <class T, class Op>
void inclusive_scan(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_out, std::uint64_t n, Op op,
                    cudaStream_t stream = nullptr, const scan_options& options = {}) {
  constexpr const char* what = "cuda::inclusive_scan";
  detail::check_scan_options(options, what);
  if (detail::workspace_query(d_workspace, workspace_bytes, detail::scan_workspace_size(n, sizeof(T)), what)) return;
  detail::run_fenwick_scan<T>(d_workspace, d_in, d_out, n, stream, options, detail::identity_cast{}, op,
                              detail::identity_cast{}, false, T{}, what);
}

// d_out[0] = identity, d_out[i] = op-reduce of d_in[0..i) in the canonical order. See the file comment.
template <class T, class Op>
void exclusive_scan(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, T* d_out, std::uint64_t n,
                    T identity, Op op, cudaStream_t stream = nullptr, const scan_options& options = {}) {
  constexpr const char* what = "cuda::exclusive_scan";
  detail::check_scan_options(options, what);
  if (detail::workspace_query(d_workspace, workspace_bytes, detail::scan_workspace_size(n, sizeof(T)), what)) return;
  detail::run_fenwick_scan<T>(d_workspace, d_in, d_out, n, stream, options, detail::identity_cast{}, op,
                              detail::identity_cast{}, true, identity, what);
}

}  // namespace detred::cuda
