// ladder_variant::one_kernel_per_level: one launch per level of a pairwise tree.
#include "ladder_common.cuh"

namespace detred::baselines::detail {
namespace {
template <class A, class T>
__global__ void pair_level(const T* in, std::uint64_t len, A* out) {
  const std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  const std::uint64_t half_len = (len + 1) / 2;
  if (i >= half_len) return;
  if (2 * i + 1 < len)
    out[i] = detred::widen<A>(in[2 * i]) + detred::widen<A>(in[2 * i + 1]);
  else
    out[i] = detred::widen<A>(in[2 * i]);  // the odd last element, carried up
}
template <class A>
__global__ void write_identity(A* out) {
  *out = A(-0.0);
}
}  // namespace

DETRED_LADDER_LAUNCHER(launch_one_kernel_per_level) {
  (void)grid;
  (void)v;
  if (n == 0) {
    write_identity<A><<<1, 1, 0, stream>>>(out);
    return;
  }
  if (n == 1) {  // no level: the element itself
    if constexpr (std::is_same_v<A, T>) {
      detred::cuda::check(cudaMemcpyAsync(out, in, sizeof(A), cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    } else {
      pair_level<A, T><<<1, 32, 0, stream>>>(in, 1, out);
    }
    return;
  }
  auto blocks_for = [block](std::uint64_t len) { return unsigned(((len + 1) / 2 + block - 1) / block); };
  std::uint64_t len = (n + 1) / 2;
  A* dst = len == 1 ? out : ws0;
  pair_level<A, T><<<blocks_for(n), block, 0, stream>>>(in, n, dst);
  const A* src = dst;
  while (len > 1) {
    const std::uint64_t next = (len + 1) / 2;
    dst = next == 1 ? out : (src == ws0 ? ws1 : ws0);
    pair_level<A, A><<<blocks_for(len), block, 0, stream>>>(src, len, dst);
    src = dst;
    len = next;
  }
  detred::cuda::check(cudaGetLastError(), "detred::baselines: kernel launch");
}

DETRED_LADDER_INSTANTIATE(launch_one_kernel_per_level)
}  // namespace detred::baselines::detail
