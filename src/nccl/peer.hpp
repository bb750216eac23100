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
#include <string>

namespace detred::nccl::detail {

// What a peer kernel does with the vector (docs/DISTRIBUTED.md states each one's data flow).
enum class peer_op {
  one_shot,        // all-reduce: every rank pushes its whole vector (m rows) to every peer, then reduces all of it
  two_shot,        // all-reduce: rank j reduces slice j (pushed to it), then every rank pulls the reduced slices
  reduce_scatter,  // rank j reduces shard j of every rank's vector
  all_gather,      // every rank pushes its shard to every peer, then copies the shards in rank order
};

enum class peer_type { f32, bf16, f16 };

// What a rank says about one call, compared between the ranks on the device (docs/DISTRIBUTED.md, "Errors"): the
// count, the operation (the call, its method and row count), the element types and the options that shape the
// messages. Every field must be equal on every rank; n is 0 where counts may differ (nccl::sum).
struct call_descriptor {
  std::uint64_t n = 0;
  std::uint32_t operation = 0;
  std::uint32_t types = 0;
  std::uint64_t options = 0;
};

// The operation a rank publishes when it will not run the call (its own arguments are invalid, or its context has
// failed): every peer then sees a mismatch and none waits.
inline constexpr std::uint32_t withdrawn_operation = 0xFFFFFFFFu;

// A mismatch found on the device, in mapped pinned memory: the peer whose descriptor differed and the two
// descriptors' words (sequence number, n, operation and types with the window's history, options).
struct check_report {
  std::uint32_t raised;
  std::int32_t peer;
  std::uint32_t every_rank_stopped;  // every rank's descriptor came from a handshake that waits on the host
  std::uint32_t unused;
  std::uint64_t mine[4], theirs[4];
};

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
  // The device check: when set, the kernel publishes `descriptor` to every peer, compares the peers' with it after
  // its first exchange and, on a mismatch, writes canonical NaN to its output and raises the failure report instead
  // of meeting the peers at a barrier.
  bool check = false;
  call_descriptor descriptor;
  const char* function = "";  // for the messages of a mismatch found on the host side of the call
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
  // Runs the call on `stream`, growing the window first when the call needs more (collective; waits for the device;
  // with call.check, the ranks' descriptors are compared first, and a mismatch throws invalid_argument instead).
  // Successive calls are ordered on the device (an event chains each kernel to the last).
  void run(ncclComm_t comm, const peer_call& call, cudaStream_t stream);

  // Whether the window exists (after the first call that used available() and found the transport).
  bool has_window() const;
  // The device check without a data kernel, for calls that move no data through the window (n = 0, the NCCL-calls
  // transport, nccl::sum): publishes `descriptor` to every peer and compares theirs with it. wait = false: publish
  // only (a withdrawn call). stop = true: waits for the device and throws invalid_argument on a mismatch (the context
  // stays usable when every rank stopped at this call, and fails otherwise); otherwise a mismatch raises the failure
  // report.
  void handshake(const char* function, const call_descriptor& descriptor, bool wait, bool stop, cudaStream_t stream);
  // Throws invalid_argument when a kernel of this context found a mismatch (or one was reported before): the context
  // has failed. The failing call first withdraws (publishes withdrawn_operation), so that no peer waits for it.
  void throw_if_failed(const char* function, cudaStream_t stream);
  // Marks the context failed (every later checked call withdraws and throws invalid_argument with `why`).
  void fail(const std::string& why);
  // Waits for every call made on this context so far, then throw_if_failed.
  void synchronize(const char* function, cudaStream_t stream);

  struct impl;  // defined in peer.cu

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace detred::nccl::detail
