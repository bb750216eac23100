// ladder_variant::chunked_brent, chunked_kahan, chunked_neumaier: Brent's lemma, a fixed number of threads each
// summing its own contiguous chunk sequentially (plain, Kahan or Neumaier accumulator per thread), then a tree.
#include "ladder_common.cuh"
#include "shuffle.cuh"

namespace detred::baselines::detail {
namespace {
enum class per_thread { plain, kahan, neumaier };

template <per_thread How, class A, class T>
__global__ void chunk_pass(const T* in, std::uint64_t n, std::uint64_t chunk, A* out) {
  const std::uint64_t t = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  const std::uint64_t first = t * chunk;
  const std::uint64_t last = first + chunk < n ? first + chunk : n;
  A s = A(-0.0), c = A(-0.0);  // -0.0: the empty chunk's sum keeps its sign
  for (std::uint64_t i = first; i < last; ++i) {
    const A x = detred::widen<A>(in[i]);
    if constexpr (How == per_thread::plain) {
      s += x;
    } else if constexpr (How == per_thread::kahan) {  // Kahan 1965: c carries the lost low part, negated
      const A y = x - c;
      const A t2 = s + y;
      c = (t2 - s) - y;
      s = t2;
    } else {  // Neumaier 1974: the larger operand's error, whichever it is
      const A t2 = s + x;
      if (fabs(s) >= fabs(x))
        c += (s - t2) + x;
      else
        c += (x - t2) + s;
      s = t2;
    }
  }
  if constexpr (How == per_thread::neumaier) s = s + c;
  s = block_sum_down(s);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template <per_thread How, class A, class T>
void run(const T* in, std::uint64_t n, A* out, A* ws0, cudaStream_t stream, int block, int grid) {
  const unsigned blocks = grid ? unsigned(grid) : 264u;  // the textbook's "a few blocks per SM" (2 x 132)
  const std::uint64_t threads = std::uint64_t(blocks) * block;
  const std::uint64_t chunk = n == 0 ? 1 : (n + threads - 1) / threads;
  chunk_pass<How, A, T><<<blocks, block, 0, stream>>>(in, n, chunk, ws0);
  chunk_pass<per_thread::plain, A, A><<<1, 1024, 0, stream>>>(ws0, blocks, (blocks + 1023) / 1024, out);
  detred::cuda::check(cudaGetLastError(), "detred::baselines: kernel launch");
}
}  // namespace

DETRED_LADDER_LAUNCHER(launch_chunked) {
  (void)ws1;
  if (v == ladder_variant::chunked_kahan) return run<per_thread::kahan, A, T>(in, n, out, ws0, stream, block, grid);
  if (v == ladder_variant::chunked_neumaier)
    return run<per_thread::neumaier, A, T>(in, n, out, ws0, stream, block, grid);
  run<per_thread::plain, A, T>(in, n, out, ws0, stream, block, grid);
}

DETRED_LADDER_INSTANTIATE(launch_chunked)
}  // namespace detred::baselines::detail
