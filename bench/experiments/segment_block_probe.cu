// Experiment (docs/PERFORMANCE.md, "Scattered and segmented sums", "Where the time goes": the block-a-segment forms):
// the canonical segment sum with a block of warps a long segment, as CUB's segmented reduce gives each segment a
// block. Each form gives the library's bits (the probe counts the segments whose bits differ: 0 in every run):
//   - staged (block_segment_kernel, "block4x8"): each warp stages one region (8 rows of 32 lane vectors, 4 KiB) a pass
//     into its own shared buffer by cp.async (two buffers: the next pass's region in flight), reads the lane vectors at
//     any byte offset as the library's ring does, and writes the region's root; after one block barrier a pass, warp 0
//     pushes the pass's region roots in position order (the last, partial region's rows and tail from its stager's
//     buffer). Segments shorter than a region: one warp each, in turn, by the library's short_segment_sum.
//   - registers (register_block_segment_kernel, "regs4xB" and "w2r8xB": the library's register_segment_kernel, which
//     segment_sum takes for long mean lengths in the shapes w2r8x12 and regs4x8): each warp holds its region in
//     registers (8 lane vectors a lane, one 16-byte load each where the segment starts on a 16-byte boundary, V
//     element loads where it does not), reduces it to its root, and warp 0 joins the roots after one barrier a tile;
//     the end region leaves its lane roots and tail leaves in shared memory. Segments shorter than a region: one warp
//     each, in turn, with the same loads. Variants: "shared" and "L1", the largest shared-memory or L1 carveout instead
//     of the driver's default; "nc", non-coherent element loads, two 8-byte loads where 8-byte aligned; "g2", half as
//     many blocks (two segments a block); "realign", whole aligned vectors realigned by shuffles off a 16-byte
//     boundary; "h128" and "h256", loads with the L2::128B or L2::256B fetch hint; "w2r8xB", 2 warps of 8 rows;
//     "w8r4x5", 8 warps of 4 rows (a region of 4 rows, its root by each row's butterfly) at 5 blocks an SM.
// Timed against cub::DeviceSegmentedReduce::Sum and the library's segment_sum (without and with the values count) as
// segment_chunked_probe.cu is. Build: cmake --build build --target segment_block_probe; run:
// build/bench/segment_block_probe [reps]
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

// Block of block_warps warps a segment: each warp stages 8 rows (one region, 4 KiB) of the segment through cp.async
// and reduces them to the region's root; warp 0 pushes the region roots in position order (and the last, partial
// region's rows and tail from its stager's buffer) into its counter. Short segments: one warp each, in turn.
inline constexpr int block_warps = 4;
inline constexpr int region_vectors = 256;                // 8 rows x 32 lanes
inline constexpr int stage_vectors = region_vectors + 4;  // + the vector after the region (skewed rows)

template <class R, class T, class Bounds, int BlocksPerSm>
__global__ void __launch_bounds__(32 * block_warps, BlocksPerSm)
    block_segment_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t segments, Bounds bounds) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int lane_level = tile_shape<T>::lane_level;
  constexpr std::uint64_t segment = 32 * V;
  constexpr std::uint64_t region = 8 * segment;
  using Acc = plain_accumulator<R>;
  __shared__ uint4 stage[2][block_warps][stage_vectors];
  __shared__ Acc region_roots[2][block_warps];
  const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
  const widened_leaf<Acc> leaf{};
  unsigned turn = 0;  // the short segments go to the block's warps in turn
  for_each_block_segment(segments, bounds, [&](std::uint64_t slot, std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t len = end - begin;
    if (len < region) {
      if (int(turn++ % block_warps) == warp) {
        const R result = short_segment_sum<R, T>(values + begin, len);
        if (lane == 0) out[slot] = result;
      }
      return;
    }
    const T* x = values + begin;
    const unsigned skew = unsigned(reinterpret_cast<std::uintptr_t>(x) & 15);
    const unsigned skew_elements = skew / unsigned(sizeof(T));
    const char* aligned = reinterpret_cast<const char*>(x) - skew;
    const std::uint64_t vectors = (skew + len * sizeof(T) + 15) / 16;
    const bool head_whole = skew == 0 || begin * sizeof(T) >= skew;
    const std::uint64_t last = vectors - 1;
    const unsigned last_elements = unsigned(skew + len * sizeof(T) - last * 16) / unsigned(sizeof(T));
    // Vector k of the segment's aligned span into dst: a 16-byte asynchronous copy, or element by element where the
    // vector reaches outside the segment at its ends.
    const auto stage_vector = [&](std::uint64_t k, uint4* dst) {
      if (k >= vectors) return;
      if (k == 0 && !head_whole) {
        T* el = reinterpret_cast<T*>(dst);
        for (unsigned i = skew_elements; i < unsigned(V); ++i) el[i] = x[i - skew_elements];
      } else if (k == last && last_elements < unsigned(V)) {
        T* el = reinterpret_cast<T*>(dst);
        for (unsigned i = 0; i < unsigned(V); ++i) el[i] = i < last_elements ? x[k * V + i - skew_elements] : T{};
      } else {
        copy_vector_async(dst, aligned + k * 16);
      }
    };
    // Row q's lane vector from a stage buffer (words `words`).
    const auto read = [&](const uint4* buffer, int q) {
      if (skew == 0) return buffer[q * 32 + lane];
      const unsigned* words = reinterpret_cast<const unsigned*>(buffer);
      const unsigned word = unsigned(q) * 128 + 4 * unsigned(lane) + (skew >> 2);
      if constexpr (sizeof(T) <= 4) {
        if ((skew & 3) == 0) return ring_lane_vector<true>(words, ~0u, word, 0, lane);
      }
      return ring_lane_vector<false>(words, ~0u, word, skew & 3, lane);
    };
    const std::uint64_t regions = (len + region - 1) / region;  // the last may be partial
    warp_counter<Acc> counter;
    const std::uint64_t passes = (regions + block_warps - 1) / block_warps;
    // Stages this warp's region of pass p into buffer p & 1 (one commit group, empty past the last region).
    const auto issue = [&](std::uint64_t p) {
      const std::uint64_t r = p * block_warps + std::uint64_t(warp);
      uint4* buffer = stage[p & 1][warp];
      if (r < regions) {
        const std::uint64_t base = r * region_vectors;
#pragma unroll
        for (int i = 0; i < 8; ++i) stage_vector(base + std::uint64_t(32 * i + lane), &buffer[32 * i + lane]);
        if (lane == 0 && skew != 0) stage_vector(base + region_vectors, &buffer[region_vectors]);
      }
      commit_async_copies();
    };
    issue(0);
    for (std::uint64_t p = 0; p < passes; ++p) {
      __syncwarp();  // every lane has read the buffer that the next issue refills
      issue(p + 1);
      wait_async_copies_but<1>();
      __syncwarp();
      const std::uint64_t r = p * block_warps + std::uint64_t(warp);
      if (r < regions && (r + 1) * region <= len) {
        Acc lane_root[8];
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          Acc node[V];
          vector_leaves<Acc, T>(read(stage[p & 1][warp], q),
                                r * region + std::uint64_t(q) * segment + std::uint64_t(lane) * V, leaf, node);
          lane_root[q] = lane_tree<Acc, V>(node);
        }
        const Acc root = warp_rows_root<8>(lane_root);
        if (lane == 0) region_roots[p & 1][warp] = root;
      }
      __syncthreads();
      if (warp == 0) {
        for (int w = 0; w < block_warps; ++w) {
          const std::uint64_t rw = p * block_warps + std::uint64_t(w);
          if (rw >= regions) break;
          if ((rw + 1) * region <= len) {
            counter.push(region_roots[p & 1][w], lane_level + 8);
          } else {
            // The partial region: its full rows one by one, then its tail, from warp w's buffer.
            const std::uint64_t at = rw * region;
            const int rows = int((len - at) / segment);
            for (int q = 0; q < rows; ++q)
              push_segment_root<Acc, T>(read(stage[p & 1][w], q), at + std::uint64_t(q) * segment, leaf, counter);
            const int rest = int(len - at - std::uint64_t(rows) * segment);
            if (rest > 0) {
              const T* elements = reinterpret_cast<const T*>(stage[p & 1][w]) + skew_elements + rows * int(segment);
              Acc node[V];
#pragma unroll
              for (int i = 0; i < V; ++i)
                node[i] = lane * V + i < rest ? leaf(elements[lane * V + i],
                                                     at + std::uint64_t(rows) * segment + std::uint64_t(lane * V + i))
                                              : Acc{};
              push_tail_nodes<Acc, T>(node, rest, counter);
            }
          }
        }
      }
    }
    wait_async_copies_but<0>();
    __syncthreads();  // warp 0 has read the last pass's buffers and roots before the next segment's stages
    if (warp == 0) {
      const R result = canonicalize_nan(counter.fold().result());
      if (lane == 0) out[slot] = result;
    }
  });
}

// Non-coherent loads with an L2 fetch-size hint (Hint 1: L2::128B, 2: L2::256B).
template <int Hint>
__device__ __forceinline__ uint4 load16_hinted(const void* p) {
  uint4 r;
  if constexpr (Hint == 1)
    asm volatile("ld.global.nc.L2::128B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  else
    asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  return r;
}
template <int Hint>
__device__ __forceinline__ unsigned load4_hinted(const void* p) {
  unsigned r;
  if constexpr (Hint == 1)
    asm volatile("ld.global.nc.L2::128B.u32 %0, [%1];" : "=r"(r) : "l"(p));
  else
    asm volatile("ld.global.nc.L2::256B.u32 %0, [%1];" : "=r"(r) : "l"(p));
  return r;
}

// This lane's vectors of the region of `count` elements at x (rows of 32 lane vectors; count <= 8 rows): raw[q] for
// the full rows q < count / (32 V), one 16-byte load where x is 16-byte aligned and V element loads where it is not
// (one branch a region, so that each form's loads are one straight run), the rest zero; and `tail`, this lane's
// elements of the row that holds the region's end when it is not whole (zero past the end). All loads are issued
// before any is used.
template <class T, bool NcElements, int Rows, bool Realign = false, int Hint = 0>
__device__ __forceinline__ void load_region(const T* __restrict__ x, bool aligned, int count, uint4 (&raw)[Rows],
                                            T (&tail)[tile_shape<T>::vector_elements], uint4& after) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = int(threadIdx.x & 31);
  const int rows = count / (32 * V), rest = count - rows * 32 * V;
  if constexpr (Realign && sizeof(T) >= 4) {
    if (aligned) {
#pragma unroll
      for (int q = 0; q < Rows; ++q)
        raw[q] = q < rows ? __ldg(reinterpret_cast<const uint4*>(x + (q * 32 + lane) * V)) : make_uint4(0, 0, 0, 0);
    } else {
      // Whole aligned vectors: raw[q] = aligned vector q 32 + L (and, in lane 0, `after`: the aligned vector after the
      // last full row); region_lane_roots realigns them row by row with shuffles.
      const unsigned skew = unsigned(reinterpret_cast<std::uintptr_t>(x) & 15);
      const uint4* a = reinterpret_cast<const uint4*>(reinterpret_cast<const char*>(x) - skew);
#pragma unroll
      for (int q = 0; q < Rows; ++q) raw[q] = q < rows ? __ldg(a + q * 32 + lane) : make_uint4(0, 0, 0, 0);
      if (lane == 0 && rows > 0) after = __ldg(a + rows * 32);
    }
  } else if (Hint != 0 && aligned) {
#pragma unroll
    for (int q = 0; q < Rows; ++q)
      raw[q] = q < rows ? load16_hinted<Hint>(x + (q * 32 + lane) * V) : make_uint4(0, 0, 0, 0);
  } else if (Hint != 0 && sizeof(T) == 4) {
#pragma unroll
    for (int q = 0; q < Rows; ++q) {
      const T* p = x + (q * 32 + lane) * V;
      raw[q] = q < rows ? make_uint4(load4_hinted<Hint>(p), load4_hinted<Hint>(p + 1), load4_hinted<Hint>(p + 2),
                                     load4_hinted<Hint>(p + 3))
                        : make_uint4(0, 0, 0, 0);
    }
  } else if (aligned) {
#pragma unroll
    for (int q = 0; q < Rows; ++q)
      raw[q] = q < rows ? __ldg(reinterpret_cast<const uint4*>(x + (q * 32 + lane) * V)) : make_uint4(0, 0, 0, 0);
  } else if (NcElements && sizeof(T) == 4 && (reinterpret_cast<std::uintptr_t>(x) & 7) == 0) {
#pragma unroll
    for (int q = 0; q < Rows; ++q) {
      const uint2* p = reinterpret_cast<const uint2*>(x + (q * 32 + lane) * V);
      if (q < rows) {
        const uint2 lo = __ldg(p), hi = __ldg(p + 1);
        raw[q] = make_uint4(lo.x, lo.y, hi.x, hi.y);
      } else {
        raw[q] = make_uint4(0, 0, 0, 0);
      }
    }
  } else if (NcElements) {
#pragma unroll
    for (int q = 0; q < Rows; ++q) {
      if (q < rows) {
        const unsigned short* p16 = reinterpret_cast<const unsigned short*>(x + (q * 32 + lane) * V);
        const unsigned* p32 = reinterpret_cast<const unsigned*>(x + (q * 32 + lane) * V);
        if constexpr (sizeof(T) == 2) {
          unsigned short h[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) h[i] = __ldg(p16 + i);
          std::memcpy(&raw[q], h, sizeof(uint4));
        } else {
          raw[q] = make_uint4(__ldg(p32), __ldg(p32 + 1), __ldg(p32 + 2), __ldg(p32 + 3));
        }
      } else {
        raw[q] = make_uint4(0, 0, 0, 0);
      }
    }
  } else {
#pragma unroll
    for (int q = 0; q < Rows; ++q)
      raw[q] = q < rows ? load_lane_vector<T, false>(x + (q * 32 + lane) * V) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int i = 0; i < V; ++i) tail[i] = lane * V + i < rest ? x[rows * 32 * V + lane * V + i] : T{};
}

// The lane roots of a region's rows (from load_region's raw; rows past the full ones give unused values) and this
// lane's leaves of its tail (Acc{} past the end); `at` is the region's first index in the segment.
template <class Acc, class T, int Rows, bool Realign = false>
__device__ __forceinline__ void region_lane_roots(const uint4 (&raw)[Rows],
                                                  const T (&tail)[tile_shape<T>::vector_elements], std::uint64_t at,
                                                  int count, Acc (&lane_root)[Rows],
                                                  Acc (&tail_leaves)[tile_shape<T>::vector_elements], unsigned s = 0,
                                                  uint4 after = {}) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int segment = 32 * V;
  const int lane = int(threadIdx.x & 31);
  const widened_leaf<Acc> leaf{};
  const int rows = count / segment, rest = count - rows * segment;
#pragma unroll
  for (int q = 0; q < Rows; ++q) {
    uint4 r = raw[q];
    if constexpr (Realign && sizeof(T) >= 4) {
      if (s != 0) {
        // Words s .. s + 3 of this lane's aligned vector and the next lane's (lane 31: row q + 1's lane 0, which
        // lane 0 offers; past the last full row, `after`).
        const uint4 offer = lane != 0 ? raw[q] : q + 1 < Rows && q + 1 < rows ? raw[q + 1 < Rows ? q + 1 : q] : after;
        const int from = (lane + 1) & 31;
        const unsigned n0 = __shfl_sync(0xffffffffu, offer.x, from), n1 = __shfl_sync(0xffffffffu, offer.y, from);
        const unsigned n2 = __shfl_sync(0xffffffffu, offer.z, from);
        const uint4 c = raw[q];
        if constexpr (sizeof(T) == 8) {
          r = make_uint4(c.z, c.w, n0, n1);  // s == 2
        } else {
          r = s == 1   ? make_uint4(c.y, c.z, c.w, n0)
              : s == 2 ? make_uint4(c.z, c.w, n0, n1)
                       : make_uint4(c.w, n0, n1, n2);
        }
      }
    }
    Acc node[V];
    vector_leaves<Acc, T>(r, at + std::uint64_t(q * 32 + lane) * V, leaf, node);
    lane_root[q] = lane_tree<Acc, V>(node);
  }
#pragma unroll
  for (int i = 0; i < V; ++i)
    tail_leaves[i] = lane * V + i < rest ? leaf(tail[i], at + std::uint64_t(rows * segment + lane * V + i)) : Acc{};
}

// The root of a region of Rows complete rows from its lane roots: warp_rows_root for 8 rows; for 4 or 2, each row's
// butterfly and the rows joined pairwise (the same nodes).
template <int Rows, class Acc>
__device__ __forceinline__ Acc region_root(Acc (&lane_root)[Rows]) {
  if constexpr (Rows == 8) {
    return warp_rows_root<8>(lane_root);
  } else {
    Acc r[Rows];
#pragma unroll
    for (int q = 0; q < Rows; ++q) r[q] = lane_butterfly_root(lane_root[q]);
#pragma unroll
    for (int width = Rows; width > 1; width /= 2)
#pragma unroll
      for (int i = 0; i < width / 2; ++i) r[i] = detail::merged(r[2 * i], r[2 * i + 1]);
    return r[0];
  }
}

// The register form: blocks of 4 warps, each tile of a long segment held in registers (warp w loads rows 8w .. 8w + 7,
// one region, all 8 loads in flight) and reduced to its region's root; after one block barrier a tile, warp 0 pushes
// the tile's region roots in position order. The region that holds the segment's end leaves its rows' lane roots and
// its tail's leaves in shared memory for warp 0. Segments shorter than a region: one warp each, in turn, with the same
// loads (its rows' roots and its tail pushed into its own counter).
template <class R, class T, class Bounds, int BlocksPerSm, bool NcElements = false, int Warps = block_warps,
          int Rows = 8, bool Realign = false, int Tag = 0, int Hint = 0>
__global__ void __launch_bounds__(32 * Warps, BlocksPerSm)
    register_block_segment_kernel(const T* __restrict__ values, R* __restrict__ out, std::uint64_t segments,
                                  Bounds bounds) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int lane_level = tile_shape<T>::lane_level;
  constexpr int segment = 32 * V;
  constexpr int region = Rows * segment;
  constexpr int region_level = lane_level + 5 + (Rows == 8 ? 3 : Rows == 4 ? 2 : 1);
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
      uint4 after = make_uint4(0, 0, 0, 0);
      load_region<T, NcElements, Rows, Realign, Hint>(x, aligned, int(len), raw, tail, after);
      Acc lane_root[Rows], tail_leaves[V];
      region_lane_roots<Acc, T, Rows, Realign>(raw, tail, 0, int(len), lane_root, tail_leaves,
                                               aligned ? 0u : unsigned(reinterpret_cast<std::uintptr_t>(x) & 15) >> 2,
                                               after);
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
      uint4 after = make_uint4(0, 0, 0, 0);
      load_region<T, NcElements, Rows, Realign, Hint>(x + at, aligned, count, raw, tail, after);
      Acc lane_root[Rows], tail_leaves[V];
      region_lane_roots<Acc, T, Rows, Realign>(
          raw, tail, at, count, lane_root, tail_leaves,
          aligned ? 0u : unsigned(reinterpret_cast<std::uintptr_t>(x + at) & 15) >> 2, after);
      if (count == region) {
        const Acc root = region_root<Rows>(lane_root);
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
            counter.push(region_roots[t & 1][w], region_level);
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

int main(int argc, char** argv) {
  using namespace detred::cuda::detail;
  using segment_probe::check;
  using segment_probe::csr_bounds;
  const segment_probe::probe_setup setup = segment_probe::setup(argc, argv);
  const int reps = setup.reps;
  const auto grid = [&](std::uint64_t segments) { return setup.grid(segments); };
  const auto forms = [&](auto type) {
    using T = decltype(type);
    // Shared-memory carveouts: the largest shared memory (as the library's staged kernel asks), the largest L1, or
    // the driver's default; each form its own instantiation (the last template argument), so that each keeps its own.
    const auto carve = [](const void* kernel, int carveout) {
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout), __LINE__);
    };
    carve(reinterpret_cast<const void*>(block_segment_kernel<T, T, csr_bounds, 8>), cudaSharedmemCarveoutMaxShared);
    carve(reinterpret_cast<const void*>(register_block_segment_kernel<T, T, csr_bounds, 7>),
          cudaSharedmemCarveoutMaxShared);
    carve(reinterpret_cast<const void*>(register_block_segment_kernel<T, T, csr_bounds, 7, false, 4, 8, false, 2>),
          cudaSharedmemCarveoutMaxL1);
    const auto regs = [&](auto kernel, std::uint64_t per_block) {
      return [&, kernel, per_block](const T* v, const int* o, std::uint64_t s, T* out) {
        kernel<<<grid((s + per_block - 1) / per_block), 128>>>(v, out, s, csr_bounds{o});
      };
    };
    return std::vector<segment_probe::form<T>>{
        {"block4x8",
         [&](const T* v, const int* o, std::uint64_t s, T* out) {
           block_segment_kernel<T, T, csr_bounds, 8><<<grid(s), 128>>>(v, out, s, csr_bounds{o});
         }},
        {"regs4x7shared", regs(register_block_segment_kernel<T, T, csr_bounds, 7>, 1)},
        {"regs4x7", regs(register_block_segment_kernel<T, T, csr_bounds, 7, false, 4, 8, false, 1>, 1)},
        {"regs4x7L1", regs(register_block_segment_kernel<T, T, csr_bounds, 7, false, 4, 8, false, 2>, 1)},
        {"regs4x7nc", regs(register_block_segment_kernel<T, T, csr_bounds, 7, true, 4, 8, false, 1>, 1)},
        {"regs4x7g2", regs(register_block_segment_kernel<T, T, csr_bounds, 7, false, 4, 8, false, 1>, 2)},
        {"regs4x8", regs(register_block_segment_kernel<T, T, csr_bounds, 8, false, 4, 8, false, 1>, 1)},
        {"regs4x7h128", regs(register_block_segment_kernel<T, T, csr_bounds, 7, false, 4, 8, false, 1, 1>, 1)},
        {"regs4x7h256", regs(register_block_segment_kernel<T, T, csr_bounds, 7, false, 4, 8, false, 1, 2>, 1)},
        {"w2r8x12", [&](const T* v, const int* o, std::uint64_t s, T* out) {
           register_block_segment_kernel<T, T, csr_bounds, 12, false, 2, 8, false, 1><<<grid(s), 64>>>(v, out, s, csr_bounds{o});
         }},
        {"w2r8x14", [&](const T* v, const int* o, std::uint64_t s, T* out) {
           register_block_segment_kernel<T, T, csr_bounds, 14, false, 2, 8, false, 1><<<grid(s), 64>>>(v, out, s, csr_bounds{o});
         }},
        {"w2r8x16", [&](const T* v, const int* o, std::uint64_t s, T* out) {
           register_block_segment_kernel<T, T, csr_bounds, 16, false, 2, 8, false, 1><<<grid(s), 64>>>(v, out, s, csr_bounds{o});
         }},
        {"realign", regs(register_block_segment_kernel<T, T, csr_bounds, 7, false, 4, 8, true, 1>, 1)},
        {"w8r4x5", [&](const T* v, const int* o, std::uint64_t s, T* out) {
           register_block_segment_kernel<T, T, csr_bounds, 5, false, 8, 4><<<grid(s), 256>>>(v, out, s, csr_bounds{o});
         }}};
  };
  const std::uint64_t differing = segment_probe::run<float>("f32", std::uint64_t{1} << 26, reps, forms(float{})) +
                                  segment_probe::run<double>("f64", std::uint64_t{1} << 25, reps, forms(double{}));
  if (differing != 0)
    std::printf("FAILED: %llu segments differ from the library's bits\n", (unsigned long long)differing);
  return differing == 0 ? 0 : 1;
}
