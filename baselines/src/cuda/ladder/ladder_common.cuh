// What the ladder variants share: the conversion of an input element, the multi-pass driver (the array shrinks by
// the elements one block covers per launch until one value remains) and each variant's launcher declaration.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/baselines/gpu.hpp"
#include "detred/cuda/error.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::baselines::detail {

// The identity used to pad partial blocks: -0.0 keeps the sign of an all-negative-zero sum (x + -0.0 == x).
template <class A>
__device__ __forceinline__ A identity() {
  return A(-0.0);
}

template <class A, class T>
__device__ __forceinline__ A element(const T* in, std::uint64_t i, std::uint64_t n) {
  return i < n ? detred::widen<A>(in[i]) : identity<A>();
}

// The pass structure of Harris's ladder: `first(in, n, out, blocks)` turns n inputs into `blocks` partial sums,
// `later(in, len, out, blocks)` does the same to partial sums, each block covering `per_block` values, until one
// value is left in *d_out. ws0 and ws1 hold ceil(n / per_block) and ceil(n / per_block^2) values.
template <class A, class T, class First, class Later>
void shrink_per_launch(const T* in, std::uint64_t n, A* d_out, A* ws0, A* ws1, std::uint64_t per_block, First first,
                       Later later) {
  std::uint64_t blocks = n == 0 ? 1 : (n + per_block - 1) / per_block;
  A* dst = blocks == 1 ? d_out : ws0;
  first(in, n, dst, blocks);
  std::uint64_t len = blocks;
  const A* src = dst;
  while (len > 1) {
    blocks = (len + per_block - 1) / per_block;
    dst = blocks == 1 ? d_out : (src == ws0 ? ws1 : ws0);
    later(src, len, dst, blocks);
    src = dst;
    len = blocks;
  }
  detred::cuda::check(cudaGetLastError(), "detred::baselines: kernel launch");
}

inline int block_or_default(int block_threads) { return block_threads ? block_threads : 256; }

#define DETRED_LADDER_LAUNCHER(name)                                                                        \
  template <class A, class T>                                                                               \
  void name(const T* in, std::uint64_t n, A* out, A* ws0, A* ws1, cudaStream_t stream, int block, int grid, \
            ladder_variant v)

DETRED_LADDER_LAUNCHER(launch_one_kernel_per_level);
DETRED_LADDER_LAUNCHER(launch_interleaved_divergent);
DETRED_LADDER_LAUNCHER(launch_sequential_addressing);
DETRED_LADDER_LAUNCHER(launch_first_add_during_load);
DETRED_LADDER_LAUNCHER(launch_unrolled_last_warp);
DETRED_LADDER_LAUNCHER(launch_warp_shuffle);
DETRED_LADDER_LAUNCHER(launch_chunked);

// The type pairs every variant file instantiates.
#define DETRED_LADDER_INSTANTIATE(name)                                                                               \
  template void name<float, detred::half>(const detred::half*, std::uint64_t, float*, float*, float*, cudaStream_t,   \
                                          int, int, ladder_variant);                                                  \
  template void name<float, detred::bfloat16>(const detred::bfloat16*, std::uint64_t, float*, float*, float*,         \
                                              cudaStream_t, int, int, ladder_variant);                                \
  template void name<float, float>(const float*, std::uint64_t, float*, float*, float*, cudaStream_t, int, int,       \
                                   ladder_variant);                                                                   \
  template void name<double, double>(const double*, std::uint64_t, double*, double*, double*, cudaStream_t, int, int, \
                                     ladder_variant);

}  // namespace detred::baselines::detail
