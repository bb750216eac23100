// The GPU baselines (variants.hpp): the classic reduction ladder and atomic reductions. Type pairs (input ->
// accumulation): half, bfloat16, float -> float; double -> double. Launch configuration: block_threads a power of two
// in [64, 1024] (0: 256); grid_blocks > 0 (ladder: at most max_grid_blocks) fixes the grid of the grid-stride and
// chunked variants and of the atomics (0: the variant's textbook choice); other variants derive their grid from n. The
// empty sum is -0.0. Asynchronous on `stream`; CUDA failures throw detred::cuda::cuda_error, bad arguments
// std::invalid_argument.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/baselines/variants.hpp"

namespace detred::baselines {

inline constexpr int max_grid_blocks = 4096;  // of the ladder's grid-stride and chunked variants

struct gpu_launch {
  int block_threads = 0;
  int grid_blocks = 0;
};

// Device workspace bytes a ladder sum of n elements needs (every variant, every configuration): about 6n bytes.
std::size_t ladder_workspace_bytes(std::uint64_t n);

// Writes the sum of d_in[0..n) to *d_out (device memory) with the ladder variant v.
template <class A, class T>
void ladder_sum(ladder_variant v, const T* d_in, std::uint64_t n, A* d_out, void* d_workspace,
                std::size_t workspace_bytes, cudaStream_t stream = nullptr, gpu_launch launch = {});

// Writes the sum of d_in[0..n) to *d_out with atomicAdd (variant v); needs no workspace.
template <class A, class T>
void atomic_sum(atomic_variant v, const T* d_in, std::uint64_t n, A* d_out, cudaStream_t stream = nullptr,
                gpu_launch launch = {});

}  // namespace detred::baselines
