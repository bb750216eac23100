// The reduce family on the GPU: its options (reduce_options, shared by every call of the family) and the device-wide
// product. The other calls of the family: min, max, argmin, argmax in extrema.hpp; dot, nrm2, asum in blas.hpp; the
// generic reduce and transform_reduce for a user's element type and operator in transform_reduce.cuh (compile the
// caller with nvcc). Every call follows docs/API.md: workspace first (a null d_workspace asks for its size), inputs,
// output, n, stream, options.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/error.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/reduce.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

// The launch shape of the reduce family's kernels. Every field changes speed only, never bits; 0 means "chosen for
// this device and n". A field out of range throws detred::invalid_argument naming it.
struct reduce_options {
  // Threads per block of the main kernel: a multiple of 32 in [32, 256]. 0: 256.
  int block_threads = 0;
  // Blocks of the main kernel, at most the number that has work. 0: one warp per chunk (product, dot, nrm2, asum,
  // reduce, transform_reduce: the hardware block scheduler balances the load); as many as are resident (min, max,
  // argmin, argmax).
  int grid_blocks = 0;
  // Tiles (16 KiB of the first input each, complete subtrees of the canonical order) per chunk, the unit one warp
  // reduces: 1, 2, 4, 8 or 16. 0: 16 for large inputs, fewer until every resident warp gets two chunks. min, max,
  // argmin and argmax stream without chunks: they check the field and ignore it.
  int tiles_per_chunk = 0;
};

namespace detail {
template <class A, class T>
void product_on_device(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, A* d_out, std::uint64_t n,
                       cudaStream_t stream, const reduce_options& options);
}  // namespace detail

// Writes the product of d_in[0..n) to *d_out (device memory), asynchronously on `stream`.
//
// Order: the canonical order of n (docs/ORDER.md), the same bits as detred::product<Acc> on the CPU for every n
// (64-bit), launch shape, pointer alignment and GPU (cpu_gpu). Error: |error| <= gamma_{n-1} |product| without
// overflow or underflow. IEEE: empty product 1; a NaN result is the canonical NaN; Inf and overflow as IEEE
// multiplication gives them. Type pairs (Acc, T): half, bfloat16 -> float or double; float -> float or double;
// double -> double. d_in needs only its element type's alignment. Workspace: the bytes a size query gives (a function
// of n and the types); no allocation. Throws invalid_argument for a null d_in with n > 0, a null d_out, a misaligned
// pointer, too small a workspace or an option out of range; cuda_error on a CUDA failure.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void product(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, accumulation_for<Acc, T>* d_out,
             std::uint64_t n, cudaStream_t stream = nullptr, const reduce_options& options = {}) {
  detail::product_on_device(d_workspace, workspace_bytes, d_in, d_out, n, stream, options);
}

}  // namespace detred::cuda
