// What every device call of detred shares (docs/API.md): the workspace idiom and the one helper that brings results
// to the host.
//
// Workspace idiom (CUB's two-phase call): every device call takes (void* d_workspace, std::size_t& workspace_bytes)
// first. With d_workspace == nullptr it writes the bytes it needs to workspace_bytes and returns without any work;
// otherwise it uses those bytes and throws invalid_argument when workspace_bytes is smaller than it needs. A size
// query never answers less than min_workspace_bytes, even for a call that uses no workspace: an allocation of the
// answer is then never null, so the call that follows the query is never mistaken for another query.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/errors.hpp"

namespace detred::cuda {

// Copies one value from device memory and waits for `stream` (the copy is ordered after the work already enqueued
// on it). Throws cuda_error on a CUDA failure.
template <class R>
R to_host(const R* d_value, cudaStream_t stream = nullptr) {
  if (d_value == nullptr) detred::detail::throw_invalid("cuda::to_host", "d_value is null");
  R value{};
  check(cudaMemcpyAsync(&value, d_value, sizeof(R), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return value;
}

// Copies `count` values from device memory and waits for `stream`.
template <class R>
std::vector<R> to_host(const R* d_values, std::uint64_t count, cudaStream_t stream = nullptr) {
  std::vector<R> values(count);
  if (count == 0) return values;
  if (d_values == nullptr) detred::detail::throw_invalid("cuda::to_host", "d_values is null");
  check(cudaMemcpyAsync(values.data(), d_values, count * sizeof(R), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return values;
}

// The least a size query answers (see the file comment).
inline constexpr std::size_t min_workspace_bytes = 16;

namespace detail {

// The workspace idiom in one place. Returns true when the call is a size query (d_workspace null): `needed` has been
// written to workspace_bytes (at least min_workspace_bytes) and the caller must return without work. Otherwise checks
// that the caller's bytes suffice (invalid_argument naming `what` if not) and returns false.
inline bool workspace_query(void* d_workspace, std::size_t& workspace_bytes, std::size_t needed, const char* what) {
  if (d_workspace == nullptr) {
    workspace_bytes = needed < min_workspace_bytes ? min_workspace_bytes : needed;
    return true;
  }
  if (workspace_bytes < needed)
    detred::detail::throw_invalid(what, "workspace_bytes is smaller than the size query gives");
  return false;
}

}  // namespace detail
}  // namespace detred::cuda
