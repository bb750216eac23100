// The peer-memory transport of detred::nccl's collectives (docs/DISTRIBUTED.md, "Peer memory"): a symmetric NCCL
// window (ncclMemAlloc + ncclCommWindowRegister) that every rank reaches by loads and stores over NVLink, NCCL's device
// communicator with one LSA barrier a thread block (ncclDevCommCreate), and fixed-order kernels that push each rank's
// data into its peers' windows, meet at the barrier, and reduce each element's values in rank order. No NVLink
// multicast object is ever created. Internal (not installed); the NCCL device API stays in src/nccl/peer*.cu*.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace detred::nccl::detail {

// What a peer kernel does with the vector (docs/DISTRIBUTED.md states each one's data flow).
enum class peer_op {
  one_shot,        // all-reduce: every rank pushes its whole vector (m rows) to every peer, then reduces all of it
  two_shot,        // all-reduce: rank j reduces slice j (pushed to it), then every rank pulls the reduced slices
  reduce_scatter,  // rank j reduces shard j of every rank's vector
  all_gather,      // every rank pushes its shard to every peer, then copies the shards in rank order
};

enum class peer_type { f32, bf16, f16 };

struct peer_call {
  peer_op op = peer_op::one_shot;
  peer_type type = peer_type::f32;
  bool exact = false;
  const void* in = nullptr;
  void* out = nullptr;
  // one_shot, two_shot: the vector's length; reduce_scatter, all_gather: the shard's length.
  std::uint64_t n = 0;
  // one_shot only: each rank contributes `rows` vectors, in + k * row_stride (elements), k < rows; value g = r * rows +
  // k of the canonical order over P * rows values.
  int rows = 1;
  std::uint64_t row_stride = 0;
  std::size_t chunk_bytes = std::size_t{32} << 20;  // bytes of a slot per round (of the vector, or of each slice)
  unsigned blocks = 0;                              // thread blocks, 0: automatic
};

// Owns the window and the device communicator of one context. Every member that takes a communicator is collective:
// every rank calls it, in the same order, with the same arguments.
class peer_memory {
 public:
  peer_memory();
  ~peer_memory();
  peer_memory(const peer_memory&) = delete;
  peer_memory& operator=(const peer_memory&) = delete;

  // True when every rank of `comm` is load/store reachable (NCCL's LSA team is the whole communicator, at most 8
  // ranks) and NCCL's device communicator could be made; decided once, on the first call (collective), the same on
  // every rank.
  bool available(ncclComm_t comm, int ranks, int rank, cudaStream_t stream);
  // Runs the call on `stream`, growing the window first when the call needs more (collective; waits for the device).
  // Successive calls are ordered on the device (an event chains each kernel to the last).
  void run(ncclComm_t comm, const peer_call& call, cudaStream_t stream);

  struct impl;  // defined in peer.cu

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace detred::nccl::detail
