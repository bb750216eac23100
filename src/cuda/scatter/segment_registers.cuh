// The canonical segment sums of long segments with each block's tile held in registers: blocks of 2 or 4 warps, a
// block a segment (grid-stride past the grid), as CUB's segmented reduce gives each segment a block.
//
// Reading. A tile is one region of 8 rows of 32 lane vectors (4 KiB) a warp. Warp w loads region w of the tile into
// registers, all 8 of its lane's loads issued before any is used: one 16-byte load a lane vector where the segment
// starts on a 16-byte boundary, V element loads where it does not (one branch a region, so that each form's loads are
// one straight run), and the row that holds the region's end, when the region is not whole, element by element (zero
// past the end).
//
// Order. The same nodes as warp_row_root (include/detred/cuda/warp/row_warp.cuh), so the bits of the CPU's
// canonical_row_root, of the staged kernel (segment_staged.cuh) and of the short segments' pass: a whole region's root
// by warp_rows_root<8> (a complete aligned subtree at level lane_level + 8); after one block barrier a tile, warp 0
// pushes the tile's region roots into its counter in position order, and for the region that holds the segment's end
// (its lane roots and tail leaves left in shared memory) its full rows by lane_butterfly_root and its tail by
// push_tail_nodes. Segments shorter than a region: one warp each, in turn, with the same loads, pushed into that warp's
// own counter.
//
// Measured (H100, docs/PERFORMANCE.md "Scattered and segmented sums"): faster than the staged kernel from mean lengths
// of about 1.5 KiB (the f32 mean 4096 bar case, 16 KiB: 0.98x CUB with 2 warps against 0.91x), slower for short
// segments (mean 16: 1.9-2.2x CUB against 2.9x); segment_sum takes it when the caller's values count says the mean is
// long enough. The driver's default shared-memory carveout: the largest shared carveout, which the staged kernel asks
// for, leaves L1 too small for the element loads (0.90x against 0.95x).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/accumulators/plain.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "src/cuda/scatter/segment_staged.cuh"

namespace detred::cuda::detail {

inline constexpr int register_segment_rows = 8;  // rows of 32 lane vectors a warp's region

// The launch shapes segment_sum takes, by the segments' mean length in bytes of input (H100, fp32 and fp64,
// docs/PERFORMANCE.md "Scattered and segmented sums"): below 1.5 KiB the staged kernel; to 12 KiB blocks of 2 warps at
// 16 blocks an SM (64 registers; fp32 spills 28 bytes and still leads there: f32 mean 1024, 4 KiB, 1.15x CUB against
// 1.02 at 12 blocks and the staged kernel's 0.89); to 24 KiB blocks of 2 warps at 12 (no spills: f32 mean 4096,
// 16 KiB, 0.98x against 0.93 at 16 blocks); from 24 KiB blocks of 4 warps at 8 (64 registers, no spills: f32 mean
// 16384 1.02x, f64 mean 4096 0.99x). The 16-bit inputs, whose 8-element vectors widen to fp32, need more registers:
// 2 warps at 10 blocks below 24 KiB, 4 warps at 5 from there, their most without spills (not timed).
struct register_segment_shape {
  int warps, blocks_per_sm;
};
template <class T>
inline constexpr register_segment_shape register_segment_short = sizeof(T) == 2 ? register_segment_shape{2, 10}
                                                                                : register_segment_shape{2, 16};
template <class T>
inline constexpr register_segment_shape register_segment_medium = sizeof(T) == 2 ? register_segment_shape{2, 10}
                                                                                 : register_segment_shape{2, 12};
template <class T>
inline constexpr register_segment_shape register_segment_long = sizeof(T) == 2 ? register_segment_shape{4, 5}
                                                                               : register_segment_shape{4, 8};
inline constexpr std::uint64_t register_segment_min_mean_bytes = 1536;
inline constexpr std::uint64_t register_segment_medium_mean_bytes = 12 * 1024;
inline constexpr std::uint64_t register_segment_long_mean_bytes = 24 * 1024;

// This lane's vectors of the region of `count` elements at x (count <= 8 rows of 32 lane vectors): raw[q] for the full
// rows q < count / (32 V), the rest zero; `tail`, this lane's elements of the row that holds the region's end when the
// region is not whole (zero past the end). All loads are issued before any is used.
template <class T>
__device__ __forceinline__ void load_register_region(const T* __restrict__ x, bool aligned, int count,
                                                     uint4 (&raw)[register_segment_rows],
                                                     T (&tail)[tile_shape<T>::vector_elements]) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = int(threadIdx.x & 31);
  const int rows = count / (32 * V), rest = count - rows * 32 * V;
  if (aligned) {
#pragma unroll
    for (int q = 0; q < register_segment_rows; ++q)
      raw[q] = q < rows ? __ldg(reinterpret_cast<const uint4*>(x + (q * 32 + lane) * V)) : make_uint4(0, 0, 0, 0);
  } else {
#pragma unroll
    for (int q = 0; q < register_segment_rows; ++q)
      raw[q] = q < rows ? load_lane_vector<T, false>(x + (q * 32 + lane) * V) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int i = 0; i < V; ++i) tail[i] = lane * V + i < rest ? x[rows * 32 * V + lane * V + i] : T{};
}

// The lane roots of a region's rows (rows past the full ones give unused values) and this lane's leaves of its tail
// (Acc{} past the end); `at` is the region's first index in the segment, `count` its elements.
template <class Acc, class T>
__device__ __forceinline__ void register_region_lane_roots(const uint4 (&raw)[register_segment_rows],
                                                           const T (&tail)[tile_shape<T>::vector_elements],
                                                           std::uint64_t at, int count,
                                                           Acc (&lane_root)[register_segment_rows],
                                                           Acc (&tail_leaves)[tile_shape<T>::vector_elements]) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int segment = 32 * V;
  const int lane = int(threadIdx.x & 31);
  const widened_leaf<Acc> leaf{};
  const int rows = count / segment, rest = count - rows * segment;
#pragma unroll
  for (int q = 0; q < register_segment_rows; ++q) {
    Acc node[V];
    vector_leaves<Acc, T>(raw[q], at + std::uint64_t(q * 32 + lane) * V, leaf, node);
    lane_root[q] = lane_tree<Acc, V>(node);
  }
#pragma unroll
  for (int i = 0; i < V; ++i)
    tail_leaves[i] = lane * V + i < rest ? leaf(tail[i], at + std::uint64_t(rows * segment + lane * V + i)) : Acc{};
}

// The canonical segment sums, blocks of Warps warps (a tile: Warps regions), grid-stride over the segments
// (for_each_block_segment); out[slot] = the canonical sum of segment `slot`. `segments`: the count.
template <class R, class T, class Bounds, int Warps, int BlocksPerSm>
__global__ void __launch_bounds__(32 * Warps, BlocksPerSm)
    register_segment_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t segments, Bounds bounds) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int lane_level = tile_shape<T>::lane_level;
  constexpr int Rows = register_segment_rows;
  constexpr int segment = 32 * V;
  constexpr int region = Rows * segment;
  constexpr std::uint64_t tile = std::uint64_t(Warps) * region;
  using Acc = plain_accumulator<R>;
  __shared__ Acc region_roots[2][Warps];
  __shared__ Acc end_lane_roots[Rows][32];  // the end region's full rows: lane roots
  __shared__ Acc end_tail[V][32];           // the end region's tail: leaves (Acc{} past the end)
  const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
  unsigned turn = 0;  // the short segments go to the block's warps in turn
  for_each_block_segment(segments, bounds, [&](std::uint64_t slot, std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t len = end - begin;
    const T* x = values + begin;
    const bool aligned = (reinterpret_cast<std::uintptr_t>(x) & 15) == 0;
    if (len < std::uint64_t(region)) {
      if (int(turn++ % Warps) != warp) return;
      uint4 raw[Rows];
      T tail[V];
      load_register_region<T>(x, aligned, int(len), raw, tail);
      Acc lane_root[Rows], tail_leaves[V];
      register_region_lane_roots<Acc, T>(raw, tail, 0, int(len), lane_root, tail_leaves);
      const int rows = int(len) / segment, rest = int(len) - rows * segment;
      warp_counter<Acc> counter;
#pragma unroll
      for (int q = 0; q < Rows; ++q)
        if (q < rows) counter.push(lane_butterfly_root(lane_root[q]), lane_level + 5);
      if (rest > 0) push_tail_nodes<Acc, T>(tail_leaves, rest, counter);
      const R result = canonicalize_nan(counter.fold().result());
      if (lane == 0) out[slot] = result;
      return;
    }
    const std::uint64_t tiles = (len + tile - 1) / tile;
    warp_counter<Acc> counter;
    for (std::uint64_t t = 0; t < tiles; ++t) {
      const std::uint64_t at = t * tile + std::uint64_t(warp) * region;  // this warp's region
      const int count = at >= len ? 0 : len - at < std::uint64_t(region) ? int(len - at) : region;
      uint4 raw[Rows];
      T tail[V];
      load_register_region<T>(x + at, aligned, count, raw, tail);
      Acc lane_root[Rows], tail_leaves[V];
      register_region_lane_roots<Acc, T>(raw, tail, at, count, lane_root, tail_leaves);
      if (count == region) {
        const Acc root = warp_rows_root<8>(lane_root);
        if (lane == 0) region_roots[t & 1][warp] = root;
      } else if (count > 0) {
#pragma unroll
        for (int q = 0; q < Rows; ++q) end_lane_roots[q][lane] = lane_root[q];
#pragma unroll
        for (int i = 0; i < V; ++i) end_tail[i][lane] = tail_leaves[i];
      }
      __syncthreads();
      if (warp == 0) {
        for (int w = 0; w < Warps; ++w) {
          const std::uint64_t aw = t * tile + std::uint64_t(w) * region;
          if (aw >= len) break;
          if (len - aw >= std::uint64_t(region)) {
            counter.push(region_roots[t & 1][w], lane_level + 8);
          } else {
            const int end_count = int(len - aw);
            const int end_rows = end_count / segment, end_rest = end_count - end_rows * segment;
            for (int q = 0; q < end_rows; ++q)
              counter.push(lane_butterfly_root(end_lane_roots[q][lane]), lane_level + 5);
            if (end_rest > 0) {
              Acc node[V];
#pragma unroll
              for (int i = 0; i < V; ++i) node[i] = end_tail[i][lane];
              push_tail_nodes<Acc, T>(node, end_rest, counter);
            }
          }
        }
      }
    }
    __syncthreads();  // warp 0 has read the end region before the next segment writes it
    if (warp == 0) {
      const R result = canonicalize_nan(counter.fold().result());
      if (lane == 0) out[slot] = result;
    }
  });
}

}  // namespace detred::cuda::detail
