// ladder_variant::warp_shuffle: Luitjens's Kepler reduction (grid-stride thread sums, shuffle tree, two passes).
#include "ladder_common.cuh"
#include "shuffle.cuh"

namespace detred::baselines::detail {
namespace {
template <class A, class T>
__global__ void shuffle_pass(const T* in, std::uint64_t n, A* out) {
  A sum = A(-0.0);
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(blockDim.x) * gridDim.x)
    sum += detred::widen<A>(in[i]);
  sum = block_sum_down(sum);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
}  // namespace

DETRED_LADDER_LAUNCHER(launch_warp_shuffle) {
  (void)ws1;
  (void)v;
  // The textbook grid: one thread per element, at most 1024 blocks.
  const std::uint64_t wanted = (n + block - 1) / block;
  const unsigned blocks = grid ? unsigned(grid) : unsigned(wanted < 1 ? 1 : (wanted > 1024 ? 1024 : wanted));
  if (blocks == 1) {
    shuffle_pass<A, T><<<1, 1024, 0, stream>>>(in, n, out);
  } else {
    shuffle_pass<A, T><<<blocks, block, 0, stream>>>(in, n, ws0);
    shuffle_pass<A, A><<<1, 1024, 0, stream>>>(ws0, blocks, out);
  }
  detred::cuda::check(cudaGetLastError(), "detred::baselines: kernel launch");
}

DETRED_LADDER_INSTANTIATE(launch_warp_shuffle)
}  // namespace detred::baselines::detail
