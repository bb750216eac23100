// detred::baselines::ladder_sum: argument checks, the workspace split, and the variant's launcher.
#include <string>

#include "detred/errors.hpp"
#include "ladder_common.cuh"

namespace detred::baselines {

std::size_t ladder_workspace_bytes(std::uint64_t n) {
  // one_kernel_per_level needs the most: ceil(n/2) values, then ceil(n/4), in doubles at worst; the grid-stride and
  // chunked variants need one value per block (grid_blocks <= max_grid_blocks).
  return 256 + ((n + 1) / 2 + (n + 3) / 4 + 8 + 2 * max_grid_blocks) * sizeof(double);
}

template <class A, class T>
void ladder_sum(ladder_variant v, const T* d_in, std::uint64_t n, A* d_out, void* d_workspace,
                std::size_t workspace_bytes, cudaStream_t stream, gpu_launch launch) {
  const int block = detail::block_or_default(launch.block_threads);
  if (block < 64 || block > 1024 || (block & (block - 1)) != 0)
    detred::detail::throw_invalid("baselines::ladder_sum", "block_threads must be 0 or a power of two in [64, 1024]");
  if (launch.grid_blocks < 0 || launch.grid_blocks > max_grid_blocks)
    detred::detail::throw_invalid("baselines::ladder_sum", "grid_blocks must be in [0, 4096]");
  if ((d_in == nullptr && n > 0) || d_out == nullptr || d_workspace == nullptr)
    detred::detail::throw_invalid("baselines::ladder_sum", "null pointer");
  if (workspace_bytes < ladder_workspace_bytes(n))
    detred::detail::throw_invalid("baselines::ladder_sum",
                                  "workspace too small: " + std::to_string(workspace_bytes) + " bytes");
  A* ws0 = reinterpret_cast<A*>(static_cast<unsigned char*>(d_workspace) + 256);
  A* ws1 = ws0 + (n + 1) / 2 + 4 + max_grid_blocks;
  const int grid = launch.grid_blocks;
  using enum ladder_variant;
  switch (v) {
    case one_kernel_per_level:
      return detail::launch_one_kernel_per_level<A, T>(d_in, n, d_out, ws0, ws1, stream, block, grid, v);
    case interleaved_divergent:
      return detail::launch_interleaved_divergent<A, T>(d_in, n, d_out, ws0, ws1, stream, block, grid, v);
    case sequential_addressing:
      return detail::launch_sequential_addressing<A, T>(d_in, n, d_out, ws0, ws1, stream, block, grid, v);
    case first_add_during_load:
      return detail::launch_first_add_during_load<A, T>(d_in, n, d_out, ws0, ws1, stream, block, grid, v);
    case unrolled_last_warp:
      return detail::launch_unrolled_last_warp<A, T>(d_in, n, d_out, ws0, ws1, stream, block, grid, v);
    case warp_shuffle:
      return detail::launch_warp_shuffle<A, T>(d_in, n, d_out, ws0, ws1, stream, block, grid, v);
    case chunked_brent:
    case chunked_kahan:
    case chunked_neumaier:
      return detail::launch_chunked<A, T>(d_in, n, d_out, ws0, ws1, stream, block, grid, v);
  }
  detred::detail::throw_invalid("baselines::ladder_sum", "unknown variant");
}

#define DETRED_INSTANTIATE(A, T)                                                                                \
  template void ladder_sum<A, T>(ladder_variant, const T*, std::uint64_t, A*, void*, std::size_t, cudaStream_t, \
                                 gpu_launch);
DETRED_INSTANTIATE(float, detred::half)
DETRED_INSTANTIATE(float, detred::bfloat16)
DETRED_INSTANTIATE(float, float)
DETRED_INSTANTIATE(double, double)
#undef DETRED_INSTANTIATE

}  // namespace detred::baselines
