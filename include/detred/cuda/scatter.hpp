// Scattered and segmented sums on the GPU (detred::cuda), in the call shape of docs/API.md; the CPU twins of the same
// names (detred/scatter.hpp) take the same arguments less the workspace and the stream, and give the same bits.
//
// scatter_add and index_add are exact: each output is the correctly rounded sum of its contributions, the output's
// prior value included, rounded once (docs/SCATTER.md). Integer atomics into fixed-point levels are associative, so the
// result depends on neither the order in which the contributions arrive, nor the launch shape, nor the GPU:
// determinism::exact, the CPU's bits. IEEE behaviour as on the CPU (NaN canonical, Inf exactly at MAX + ulp/2, an
// exact zero is -0.0 only when every contribution and the prior value are -0.0).
// Out-of-range indices (negative or >= m): the contribution is skipped and counted; when scatter_options::
// d_invalid_count is set, the count is written there (device memory, one std::uint64_t) by the call. The CPU twin
// throws instead.
//
// segment_sum and reduce_by_key: options.method tree (each segment in the canonical order of its own length, the bits
// of detred::row_sum: batch-invariant) or exact (correctly rounded). Empty segments give -0.0.
//
// Types: values half, bfloat16 or float into float outputs, double into double; indices, offsets and keys
// std::int32_t or std::int64_t. All pointers are device pointers; calls are asynchronous on `stream`. Workspace: the
// size query depends on the types, n, m (and d) only (docs/SCATTER.md, "Workspace"). Throws detred::invalid_argument
// for a bad argument (naming it) and detred::cuda::cuda_error when a CUDA call fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/scatter.hpp"
#include "detred/sum_method.hpp"

namespace detred::cuda {

// The options of scatter_add and index_add. Launch fields change speed only, never bits; 0 = chosen.
struct scatter_options {
  std::uint64_t* d_invalid_count =
      nullptr;            // if set: receives the number of contributions with an index outside [0, m)
  int block_threads = 0;  // 0, or a multiple of 32 in [64, 1024]
  int grid_blocks = 0;    // 0 (enough to fill the GPU), or >= 1
};

// The options of segment_sum and reduce_by_key.
struct segment_options {
  sum_method method = sum_method::tree;  // tree (canonical) or exact
  int block_threads = 0;                 // exact: 0, or a multiple of 32 in [32, 256] (one warp a segment);
                                         // canonical: ignored
  // segment_sum, canonical: the number of values the offsets span (offsets[segments]), when the caller knows it; 0 when
  // not. A speed hint only: with it the kernel is chosen by the mean segment length (long segments: a block of 2 or 4
  // warps a segment; otherwise a warp a segment, docs/SCATTER.md), never the result.
  std::uint64_t values = 0;
};

// out[index[i]] += values[i], i < n, exactly; out has m elements. n < 2^36.
template <class T, class I>
void scatter_add(void* d_workspace, std::size_t& workspace_bytes, const T* d_values, const I* d_index,
                 scatter_output_t<T>* d_out, std::uint64_t n, std::uint64_t m, cudaStream_t stream = nullptr,
                 const scatter_options& options = {});

// out[index[i] * d + c] += source[i * d + c], i < n, c < d, exactly (PyTorch's index_add_ along dim 0 of dense
// row-major [n x d] and [m x d]). n < 2^36.
template <class T, class I>
void index_add(void* d_workspace, std::size_t& workspace_bytes, const T* d_source, const I* d_index,
               scatter_output_t<T>* d_out, std::uint64_t n, std::uint64_t m, std::uint64_t d,
               cudaStream_t stream = nullptr, const scatter_options& options = {});

// out[s] = sum of values[offsets[s] .. offsets[s + 1]), s < segments (offsets: segments + 1 device values,
// non-decreasing; not checked on the device). Needs no workspace (the query answers 0).
template <class T, class I>
void segment_sum(void* d_workspace, std::size_t& workspace_bytes, const T* d_values, const I* d_offsets,
                 scatter_output_t<T>* d_out, std::uint64_t segments, cudaStream_t stream = nullptr,
                 const segment_options& options = {});

// The runs of equal consecutive keys of keys[0 .. n): unique_keys[r], sums[r] (run r's sum by options.method) and
// *d_run_count (device memory) = the number of runs; unique_keys and sums hold n elements.
template <class T, class I>
void reduce_by_key(void* d_workspace, std::size_t& workspace_bytes, const I* d_keys, const T* d_values,
                   I* d_unique_keys, scatter_output_t<T>* d_sums, std::uint64_t* d_run_count, std::uint64_t n,
                   cudaStream_t stream = nullptr, const segment_options& options = {});

}  // namespace detred::cuda
