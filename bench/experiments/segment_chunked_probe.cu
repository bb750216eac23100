// Experiment (docs/PERFORMANCE.md, "Scattered and segmented sums", "Where the time goes": the register-chunk form):
// the canonical segment sum with one warp a segment and each warp tile (32 rows of 32 lane vectors, 16 KiB) read
// into registers at once (32 loads in flight a lane, as warp_tile_root does for an aligned row and as CUB's
// block-a-segment reduce does), instead of the library's cp.async ring (src/cuda/scatter/segment_staged.cuh). Rows
// off a 16-byte boundary are read as element loads (two 8-byte loads where 8-byte aligned); the last chunk's full rows
// as regions of 8 and then one by one, its tail with the chunk's loads. The same tree nodes as warp_row_root, so the
// same bits as the library: the probe counts the segments whose bits differ (0 in every run). Timed against
// cub::DeviceSegmentedReduce::Sum and the library's segment_sum (canonical) on random segment lengths of mean 16 to
// 16384 (uniform in [0, 2 mean]) over 256 MiB, and with the segment starts rounded down to 16-byte boundaries;
// medians of single calls, each after a 256 MiB memset that clears L2. Variants: 8 warps an SM (255 registers), 10
// (168 registers, small spills), and persistent warps taking segments from a counter with the next segment's bounds
// read ahead. Not part of the library. Build: cmake --build build --target segment_chunked_probe; run:
// build/bench/segment_chunked_probe [reps]
#include <cuda_runtime_api.h>
#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench/experiments/segment_probe_harness.cuh"
#include "detred/accumulators/plain.hpp"
#include "detred/cuda/scatter.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"
#include "src/cuda/scatter/segment_staged.cuh"

namespace detred::cuda::detail {

// Segments shorter than staged_min_elements<T> (one region of 8 rows) take the library's short_segment_sum.

template <class T>
struct chunk_vectors {
  static constexpr int V = tile_shape<T>::vector_elements;
  uint4 raw[32];

  __device__ __forceinline__ void load(const T* __restrict__ x, bool aligned, int count) {
    const int lane = int(threadIdx.x & 31);
    const int rows = count / (32 * V);  // rows wholly inside the chunk
    // One branch a chunk, so that each form's 32 loads are one straight run.
    if (aligned) {
#pragma unroll
      for (int row = 0; row < 32; ++row)
        raw[row] = row < rows ? __ldg(reinterpret_cast<const uint4*>(x) + row * 32 + lane) : make_uint4(0, 0, 0, 0);
    } else if (sizeof(T) == 4 && (reinterpret_cast<std::uintptr_t>(x) & 7) == 0) {
      // 8-byte aligned: two 8-byte loads a lane vector.
#pragma unroll
      for (int row = 0; row < 32; ++row) {
        const uint2* p = reinterpret_cast<const uint2*>(x + (row * 32 + lane) * V);
        if (row < rows) {
          const uint2 lo = __ldg(p), hi = __ldg(p + 1);
          raw[row] = make_uint4(lo.x, lo.y, hi.x, hi.y);
        } else {
          raw[row] = make_uint4(0, 0, 0, 0);
        }
      }
    } else {
#pragma unroll
      for (int row = 0; row < 32; ++row)
        raw[row] = row < rows ? load_lane_vector<T, false>(x + (row * 32 + lane) * V) : make_uint4(0, 0, 0, 0);
    }
  }

  // The lane vector of the row that holds the chunk's end (`row`, with `rest` of its elements in the chunk, 0 < rest
  // < 32 V; warp-uniform), zero past the end: V element loads.
  __device__ __forceinline__ static uint4 load_partial_row(const T* __restrict__ x, int row, int rest) {
    const int lane = int(threadIdx.x & 31);
    T e[V];
#pragma unroll
    for (int i = 0; i < V; ++i) e[i] = lane * V + i < rest ? x[(row * 32 + lane) * V + i] : T{};
    uint4 raw;
    std::memcpy(&raw, e, sizeof(raw));
    return raw;
  }
};

// f(std::integral_constant<int, i>{}) for i = 0 .. N - 1: row indices known at compile time, so that the rows' values
// stay in named registers.
template <int N, class F, int... I>
__device__ __forceinline__ void unrolled_rows_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void unrolled_rows(F&& f) {
  unrolled_rows_impl<N>(f, std::make_integer_sequence<int, N>{});
}

// The canonical sum of values[begin, end), end - begin >= staged_min_elements<T>, by one warp a chunk at a time.
// Warp-uniform; returned in every lane.
template <class R, class T>
__device__ R chunked_segment_sum(const T* __restrict__ values, std::uint64_t begin, std::uint64_t end) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int lane_level = tile_shape<T>::lane_level;
  constexpr int tile_level = tile_shape<T>::tile_level;
  constexpr std::uint64_t segment = 32 * V;
  constexpr std::uint64_t tile = std::uint64_t{1} << tile_level;
  using Acc = plain_accumulator<R>;
  const widened_leaf<Acc> leaf{};
  const int lane = int(threadIdx.x & 31);
  const T* x = values + begin;
  const std::uint64_t len = end - begin;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(x) & 15) == 0;
  warp_counter<Acc> counter;
  chunk_vectors<T> chunk;
  // The lane roots of rows [8 g, 8 g + 8) of the chunk at `at` into v.
  const auto group_roots = [&](auto group_constant, std::uint64_t at, Acc(&v)[32]) {
    constexpr int g = decltype(group_constant)::value;
    unrolled_rows<8>([&](auto j_constant) {
      constexpr int row = 8 * g + decltype(j_constant)::value;
      Acc node[V];
      vector_leaves<Acc, T>(chunk.raw[row], at + std::uint64_t(row * 32 + lane) * V, leaf, node);
      v[row] = lane_tree<Acc, V>(node);
    });
  };
  std::uint64_t at = 0;
  for (; len - at >= tile; at += tile) {
    chunk.load(x + at, aligned, int(tile));
    Acc v[32];
    unrolled_rows<4>([&](auto g) { group_roots(g, at, v); });
    counter.push(warp_rows_root<32>(v), tile_level);
  }
  const int count = int(len - at);
  if (count > 0) {
    // The last chunk: its full rows (segments) as regions of 8 (complete trees of 8 x 32 lane vectors) and then one
    // by one, and the rest (fewer than 32 V elements) as tail blocks.
    const int rows = count / int(segment);
    const int rest = count - rows * int(segment);
    chunk.load(x + at, aligned, count);
    const uint4 raw = rest > 0 ? chunk_vectors<T>::load_partial_row(x + at, rows, rest) : make_uint4(0, 0, 0, 0);
    Acc v[32];
    unrolled_rows<4>([&](auto g) {
      constexpr int region = decltype(g)::value;
      if (8 * region < rows) group_roots(g, at, v);
      if (8 * region + 8 <= rows) {
        Acc r[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) r[j] = v[8 * region + j];
        counter.push(warp_rows_root<8>(r), lane_level + 8);
      }
    });
    unrolled_rows<32>([&](auto row_constant) {
      constexpr int row = decltype(row_constant)::value;
      if (row >= (rows & ~7) && row < rows) counter.push(lane_butterfly_root(v[row]), lane_level + 5);
    });
    if (rest > 0) {
      const std::uint64_t first = at + std::uint64_t(rows) * segment;
      T e[V];
      std::memcpy(e, &raw, sizeof(raw));
      Acc node[V];
#pragma unroll
      for (int i = 0; i < V; ++i)
        node[i] = lane * V + i < rest ? leaf(e[i], first + std::uint64_t(lane * V + i)) : Acc{};
      push_tail_nodes<Acc, T>(node, rest, counter);
    }
  }
  return canonicalize_nan(counter.fold().result());
}

template <class R, class T, class Bounds, int BlocksPerSm>
__global__ void __launch_bounds__(32, BlocksPerSm)
    chunked_segment_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t segments,
                           const std::uint64_t* d_segments, Bounds bounds) {
  const std::uint64_t count = d_segments ? *d_segments : segments;
  for_each_block_segment(count, bounds, [&](std::uint64_t slot, std::uint64_t begin, std::uint64_t end) {
    const R result = end - begin >= staged_min_elements<T> ? chunked_segment_sum<R, T>(values, begin, end)
                                                           : short_segment_sum<R, T>(values + begin, end - begin);
    if ((threadIdx.x & 31) == 0) out[slot] = result;
  });
}

// Persistent warps that take segments from a counter, the next segment's bounds read before the current one is
// reduced.
template <class R, class T, class Bounds, int BlocksPerSm = 8>
__global__ void __launch_bounds__(32, BlocksPerSm)
    chunked_persistent_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t count, Bounds bounds,
                              unsigned long long* next_segment) {
  const int lane = int(threadIdx.x & 31);
  unsigned long long s = 0;
  if (lane == 0) s = atomicAdd(next_segment, 1ull);
  s = __shfl_sync(0xffffffffu, s, 0);
  std::uint64_t b = 0, e = 0;
  if (s < count) bounds(s, b, e);
  while (s < count) {
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(next_segment, 1ull);
    t = __shfl_sync(0xffffffffu, t, 0);
    std::uint64_t nb = 0, ne = 0;
    if (t < count) bounds(t, nb, ne);
    const R result = e - b >= staged_min_elements<T> ? chunked_segment_sum<R, T>(values, b, e)
                                                     : short_segment_sum<R, T>(values + b, e - b);
    if (lane == 0) out[s] = result;
    s = t, b = nb, e = ne;
  }
}

}  // namespace detred::cuda::detail

int main(int argc, char** argv) {
  using namespace detred::cuda::detail;
  using segment_probe::check;
  using segment_probe::csr_bounds;
  const segment_probe::probe_setup setup = segment_probe::setup(argc, argv);
  const int reps = setup.reps, sms = setup.sms;
  const auto grid = [&](std::uint64_t segments) { return setup.grid(segments); };
  unsigned long long* counter = nullptr;  // the persistent form's next segment
  check(cudaMalloc(&counter, sizeof(unsigned long long)), __LINE__);
  const auto forms = [&](auto type) {
    using T = decltype(type);
    return std::vector<segment_probe::form<T>>{
        {"chunked8",
         [&](const T* v, const int* o, std::uint64_t s, T* out) {
           chunked_segment_kernel<T, T, csr_bounds, 8><<<grid(s), 32>>>(v, out, s, nullptr, csr_bounds{o});
         }},
        {"chunked10",
         [&](const T* v, const int* o, std::uint64_t s, T* out) {
           chunked_segment_kernel<T, T, csr_bounds, 10><<<grid(s), 32>>>(v, out, s, nullptr, csr_bounds{o});
         }},
        {"persistent", [&](const T* v, const int* o, std::uint64_t s, T* out) {
           cudaMemsetAsync(counter, 0, sizeof(unsigned long long));
           chunked_persistent_kernel<T, T, csr_bounds, 8><<<unsigned(sms * 8), 32>>>(v, out, s, csr_bounds{o}, counter);
         }}};
  };
  const std::uint64_t differing = segment_probe::run<float>("f32", std::uint64_t{1} << 26, reps, forms(float{})) +
                                  segment_probe::run<double>("f64", std::uint64_t{1} << 25, reps, forms(double{}));
  if (differing != 0)
    std::printf("FAILED: %llu segments differ from the library's bits\n", (unsigned long long)differing);
  return differing == 0 ? 0 : 1;
}
