// cudaMalloc'd memory, freed on scope exit (also when a later call throws): the host conveniences that copy user data
// to the device (sum_host_data, the scan's host_data calls) allocate through it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "detred/cuda/error.hpp"

namespace detred::cuda::detail {

class device_buffer {
 public:
  explicit device_buffer(std::size_t bytes) { check(cudaMalloc(&ptr_, bytes ? bytes : 1), "cudaMalloc"); }
  ~device_buffer() { cudaFree(ptr_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

}  // namespace detred::cuda::detail
