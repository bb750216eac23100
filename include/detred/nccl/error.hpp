// NCCL errors at detred::nccl's API boundary: every NCCL call's result is checked and a failure becomes a
// detred::nccl::nccl_error carrying NCCL's own messages (ncclGetErrorString and, where NCCL has one, ncclGetLastError).
// CUDA failures are detred::cuda::cuda_error; argument mismatches between ranks are detred::invalid_argument, raised on
// every rank alike (docs/DISTRIBUTED.md).
#pragma once

#include <nccl.h>

#include <stdexcept>
#include <string>

namespace detred::nccl {

class nccl_error : public std::runtime_error {
 public:
  nccl_error(ncclResult_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ncclResult_t code() const noexcept { return code_; }

 private:
  ncclResult_t code_;
};

// Throws nccl_error("detred::nccl: <what>: <ncclGetErrorString> (<ncclGetLastError>)") unless result is ncclSuccess.
void check(ncclResult_t result, const char* what, ncclComm_t comm = nullptr);

}  // namespace detred::nccl
