// All-gather over the ranks of an NCCL communicator, in detred's call shape: the parameter gather of sharded data
// parallelism (FSDP, ZeRO), the companion of nccl::reduce_scatter (docs/DISTRIBUTED.md).
//
//   detred::nccl::all_gather(ctx, d_shard, d_full, n_shard, stream);      // d_full: P * n_shard elements
//
// d_out[r * n_shard + e] = d_in_r[e] on every rank: a copy, bit for bit. Options are all_reduce's (chunk_bytes,
// check_arguments, transport, blocks; method and algorithm are not used). Peer memory: each rank stores its shard into
// every peer's window, the ranks meet at a barrier, and each copies the shards in rank order; NCCL calls:
// ncclAllGather. d_in: n_shard elements, d_out: P * n_shard, device memory of the context's GPU; d_in may be d_out +
// rank * n_shard (in place), otherwise they must not overlap. Collective, asynchronous on `stream`, with all_reduce's
// argument check and errors.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/nccl/all_reduce.hpp"
#include "detred/nccl/context.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

namespace detred::nccl {

void all_gather(context& ctx, const float* d_in, float* d_out, std::uint64_t n_shard, cudaStream_t stream = nullptr,
                const all_reduce_options& options = {});
void all_gather(context& ctx, const bfloat16* d_in, bfloat16* d_out, std::uint64_t n_shard,
                cudaStream_t stream = nullptr, const all_reduce_options& options = {});
void all_gather(context& ctx, const half* d_in, half* d_out, std::uint64_t n_shard, cudaStream_t stream = nullptr,
                const all_reduce_options& options = {});

}  // namespace detred::nccl
