// Test helpers of the GPU row, column and norm tests (tests/rows/*_cuda.cpp, bench/bench_rows.cu): host vectors to
// device buffers and back, the workspace idiom run as a caller runs it, and the quick mode for compute-sanitizer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdlib>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/workspace.hpp"
#include "tests/support/device_array.hpp"

namespace detred::test {

// Copies h into d (d holds at least h.size() elements, from d.ptr + offset) and returns the device copy's start.
template <class T>
T* to_device(device_array<T>& d, const std::vector<T>& h, std::size_t offset = 0) {
  if (!h.empty())
    cuda::check(cudaMemcpy(d.ptr + offset, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "copy in");
  return d.ptr + offset;
}

// Runs call(d_workspace, workspace_bytes) as a caller of the workspace idiom does: the size query (d_workspace null),
// then the call with a fresh buffer of the bytes it gave (at least one byte, so that the pointer is not null).
// Returns the bytes the query gave.
template <class Call>
std::size_t with_workspace(const Call& call) {
  std::size_t bytes = ~std::size_t{0};
  call(static_cast<void*>(nullptr), bytes);
  device_array<unsigned char> ws(bytes > 0 ? bytes : 1);
  std::size_t given = bytes;
  call(static_cast<void*>(ws.ptr), given);
  return bytes;
}

// DETRED_GPU_TEST_QUICK=1 (for compute-sanitizer, which slows kernels 10-100x): fewer launches, types and sizes.
inline bool rows_quick() {
  const char* q = std::getenv("DETRED_GPU_TEST_QUICK");
  return q != nullptr && q[0] == '1';
}

}  // namespace detred::test
