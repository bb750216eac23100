// The element loop of one row's outputs, shared by the row family's gradient kernels (layernorm_backward.cuh,
// softmax_family.cuh).
#pragma once

#include <cstdint>

#include "detred/cuda/warp/warp_tile.cuh"

namespace detred::cuda::detail {

// f for the elements [0, n) of one row, the warp's lanes together. With Vector (the row and every array f touches
// start 16-byte aligned), lane l takes V consecutive elements per step through f.vector<V>(i) up to the last multiple
// of V, then the remaining n mod V elements one by one through f.scalar(i); otherwise every element through f.scalar.
// No element at or past n is touched.
template <class T, bool Vector, class F>
__device__ __forceinline__ void for_each_in_row(std::uint64_t n, const F& f) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  std::uint64_t done = 0;
  if constexpr (Vector) {
    done = n - n % V;
    for (std::uint64_t i = std::uint64_t(lane) * V; i < done; i += 32 * V) f.template vector<V>(i);
  }
  for (std::uint64_t i = done + std::uint64_t(lane); i < n; i += 32) f.scalar(i);
}

}  // namespace detred::cuda::detail
