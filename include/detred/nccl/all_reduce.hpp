// Element-wise reproducible all-reduce over the ranks of an NCCL communicator: the gradient all-reduce of
// data-parallel training, with results that do not depend on NCCL's algorithm, protocol, chunking or message size
// (docs/DISTRIBUTED.md).
//
//   detred::nccl::context ctx(comm);                                    // once per communicator and rank
//   detred::nccl::all_reduce(ctx, d_grad, d_grad, n, stream);           // in place, canonical order over ranks
//   detred::nccl::all_reduce(ctx, d_in, d_out, n, stream, {.method = detred::sum_method::exact});
//
// The call follows detred's device call shape (docs/API.md) with the context in the workspace's place: the context
// owns the staging memory, grown on demand and kept for the next call, so there is no size query.
//
// out[e] on every rank is the sum over ranks 0, 1, ..., P-1 of in_r[e], in rank order:
// - sum_method::tree (the default): the canonical order over the P values (docs/ORDER.md), plain IEEE additions in
//   float (bfloat16 and half inputs: exact widening, float additions, one rounding to the input type at the end); bit
//   for bit detred::sum<float>(values in rank order) (rounded to the input type). |error| <= gamma_{h(P)} sum_r
//   |in_r[e]|.
// - sum_method::exact: the correctly rounded sum of the P values in the output type: the same bits for any rank
//   order.
// Other methods: invalid_argument. NaN results are detred's canonical NaN; -0.0 only when every input is -0.0; Inf and
// overflow as IEEE gives them. Each element's result is a function of its P values and P alone: never of n, of the
// chunking, of NCCL's algorithm or of the grid. Reproducibility: gpu_to_gpu (and cpu_gpu: the CPU's rank-order sum).
//
// Transport (options.transport; docs/DISTRIBUTED.md, "Peer memory"):
// - peer memory (where every rank reaches every other by loads and stores, one NVLink domain: the default there): a
//   symmetric NCCL window that the context owns (grown on demand, kept), NCCL's device communicator and its LSA
//   barriers, and one fixed-order kernel a call. One-shot: every rank stores its vector into each peer's window, the
//   ranks meet at a barrier, and each reduces all P values of every element. Two-shot: rank j receives slice j from
//   every peer, reduces it, and every rank then loads the reduced slices from their owners. No NVLink multicast.
// - NCCL calls (elsewhere, or when asked): the vector is cut into chunks of options.chunk_bytes, each chunk into P
//   slices; rank j receives every other rank's part of slice j (ncclSend/ncclRecv in a group), combines the P values
//   of each element in rank order with a kernel, and an ncclAllGather returns the combined slices to everyone.
// Either way each element is reduced alone, in the same order: the transport, the shape and the chunking never change
// a bit.
//
// in and out are device memory of the context's GPU, n elements on every rank; out may equal in (otherwise they must
// not overlap). Asynchronous on `stream` (except the first call on a context and each growth of the window, which are
// collective NCCL setup calls and wait for the device). NCCL failures throw nccl_error, CUDA failures cuda_error.
// Collective: every rank calls it with the same type, n and options. Successive peer-memory calls on one context run
// in call order on the device, whatever their streams.
//
// Argument check (options.check_arguments, on by default; docs/DISTRIBUTED.md, "Errors"). What is compared between
// the ranks: n, the element type, the call (all_reduce, reduce_scatter, all_gather, the micro-batch reduce and its
// row count; nccl::sum), the method and the options that shape the messages (chunk_bytes, transport, algorithm,
// blocks, check_on_host); a rank's own argument errors (a null pointer, a method the collectives lack) are found
// there. What is not: a rank that makes no call at all (it hangs, as with NCCL), and check_arguments itself, which
// must be the same on every rank. How and when it is reported:
// - on the device, where the peer-memory window exists (every call after a context's first, where the ranks reach
//   each other by loads and stores): each rank's kernel publishes a 32-byte descriptor of its call into its peers'
//   windows and compares theirs with its own before its first barrier, at no host cost. On a mismatch no kernel
//   meets a barrier (never a hang): every rank's output of that call is canonical NaN, the context fails, and the
//   first later call on it (or context::synchronize) throws invalid_argument on every rank, naming the difference; so
//   does every call after, until the context is destroyed (on every rank; the communicator stays usable). A rank
//   whose own arguments are invalid throws at once and withdraws from the call, so that its peers fail as above.
//   Calls that run no peer kernel check with a one-thread kernel: those followed by NCCL calls (the NCCL-calls
//   transport) and window growths wait for it and throw at the call; n = 0 does not wait.
// - on the host, without the window (the first call on a context; ranks that are not load/store reachable) or with
//   options.check_on_host: each rank's record is all-gathered and compared before any data moves, and every rank
//   throws invalid_argument at this call, with the lowest rank's message for a rank's own argument error; the context
//   stays usable. Costs a collective and a host round trip (about 30 us).
// With check_arguments off, nothing is compared: a mismatch hangs or corrupts, as with NCCL itself, and a rank's own
// argument errors throw on that rank only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/nccl/context.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

namespace detred::nccl {

// How the data moves; never changes a bit.
enum class transport {
  automatic,    // peer_memory where every rank is load/store reachable (one NVLink domain), else nccl_calls
  peer_memory,  // NCCL symmetric window and fixed-order kernels; invalid_argument where the ranks cannot reach it
  nccl_calls,   // ncclSend/ncclRecv, a combine kernel and ncclAllGather per chunk
};

// The peer-memory kernel's data flow; never changes a bit.
enum class peer_algorithm {
  automatic,  // one_shot up to 512 KiB (on 2 ranks up to 16 MiB), else two_shot
  one_shot,   // every rank receives every vector and reduces all of it: (P - 1) * n elements out of each rank
  two_shot,   // reduce-scatter then all-gather by stores and loads: 2 (P - 1) / P * n elements out of each rank
};

struct all_reduce_options {
  // sum_method::tree (the canonical order over ranks) or sum_method::exact (correctly rounded).
  sum_method method = sum_method::tree;
  // Bytes of the vector handled per pipeline step (all ranks' slices together), >= 1 and < 2^48; rounded to whole
  // 16-byte vectors per rank. Speed only, never bits. The peer-memory kernels take at most 8 MiB a step for the
  // all-reduce and 16 MiB for the reduce-scatter (the fastest measured; smaller values are honoured). The context
  // keeps a window of about 3 * the step (one-shot on P ranks: 3 (P - 1) * the step) at most, less for smaller vectors.
  std::size_t chunk_bytes = std::size_t{32} << 20;
  nccl::transport transport = nccl::transport::automatic;
  peer_algorithm algorithm = peer_algorithm::automatic;
  // Thread blocks of the peer-memory kernel, 0 (automatic) to 128. Speed only.
  unsigned blocks = 0;
  // Compare the ranks' arguments (see "Argument check" above): on the device, at no host cost, where the peer-memory
  // window exists; on the host otherwise. Must be the same on every rank.
  bool check_arguments = true;
  // Compare them on the host at every call instead (all-gathered records, a host round trip): every rank throws at
  // the mismatched call itself and the context stays usable. For debugging; must be the same on every rank.
  bool check_on_host = false;
};

void all_reduce(context& ctx, const float* d_in, float* d_out, std::uint64_t n, cudaStream_t stream = nullptr,
                const all_reduce_options& options = {});
void all_reduce(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::uint64_t n, cudaStream_t stream = nullptr,
                const all_reduce_options& options = {});
void all_reduce(context& ctx, const half* d_in, half* d_out, std::uint64_t n, cudaStream_t stream = nullptr,
                const all_reduce_options& options = {});

}  // namespace detred::nccl
