// detred::nccl::context's internals (include/detred/nccl/context.hpp) and the argument record every call all-gathers
// first (docs/DISTRIBUTED.md, "Errors").
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "detred/nccl/context.hpp"
#include "src/distributed/call_signature.hpp"
#include "src/nccl/peer.hpp"

namespace detred::nccl {

namespace detail {

// Device memory of the context's GPU that grows on demand and is kept for the next call.
class device_buffer {
 public:
  device_buffer() = default;
  ~device_buffer();
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  // At least `bytes` bytes (the old contents are dropped when it grows).
  unsigned char* reserve(std::size_t bytes);

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Every call's first collective: one record a rank (src/distributed/call_signature.hpp).
using distributed::record_bytes;
using distributed::record_error_offset;
using distributed::record_payload_offset;

}  // namespace detail

struct context::state {
  ncclComm_t comm = nullptr;
  int rank = 0, size = 1, device = 0;
  cudaStream_t side = nullptr;  // the combine kernels of a pipelined all-reduce
  cudaEvent_t exchanged[2] = {}, combined[2] = {};
  detail::device_buffer records, workspace, staging, roots;
  detail::peer_memory peer;       // the symmetric window and device communicator of the peer-memory transport
  unsigned char* host = nullptr;  // pinned: size * record_bytes (and the gathered roots)
  std::size_t host_bytes = 0;

  state(ncclComm_t c);
  ~state();
  // invalid_argument unless the context's device is current.
  void require_device(const char* function) const;
  // Pinned host memory of at least `bytes`.
  unsigned char* host_buffer(std::size_t bytes);
  // This rank's record slot on the device (its payload at + record_payload_offset).
  unsigned char* my_record();
  // Writes `mine` (and `local_error`, this rank's own argument error, empty if none) into this rank's slot,
  // all-gathers the records on `stream` and waits. Then, the same on every rank: invalid_argument with the lowest
  // rank's message when any rank had a local error, else check_signatures (invalid_argument on a mismatch). Returns
  // the records on the host, in rank order. Where there is no local error, the device slot's payload (the exact
  // state written there before) is left as it is.
  const unsigned char* exchange_records(const char* function, distributed::call_signature mine,
                                        const std::string& local_error, cudaStream_t stream, bool same_count);
};

}  // namespace detred::nccl
