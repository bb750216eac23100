// ladder_variant::unrolled_last_warp: Harris's reduce5 (first add during load, the last warp unrolled). Harris wrote
// the last warp with a volatile pointer and no barrier (warp-synchronous); since Volta a warp's threads may diverge,
// so the steps are separated by __syncwarp() as the CUDA 9 guidance requires. The association is unchanged.
#include "ladder_common.cuh"

namespace detred::baselines::detail {
namespace {
template <class A>
__device__ void warp_reduce(volatile A* sdata, unsigned tid) {
  A v = sdata[tid];
#pragma unroll
  for (unsigned s = 32; s > 0; s >>= 1) {
    v += sdata[tid + s];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
  }
}

template <class A, class T>
__global__ void reduce5(const T* in, std::uint64_t n, A* out) {
  extern __shared__ unsigned char smem[];
  A* sdata = reinterpret_cast<A*>(smem);
  const unsigned tid = threadIdx.x;
  const std::uint64_t i = blockIdx.x * (2 * std::uint64_t(blockDim.x)) + tid;
  sdata[tid] = element<A>(in, i, n) + element<A>(in, i + blockDim.x, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) warp_reduce<A>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
}  // namespace

DETRED_LADDER_LAUNCHER(launch_unrolled_last_warp) {
  (void)grid;
  (void)v;
  const std::size_t smem = std::size_t(block) * sizeof(A);
  shrink_per_launch<A, T>(
      in, n, out, ws0, ws1, 2 * std::uint64_t(block),
      [&](const T* src, std::uint64_t len, A* dst, std::uint64_t blocks) {
        reduce5<A, T><<<unsigned(blocks), block, smem, stream>>>(src, len, dst);
      },
      [&](const A* src, std::uint64_t len, A* dst, std::uint64_t blocks) {
        reduce5<A, A><<<unsigned(blocks), block, smem, stream>>>(src, len, dst);
      });
}

DETRED_LADDER_INSTANTIATE(launch_unrolled_last_warp)
}  // namespace detred::baselines::detail
