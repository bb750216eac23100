// Device-wide sums on the GPU (docs/API.md has the call shape every family shares).
//
// Order and bits: sum_method::tree and tree_neumaier combine in the canonical order (docs/ORDER.md): bit for bit the
// result detred::sum gives on the CPU with the same method, for every n, launch shape, pointer alignment and GPU
// (reproducibility `cpu_gpu`, detred/determinism.hpp). sum_method::exact is correctly rounded (`exact`): the same bits
// as the CPU's exact sum, n <= 2^42 (docs/EXACT.md). The other methods are sequential by definition and have no GPU
// version (invalid_argument).
// Error bounds: tree |error| <= gamma_{h(n)} sum|x_i|; tree_neumaier |error| <= u|s| + gamma_{h(n)+1}^2 sum|x_i|;
// exact: correctly rounded.
// IEEE behaviour as on the CPU: the empty sum is -0.0, a NaN result is the canonical NaN, Inf and overflow as IEEE
// addition gives them (exact: as the correctly rounded sum gives them, docs/EXACT.md).
// Type pairs (input -> accumulation): half, bfloat16 -> float or double; float -> float or double; double -> double;
// the default accumulation is as on the CPU (float for 16-bit inputs).
//
// Workspace: the caller's (the size query answers a function of n and the method; no call allocates). The input needs
// only the alignment of its element type; 16-byte aligned inputs take the vectorised path.
// Results: written to *d_out (device memory) asynchronously on `stream`; cuda::to_host (detred/cuda/workspace.hpp)
// brings one back. CUDA failures throw detred::cuda::cuda_error; bad arguments detred::invalid_argument.
// Thread safety: any number of host threads may call at once, each with its own workspace (a workspace serves one sum
// in flight at a time) and, for overlap, its own stream; results are the CPU's bits whatever the interleaving
// (tests/cuda/test_concurrent_streams.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/workspace.hpp"
#include "detred/reduce.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

// How a sum is computed. The launch fields change speed only, never bits; 0 means "chosen from the device's tuning"
// (include/detred/cuda/detail/tuning.hpp); a field out of range throws invalid_argument. sum_method::exact ignores the
// launch fields (its bits cannot depend on them either).
struct sum_options {
  sum_method method = sum_method::tree;
  // Threads per block of the chunk kernel: a multiple of 32 in [32, 256]. 0: 256 on a standard-class device (H100),
  // 128 on a high-bandwidth one (H200); small inputs run on one-warp blocks.
  int block_threads = 0;
  // Blocks of the chunk kernel; warps take chunks grid-stride. 0: one chunk per warp.
  int grid_blocks = 0;
  // Warp tiles (complete subtrees of 32 rows x 32 lanes x 16 bytes) per chunk, the unit one warp reduces: 1, 2, 4, 8
  // or 16. 0: 16 for large inputs, fewer for small ones (until the device's resident warps get two chunks each).
  int tiles_per_chunk = 0;
};

namespace detail {
// Bytes of workspace a sum of n elements with these options needs, for every type pair (about n / 128 bytes for the
// tree methods, plus a constant). Throws invalid_argument for an option out of range.
std::size_t sum_workspace_size(std::uint64_t n, const sum_options& options);

template <class A, class T>
void sum_on_device(void* d_workspace, std::size_t workspace_bytes, const T* d_in, A* d_out, std::uint64_t n,
                   cudaStream_t stream, const sum_options& options);
}  // namespace detail

// Writes the sum of d_in[0..n) to *d_out (device memory), asynchronously on `stream`. With d_workspace null: writes
// the bytes it needs to workspace_bytes and returns, enqueuing nothing.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void sum(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, accumulation_for<Acc, T>* d_out,
         std::uint64_t n, cudaStream_t stream = nullptr, const sum_options& options = {}) {
  if (detail::workspace_query(d_workspace, workspace_bytes, detail::sum_workspace_size(n, options), "cuda::sum"))
    return;
  detail::sum_on_device(d_workspace, workspace_bytes, d_in, d_out, n, stream, options);
}

}  // namespace detred::cuda
