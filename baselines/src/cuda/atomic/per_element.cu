// atomic_variant::per_element: one atomicAdd per element into the one result.
#include "atomic_common.cuh"

namespace detred::baselines::detail {
namespace {
template <class A, class T>
__global__ void atomic_each(const T* in, std::uint64_t n, A* out) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(blockDim.x) * gridDim.x)
    atomicAdd(out, detred::widen<A>(in[i]));
}
}  // namespace

DETRED_ATOMIC_LAUNCHER(launch_atomic_per_element) {
  set_identity<A><<<1, 1, 0, stream>>>(out);
  if (n) atomic_each<A, T><<<grid_for(n, block, grid, 65535), block, 0, stream>>>(in, n, out);
  detred::cuda::check(cudaGetLastError(), "detred::baselines: kernel launch");
}

DETRED_ATOMIC_INSTANTIATE(launch_atomic_per_element)
}  // namespace detred::baselines::detail
