// ladder_variant::interleaved_divergent: Harris's reduce0 (interleaved addressing, divergent branches).
#include "ladder_common.cuh"

namespace detred::baselines::detail {
namespace {
template <class A, class T>
__global__ void reduce0(const T* in, std::uint64_t n, A* out) {
  extern __shared__ unsigned char smem[];
  A* sdata = reinterpret_cast<A*>(smem);
  const unsigned tid = threadIdx.x;
  const std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + tid;
  sdata[tid] = element<A>(in, i, n);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
}  // namespace

DETRED_LADDER_LAUNCHER(launch_interleaved_divergent) {
  (void)grid;
  (void)v;
  const std::size_t smem = std::size_t(block) * sizeof(A);
  shrink_per_launch<A, T>(
      in, n, out, ws0, ws1, block,
      [&](const T* src, std::uint64_t len, A* dst, std::uint64_t blocks) {
        reduce0<A, T><<<unsigned(blocks), block, smem, stream>>>(src, len, dst);
      },
      [&](const A* src, std::uint64_t len, A* dst, std::uint64_t blocks) {
        reduce0<A, A><<<unsigned(blocks), block, smem, stream>>>(src, len, dst);
      });
}

DETRED_LADDER_INSTANTIATE(launch_interleaved_divergent)
}  // namespace detred::baselines::detail
