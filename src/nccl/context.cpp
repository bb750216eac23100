// detred::nccl::context and nccl_error (include/detred/nccl/context.hpp, error.hpp).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "detred/cuda/error.hpp"
#include "detred/errors.hpp"
#include "detred/nccl/context.hpp"
#include "detred/nccl/error.hpp"
#include "src/nccl/state.hpp"

namespace detred::nccl {

void check(ncclResult_t result, const char* what, ncclComm_t comm) {
  if (result == ncclSuccess) return;
  std::string message = std::string("detred::nccl: ") + what + ": " + ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') message += std::string(" (") + last + ")";
  throw nccl_error(result, message);
}

namespace detail {
device_buffer::~device_buffer() { cudaFree(ptr_); }

unsigned char* device_buffer::reserve(std::size_t bytes) {
  if (bytes > bytes_) {
    if (ptr_) cuda::check(cudaFree(ptr_), "detred::nccl: cudaFree");
    ptr_ = nullptr;
    bytes_ = 0;
    cuda::check(cudaMalloc(&ptr_, bytes), "detred::nccl: cudaMalloc");
    bytes_ = bytes;
  }
  return static_cast<unsigned char*>(ptr_);
}
}  // namespace detail

context::state::state(ncclComm_t c) : comm(c) {
  check(ncclCommCount(comm, &size), "ncclCommCount", comm);
  check(ncclCommUserRank(comm, &rank), "ncclCommUserRank", comm);
  check(ncclCommCuDevice(comm, &device), "ncclCommCuDevice", comm);
  require_device("nccl::context");
  cuda::check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "detred::nccl: cudaStreamCreate");
  for (int i = 0; i < 2; ++i) {
    cuda::check(cudaEventCreateWithFlags(&exchanged[i], cudaEventDisableTiming), "detred::nccl: cudaEventCreate");
    cuda::check(cudaEventCreateWithFlags(&combined[i], cudaEventDisableTiming), "detred::nccl: cudaEventCreate");
  }
  records.reserve(std::size_t(size) * detail::record_bytes);
  host_buffer(std::size_t(size) * detail::record_bytes);
}

context::state::~state() {
  for (int i = 0; i < 2; ++i) {
    if (exchanged[i]) cudaEventDestroy(exchanged[i]);
    if (combined[i]) cudaEventDestroy(combined[i]);
  }
  if (side) cudaStreamDestroy(side);
  if (host) cudaFreeHost(host);
}

void context::state::require_device(const char* function) const {
  int current = -1;
  cuda::check(cudaGetDevice(&current), "detred::nccl: cudaGetDevice");
  if (current != device)
    detred::detail::throw_invalid(function, "the communicator's device is " + std::to_string(device) + " but device " +
                                                std::to_string(current) + " is current; call cudaSetDevice first");
}

unsigned char* context::state::host_buffer(std::size_t bytes) {
  if (bytes > host_bytes) {
    if (host) cuda::check(cudaFreeHost(host), "detred::nccl: cudaFreeHost");
    host = nullptr;
    host_bytes = 0;
    void* p = nullptr;
    cuda::check(cudaMallocHost(&p, bytes), "detred::nccl: cudaMallocHost");
    host = static_cast<unsigned char*>(p);
    host_bytes = bytes;
  }
  return host;
}

unsigned char* context::state::my_record() {
  return records.reserve(std::size_t(size) * detail::record_bytes) + std::size_t(rank) * detail::record_bytes;
}

const unsigned char* context::state::exchange_records(const char* function, distributed::call_signature mine,
                                                      const std::string& local_error, cudaStream_t stream,
                                                      bool same_count) {
  using detail::record_bytes;
  mine.ranks = std::uint32_t(size);
  unsigned char* h = host_buffer(std::size_t(size) * record_bytes);
  // Without an error only the header goes up: the device slot's payload may hold the exact state already.
  const std::size_t upload = distributed::write_record(h + std::size_t(rank) * record_bytes, mine, local_error);
  unsigned char* d = records.reserve(std::size_t(size) * record_bytes);
  cuda::check(
      cudaMemcpyAsync(my_record(), h + std::size_t(rank) * record_bytes, upload, cudaMemcpyHostToDevice, stream),
      "detred::nccl: cudaMemcpyAsync (argument record)");
  check(ncclAllGather(my_record(), d, record_bytes, ncclUint8, comm, stream), "ncclAllGather (argument check)", comm);
  cuda::check(cudaMemcpyAsync(h, d, std::size_t(size) * record_bytes, cudaMemcpyDeviceToHost, stream),
              "detred::nccl: cudaMemcpyAsync (argument records)");
  cuda::check(cudaStreamSynchronize(stream), "detred::nccl: cudaStreamSynchronize (argument check)");
  distributed::check_records(function, h, std::size_t(size), same_count);
  return h;
}

context::context(ncclComm_t comm) : state_(std::make_unique<state>(comm)) {}
context::~context() = default;
context::context(context&&) noexcept = default;
context& context::operator=(context&&) noexcept = default;
ncclComm_t context::comm() const { return state_->comm; }
int context::rank() const { return state_->rank; }
int context::size() const { return state_->size; }
int context::device() const { return state_->device; }
void context::synchronize(cudaStream_t stream) {
  state_->require_device("nccl::context::synchronize");
  state_->peer.synchronize("nccl::context::synchronize", stream);
}
context::state& context::internals() { return *state_; }

}  // namespace detred::nccl
