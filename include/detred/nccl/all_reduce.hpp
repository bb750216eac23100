// Element-wise reproducible all-reduce over the ranks of an NCCL communicator: the gradient all-reduce of
// data-parallel training, with results that do not depend on NCCL's algorithm, protocol, chunking or message size
// (docs/DISTRIBUTED.md).
//
// out[e] on every rank is the reduce over ranks 0, 1, ..., P-1 of in_r[e], in rank order:
// - all_reduce_mode::canonical: the canonical order over the P values (docs/ORDER.md), plain IEEE additions in float
//   (for bfloat16 inputs: exact widening, float additions, one rounding to bfloat16 at the end); bit for bit
//   detred::sum<float>(values in rank order) (rounded to bfloat16). |error| <= gamma_{h(P)} sum_r |in_r[e]|.
// - all_reduce_mode::exact: the correctly rounded sum of the P values in the output type: the same bits for any rank
//   order.
// NaN results are detred's canonical NaN; -0.0 only when every input is -0.0; Inf and overflow as IEEE gives them.
// Each element's result is a function of its P values and P alone: never of n, of chunking, of the algorithm below.
//
// Algorithm (all_reduce_algorithm::scatter_combine_gather, the default): the vector is cut into chunks, and each chunk
// into P slices; rank j receives every other rank's part of slice j (ncclSend/ncclRecv in a group, the shape of a
// reduce-scatter), combines the P values of each element in rank order with a kernel, and an ncclAllGather returns the
// combined slices to everyone: the bytes of a ring all-reduce. Chunks are pipelined: chunk k's combine (on the
// context's second stream) overlaps chunk k+1's exchange. For P == 2, exchange = all_gather does the exchange with an
// ncclAllGather instead (the same bytes). naive_all_gather (every rank gathers every full buffer, then combines: P - 1
// times the traffic per rank) gives the same bits; it is there for comparison.
//
// in and out are device memory of the context's GPU, n elements on every rank (the same n: a mismatch throws
// invalid_argument on every rank, when check_arguments is on). out may equal in (otherwise they must not overlap).
// Asynchronous on `stream` (except the argument check's small round trip, which waits for it). NCCL failures throw
// nccl_error, CUDA failures cuda_error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "detred/nccl/context.hpp"
#include "detred/types/bfloat16.hpp"

namespace detred::nccl {

enum class all_reduce_mode {
  canonical,  // the canonical order over ranks, float accumulation
  exact,      // correctly rounded
};

enum class all_reduce_algorithm {
  scatter_combine_gather,  // reduce-scatter-shaped exchange, fixed-order combine, all-gather (the bytes of a ring)
  naive_all_gather,        // all-gather every rank's whole buffer, then combine (for comparison)
};

enum class all_reduce_exchange {
  automatic,   // send_recv for now (not yet measured against all_gather: docs/PERFORMANCE.md)
  send_recv,   // ncclSend / ncclRecv in a group
  all_gather,  // P == 2 only: an ncclAllGather of each rank's part of the other rank's slice
};

struct all_reduce_options {
  all_reduce_algorithm algorithm = all_reduce_algorithm::scatter_combine_gather;
  all_reduce_exchange exchange = all_reduce_exchange::automatic;
  // Bytes of the vector handled per pipeline step (all ranks' slices together); rounded to whole vectors of 16 bytes
  // per rank. Speed only.
  std::size_t chunk_bytes = std::size_t{32} << 20;
  // All-gather a record of (n, type, mode) first and throw invalid_argument on every rank when they differ. Costs one
  // small collective and a host round trip; turn it off only where every rank is known to pass the same arguments (a
  // mismatch then hangs or corrupts, as with NCCL itself).
  bool check_arguments = true;
};

void all_reduce(context& ctx, const float* d_in, float* d_out, std::size_t n, cudaStream_t stream = nullptr,
                all_reduce_mode mode = all_reduce_mode::canonical, const all_reduce_options& options = {});
void all_reduce(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::size_t n, cudaStream_t stream = nullptr,
                all_reduce_mode mode = all_reduce_mode::canonical, const all_reduce_options& options = {});

}  // namespace detred::nccl
