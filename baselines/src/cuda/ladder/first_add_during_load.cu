// ladder_variant::first_add_during_load: Harris's reduce3 (halve the threads, first add while loading).
#include "ladder_common.cuh"

namespace detred::baselines::detail {
namespace {
template <class A, class T>
__global__ void reduce3(const T* in, std::uint64_t n, A* out) {
  extern __shared__ unsigned char smem[];
  A* sdata = reinterpret_cast<A*>(smem);
  const unsigned tid = threadIdx.x;
  const std::uint64_t i = blockIdx.x * (2 * std::uint64_t(blockDim.x)) + tid;
  sdata[tid] = element<A>(in, i, n) + element<A>(in, i + blockDim.x, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
}  // namespace

DETRED_LADDER_LAUNCHER(launch_first_add_during_load) {
  (void)grid;
  (void)v;
  const std::size_t smem = std::size_t(block) * sizeof(A);
  shrink_per_launch<A, T>(
      in, n, out, ws0, ws1, 2 * std::uint64_t(block),
      [&](const T* src, std::uint64_t len, A* dst, std::uint64_t blocks) {
        reduce3<A, T><<<unsigned(blocks), block, smem, stream>>>(src, len, dst);
      },
      [&](const A* src, std::uint64_t len, A* dst, std::uint64_t blocks) {
        reduce3<A, A><<<unsigned(blocks), block, smem, stream>>>(src, len, dst);
      });
}

DETRED_LADDER_INSTANTIATE(launch_first_add_during_load)
}  // namespace detred::baselines::detail
