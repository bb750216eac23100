// What the atomic baselines share: the result's initialisation and each variant's launcher declaration.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "../ladder/shuffle.cuh"
#include "detred/baselines/gpu.hpp"
#include "detred/cuda/error.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::baselines::detail {

template <class A>
__global__ void set_identity(A* out) {
  *out = A(-0.0);
}

// The textbook grid of a grid-stride kernel: one thread per element, at most `cap` blocks.
inline unsigned grid_for(std::uint64_t n, int block, int grid, std::uint64_t cap) {
  if (grid) return unsigned(grid);
  const std::uint64_t wanted = (n + block - 1) / block;
  return unsigned(wanted < 1 ? 1 : (wanted > cap ? cap : wanted));
}

#define DETRED_ATOMIC_LAUNCHER(name) \
  template <class A, class T>        \
  void name(const T* in, std::uint64_t n, A* out, cudaStream_t stream, int block, int grid)

DETRED_ATOMIC_LAUNCHER(launch_atomic_per_element);
DETRED_ATOMIC_LAUNCHER(launch_atomic_per_warp);
DETRED_ATOMIC_LAUNCHER(launch_atomic_per_block);

#define DETRED_ATOMIC_INSTANTIATE(name)                                                                                \
  template void name<float, detred::half>(const detred::half*, std::uint64_t, float*, cudaStream_t, int, int);         \
  template void name<float, detred::bfloat16>(const detred::bfloat16*, std::uint64_t, float*, cudaStream_t, int, int); \
  template void name<float, float>(const float*, std::uint64_t, float*, cudaStream_t, int, int);                       \
  template void name<double, double>(const double*, std::uint64_t, double*, cudaStream_t, int, int);

}  // namespace detred::baselines::detail
