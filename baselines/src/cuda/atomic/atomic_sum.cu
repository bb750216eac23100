// detred::baselines::atomic_sum: argument checks and the variant's launcher.
#include "atomic_common.cuh"
#include "detred/errors.hpp"

namespace detred::baselines {

template <class A, class T>
void atomic_sum(atomic_variant v, const T* d_in, std::uint64_t n, A* d_out, cudaStream_t stream, gpu_launch launch) {
  const int block = launch.block_threads ? launch.block_threads : 256;
  if (block < 64 || block > 1024 || (block & (block - 1)) != 0)
    detred::detail::throw_invalid("baselines::atomic_sum", "block_threads must be 0 or a power of two in [64, 1024]");
  if (launch.grid_blocks < 0) detred::detail::throw_invalid("baselines::atomic_sum", "grid_blocks must be >= 0");
  if ((d_in == nullptr && n > 0) || d_out == nullptr)
    detred::detail::throw_invalid("baselines::atomic_sum", "null pointer");
  switch (v) {
    case atomic_variant::per_element:
      return detail::launch_atomic_per_element<A, T>(d_in, n, d_out, stream, block, launch.grid_blocks);
    case atomic_variant::per_warp:
      return detail::launch_atomic_per_warp<A, T>(d_in, n, d_out, stream, block, launch.grid_blocks);
    case atomic_variant::per_block:
      return detail::launch_atomic_per_block<A, T>(d_in, n, d_out, stream, block, launch.grid_blocks);
  }
  detred::detail::throw_invalid("baselines::atomic_sum", "unknown variant");
}

#define DETRED_INSTANTIATE(A, T) \
  template void atomic_sum<A, T>(atomic_variant, const T*, std::uint64_t, A*, cudaStream_t, gpu_launch);
DETRED_INSTANTIATE(float, detred::half)
DETRED_INSTANTIATE(float, detred::bfloat16)
DETRED_INSTANTIATE(float, float)
DETRED_INSTANTIATE(double, double)
#undef DETRED_INSTANTIATE

}  // namespace detred::baselines
