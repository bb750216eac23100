// Luitjens's warp and block sums with __shfl_down_sync (shared by warp_shuffle, chunked_* and the atomics): lane 0
// receives lane 0 + lane 16 + ..., a tree over strided lanes; the block sum is the same over the warps' sums.
#pragma once

namespace detred::baselines::detail {

template <class A>
__device__ __forceinline__ A warp_sum_down(A v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Valid in thread 0; every thread of the block must call it. blockDim.x a multiple of 32, at most 1024.
template <class A>
__device__ __forceinline__ A block_sum_down(A v) {
  __shared__ A warp_sums[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum_down(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : A(-0.0);
    v = warp_sum_down(v);
  }
  return v;
}

}  // namespace detred::baselines::detail
