// Test helpers for GPU tests: whether a device is present, and cudaMalloc'd memory freed on scope exit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"

namespace detred::test {

inline bool have_gpu() { return cuda::device_count() > 0; }

template <class T>
struct device_array {
  T* ptr = nullptr;
  explicit device_array(std::size_t n) { cuda::check(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc"); }
  ~device_array() { cudaFree(ptr); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

}  // namespace detred::test
