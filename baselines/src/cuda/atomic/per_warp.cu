// atomic_variant::per_warp: grid-stride thread sums, a shuffle warp reduce, one atomicAdd per warp.
#include "atomic_common.cuh"

namespace detred::baselines::detail {
namespace {
template <class A, class T>
__global__ void atomic_warps(const T* in, std::uint64_t n, A* out) {
  A sum = A(-0.0);
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(blockDim.x) * gridDim.x)
    sum += detred::widen<A>(in[i]);
  sum = warp_sum_down(sum);
  if (threadIdx.x % 32 == 0) atomicAdd(out, sum);
}
}  // namespace

DETRED_ATOMIC_LAUNCHER(launch_atomic_per_warp) {
  set_identity<A><<<1, 1, 0, stream>>>(out);
  if (n) atomic_warps<A, T><<<grid_for(n, block, grid, 4096), block, 0, stream>>>(in, n, out);
  detred::cuda::check(cudaGetLastError(), "detred::baselines: kernel launch");
}

DETRED_ATOMIC_INSTANTIATE(launch_atomic_per_warp)
}  // namespace detred::baselines::detail
