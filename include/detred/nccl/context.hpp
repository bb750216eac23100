// detred::nccl::context: what detred's NCCL calls need beside the caller's communicator: its rank, size and device,
// and device buffers (workspace, staging, a record of each rank's arguments, and the NCCL symmetric window, device
// communicator and argument-check reports of the peer-memory collectives), a second stream and events, all grown on
// demand and kept for the next call. Destroy a context on every rank after its last call has ended: releasing the
// window is collective. One context per communicator and rank; not thread-safe (one call at a time on a context, as on
// an NCCL communicator). The communicator stays the caller's: the context never frees it.
//
// In detred's device call shape (docs/API.md) the context takes the workspace's place: nccl::sum(ctx, d_in, n_local,
// stream, options), nccl::all_reduce(ctx, d_in, d_out, n, stream, options). It owns the device memory those calls
// need, so they have no size query and no caller-provided workspace.
//
// Every call must be made with the context's device current (cudaSetDevice); otherwise invalid_argument.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>

#include "detred/nccl/error.hpp"

namespace detred::nccl {

class context {
 public:
  explicit context(ncclComm_t comm);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  context(context&&) noexcept;
  context& operator=(context&&) noexcept;

  // Waits for every call made on `stream` and on this context so far, then throws invalid_argument when the device
  // argument check found ranks whose calls differed (nccl/all_reduce.hpp, "Argument check"): the context has failed.
  // Not collective. Calls on a failed context throw the same error without it.
  void synchronize(cudaStream_t stream = nullptr);

  ncclComm_t comm() const;
  int rank() const;
  int size() const;
  int device() const;

  struct state;
  state& internals();  // for detred's own sources

 private:
  std::unique_ptr<state> state_;
};

}  // namespace detred::nccl
