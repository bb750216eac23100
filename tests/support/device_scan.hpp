// Test helper for the device sum scans (include/detred/cuda/scan.hpp): host data in, host results out.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.hpp"

namespace detred::test {

// cudaMalloc'd bytes (at least one), freed on scope exit.
struct device_scan_bytes {
  unsigned char* ptr = nullptr;
  explicit device_scan_bytes(std::size_t bytes) {
    void* p = nullptr;
    cuda::check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    ptr = static_cast<unsigned char*>(p);
  }
  ~device_scan_bytes() { cudaFree(ptr); }
  device_scan_bytes(const device_scan_bytes&) = delete;
  device_scan_bytes& operator=(const device_scan_bytes&) = delete;
};

// Copies `host` to the device at `offset` elements past a 256-byte boundary, scans it (inclusive or exclusive, in
// place when in_place and A == T) with a workspace of the size the size query gives, and returns the outputs.
// Allocates on every call; synchronous.
template <class A, class T>
std::vector<A> sum_scan_host_data(std::span<const T> host, bool exclusive, const cuda::scan_options& options = {},
                                  std::size_t offset = 0, bool in_place = false) {
  const std::size_t n = host.size();
  std::vector<A> result(n);
  device_scan_bytes input(256 + (offset + n) * sizeof(T));
  T* d_in = reinterpret_cast<T*>(input.ptr + 256) + offset;
  if (n) cuda::check(cudaMemcpy(d_in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  const bool same_buffer = in_place && std::is_same_v<A, T>;
  device_scan_bytes output(same_buffer ? 1 : 256 + (offset + n) * sizeof(A));
  A* d_out = nullptr;
  if constexpr (std::is_same_v<A, T>)
    if (same_buffer) d_out = d_in;
  if (d_out == nullptr) d_out = reinterpret_cast<A*>(output.ptr + 256) + offset;
  const auto scan = [&](void* ws, std::size_t& bytes) {
    if (exclusive)
      cuda::exclusive_sum_scan<A>(ws, bytes, static_cast<const T*>(d_in), d_out, n, nullptr, options);
    else
      cuda::inclusive_sum_scan<A>(ws, bytes, static_cast<const T*>(d_in), d_out, n, nullptr, options);
  };
  std::size_t bytes = 0;
  scan(nullptr, bytes);
  device_scan_bytes workspace(bytes);
  scan(workspace.ptr, bytes);
  if (n) cuda::check(cudaMemcpy(result.data(), d_out, n * sizeof(A), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return result;
}

}  // namespace detred::test
