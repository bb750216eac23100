// CUDA errors at detred's API boundary: every CUDA runtime call's status is checked and a failure becomes a
// detred::cuda::cuda_error carrying CUDA's own name and message. Never ignored, never exit().
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace detred::cuda {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// Throws cuda_error("<what>: <cudaErrorName>: <CUDA's message>") unless status is cudaSuccess.
void check(cudaError_t status, const char* what);

}  // namespace detred::cuda
