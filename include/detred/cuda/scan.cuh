// Generic device-wide scans with a user's device operator, for code compiled by nvcc (the kernels are templates).
// Same contract as the CPU's detred::inclusive_scan / exclusive_scan (include/detred/scan.hpp): out[i] is bit for
// bit the canonical reduce of x[0..i] (inclusive) or x[0..i) (exclusive, out[0] = identity, never combined with an
// input), for every n, launch configuration, element-aligned pointer and GPU, given an op that computes the same
// bits on host and device (e.g. __host__ __device__ with plain IEEE operations; no fast-math, FMA contraction off).
// op(left, right) -> T must be associative; commutativity is not needed (operands are never swapped). T: trivially
// copyable, sizeof a multiple of 4. In-place (d_out == d_in) allowed. Workspace: scan_workspace_bytes(n, sizeof(T)).
#pragma once

#include "detred/cuda/scan.hpp"
#include "detred/cuda/detail/scan_kernel.cuh"

namespace detred::cuda {

namespace detail {
struct identity_cast {
  template <class T>
  __device__ __forceinline__ T operator()(const T& x) const {
    return x;
  }
};
}  // namespace detail

template <class T, class Op>
void inclusive_scan(const T* d_in, T* d_out, std::uint64_t n, Op op, void* d_workspace, std::size_t workspace_bytes,
                    cudaStream_t stream = nullptr, const scan_launch_config& config = {}) {
  detail::run_fenwick_scan<T>(d_in, d_out, n, d_workspace, workspace_bytes, stream, config, detail::identity_cast{}, op,
                              detail::identity_cast{}, false, T{});
}

template <class T, class Op>
void exclusive_scan(const T* d_in, T* d_out, std::uint64_t n, T identity, Op op, void* d_workspace,
                    std::size_t workspace_bytes, cudaStream_t stream = nullptr, const scan_launch_config& config = {}) {
  detail::run_fenwick_scan<T>(d_in, d_out, n, d_workspace, workspace_bytes, stream, config, detail::identity_cast{}, op,
                              detail::identity_cast{}, true, identity);
}

}  // namespace detred::cuda
