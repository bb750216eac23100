// Element-wise reproducible reduce-scatter over the ranks of an NCCL communicator: the gradient reduction of sharded
// data parallelism (FSDP, ZeRO), with all_reduce's element-wise contract (docs/DISTRIBUTED.md).
//
//   detred::nccl::reduce_scatter(ctx, d_full, d_shard, n_shard, stream);   // d_full: P * n_shard elements
//
// Rank r receives shard r: d_out[e] = the sum over ranks 0, 1, ..., P-1 of d_in_q[r * n_shard + e], e < n_shard, in
// rank order: sum_method::tree (the default) gives the canonical order over the P values in float (16-bit inputs
// widened exactly, one rounding to the input type), bit for bit detred::sum<float> of the values in rank order, and
// so bit for bit element r * n_shard + e of nccl::all_reduce of the same vectors; sum_method::exact the correctly
// rounded sum. NaN results canonical; Inf and overflow as IEEE addition gives them. Reproducibility: gpu_to_gpu and
// cpu_gpu; never a function of n_shard, the chunking, the transport or the grid.
//
// Options are all_reduce's (method, chunk_bytes, check_arguments, transport, blocks; algorithm is not used). Peer
// memory: each rank stores shard j of its vector into rank j's window, the ranks meet at a barrier, and rank j reduces
// its shard in rank order: (P - 1) * n_shard elements out of each rank, one kernel. NCCL calls: ncclSend/ncclRecv of
// the shards, then the combine kernel, per chunk.
//
// d_in: P * n_shard elements, d_out: n_shard elements, device memory of the context's GPU; d_out may be
// d_in + rank * n_shard (in place), otherwise they must not overlap. Collective, asynchronous on `stream`, with
// all_reduce's argument check and errors.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/nccl/all_reduce.hpp"
#include "detred/nccl/context.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

namespace detred::nccl {

void reduce_scatter(context& ctx, const float* d_in, float* d_out, std::uint64_t n_shard, cudaStream_t stream = nullptr,
                    const all_reduce_options& options = {});
void reduce_scatter(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::uint64_t n_shard,
                    cudaStream_t stream = nullptr, const all_reduce_options& options = {});
void reduce_scatter(context& ctx, const half* d_in, half* d_out, std::uint64_t n_shard, cudaStream_t stream = nullptr,
                    const all_reduce_options& options = {});

}  // namespace detred::nccl
