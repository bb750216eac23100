// Warp-level canonical subtrees straight from global memory, usable inside users' kernels: the building blocks of
// detred's device-wide sum (src/cuda/sum/canonical_sum_kernels.cuh).
//
// A warp tile is 32 rows x 32 lanes x one 16-byte vector per lane: V = 16 / sizeof(T) consecutive elements per lane
// (4 float, 2 double, 8 half or bfloat16), 32 V per row, 2^tile_level = 1024 V elements in all. Its root is the
// complete pairwise tree over those consecutive elements (T(a, 2^tile_level), docs/ORDER.md), computed as:
//   - each lane: the tree over its V elements (log2 V levels, in registers);
//   - a transpose-reduction across lanes: step s (s = 0..4) pairs lanes l and l ^ 2^s, which trade half of their row
//     values and merge, the lower lane's operand on the left; afterwards lane l holds the root of row
//     bitreverse5(l), every row a complete tree over its 32 lanes (5 levels for 31 shuffles);
//   - a butterfly over the 32 row roots (5 more levels), rows 2j and 2j+1 first.
// Placed at an element index that is a multiple of the tile size, the result is a node of the canonical tree of the
// whole input, bit for bit what the CPU computes for that block.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "detred/cuda/detail/registers.cuh"
#include "detred/cuda/warp/warp_reduce.cuh"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

template <class T>
struct tile_shape {
  static constexpr int vector_elements = int(16 / sizeof(T));                                 // V
  static constexpr int lane_level = vector_elements == 8 ? 3 : vector_elements == 4 ? 2 : 1;  // log2 V
  static constexpr int tile_level = lane_level + 10;
  static constexpr std::uint64_t elements = std::uint64_t{1} << tile_level;
};

// The 16 bytes one lane reads for one row: V consecutive elements at p. Aligned: p is 16-byte aligned (one vector
// load); otherwise V element loads.
template <class T, bool Aligned>
__device__ __forceinline__ uint4 load_lane_vector(const T* __restrict__ p) {
  if constexpr (Aligned) {
    return __ldg(reinterpret_cast<const uint4*>(p));
  } else {
    constexpr int V = tile_shape<T>::vector_elements;
    T e[V];
#pragma unroll
    for (int i = 0; i < V; ++i) e[i] = p[i];
    uint4 raw;
    std::memcpy(&raw, e, sizeof(raw));
    return raw;
  }
}

// Root of the tree over the V elements packed in `raw` (log2 V levels, in registers).
template <class Acc, class T>
__device__ __forceinline__ Acc lane_vector_root(const uint4& raw) {
  using A = typename Acc::value_type;
  constexpr int V = tile_shape<T>::vector_elements;
  T e[V];
  std::memcpy(e, &raw, sizeof(raw));
  Acc node[V];
#pragma unroll
  for (int i = 0; i < V; ++i) {
    if constexpr (std::is_same_v<T, half>) {
      // The hardware conversion: exact, like widen (every binary16 value is a binary32 value), one instruction.
      node[i] = Acc::from_value(A(__half2float(__ushort_as_half(e[i].bits))));
    } else {
      node[i] = Acc::from_value(widen<A>(e[i]));
    }
  }
#pragma unroll
  for (int width = V; width > 1; width /= 2) {
#pragma unroll
    for (int i = 0; i < width / 2; ++i) node[i] = detail::merged(node[2 * i], node[2 * i + 1]);
  }
  return node[0];
}

// Left-to-right joining of up to 2^Levels (32 or 64) equal-size complete subtrees that arrive in index order, in
// named registers (never an indexed array, which would live in local memory): push(root, t) for t = 0, 1, ... carries
// like a binary increment and returns the root of the block that t completes. After pushing t = 2^k - 1 it returns the
// root of all 2^k subtrees.
template <class Acc, int Levels = 5>
struct register_tree {
  static_assert(Levels == 5 || Levels == 6, "32 or 64 subtrees");
  // Pending roots of 1, 2, 4, 8, 16 (and 32) subtrees: bit k of the count set means s_k is pending.
  Acc s0{}, s1{}, s2{}, s3{}, s4{}, s5{};

  __device__ __forceinline__ Acc push(Acc root, int t) {
    int carried = 0;
    if (t & 1) {
      root = detail::merged(s0, root), carried = 1;
      if (t & 2) {
        root = detail::merged(s1, root), carried = 2;
        if (t & 4) {
          root = detail::merged(s2, root), carried = 3;
          if (t & 8) {
            root = detail::merged(s3, root), carried = 4;
            if (t & 16) {
              root = detail::merged(s4, root), carried = 5;
              if constexpr (Levels == 6)
                if (t & 32) root = detail::merged(s5, root), carried = 6;
            }
          }
        }
      }
    }
    if (carried == 0) s0 = root;
    if (carried == 1) s1 = root;
    if (carried == 2) s2 = root;
    if (carried == 3) s3 = root;
    if (carried == 4) s4 = root;
    if constexpr (Levels == 6)
      if (carried == 5) s5 = root;
    return root;
  }
};
template <class Acc>
using register_tree32 = register_tree<Acc, 5>;

namespace detail {
// One step of the transpose-reduction over Rows row values: before it a lane holds Rows >> S values, after it half
// as many.
template <int S, int Rows, class Acc>
__device__ __forceinline__ void transpose_step(Acc (&v)[Rows], int lane) {
  constexpr int k = Rows >> S;
  const bool upper = (lane >> S) & 1;
#pragma unroll
  for (int j = 0; j < k / 2; ++j) {
    const Acc lo = v[j], hi = v[j + k / 2];
    const Acc send = pick(upper, lo, hi);  // the lower lane keeps rows [0, k/2), the upper lane rows [k/2, k)
    const Acc keep = pick(upper, hi, lo);
    v[j] = merged_with_partner(keep, shuffle_xor(send, 1 << S), upper);
  }
}
}  // namespace detail

// Root of a pass of Rows (8, 16 or 32) rows from its row values per lane (v[row] = the lane's vector root in that row):
// a transpose-reduction across lanes, then a butterfly over the row roots. log2(Rows) transpose steps leave lane l
// with the root of row bitreverse(l mod Rows) over its aligned group of Rows lanes; with fewer than 32 rows, the groups
// are then joined by exchanges over the remaining lane bits (lower lanes' part on the left), so every lane holds a
// complete tree over all 32 lanes of its row. Returned in every lane.
template <int Rows, class Acc>
__device__ __forceinline__ Acc warp_rows_root(Acc (&v)[Rows]) {
  static_assert(Rows == 32 || Rows == 16 || Rows == 8);
  const int lane = threadIdx.x & 31;
  detail::transpose_step<0>(v, lane);
  detail::transpose_step<1>(v, lane);
  detail::transpose_step<2>(v, lane);
  if constexpr (Rows >= 16) detail::transpose_step<3>(v, lane);
  if constexpr (Rows == 32) detail::transpose_step<4>(v, lane);
  Acc root = v[0];
#pragma unroll
  for (int mask = Rows; mask < 32; mask *= 2) {
    root = detail::merged_with_partner(root, detail::shuffle_xor(root, mask), lane & mask);
  }
  // Sibling rows 2j, 2j+1 sit in lanes that differ in the highest row-index lane bit, then the next, ...
#pragma unroll
  for (int mask = Rows / 2; mask >= 1; mask /= 2) {
    root = detail::merged_with_partner(root, detail::shuffle_xor(root, mask), lane & mask);
  }
  return root;
}

// Root of the warp tile starting at `tile` (tile_shape<T>::elements consecutive elements), returned in every lane.
// Aligned: `tile` is 16-byte aligned. All 32 lanes must call it.
template <class Acc, class T, bool Aligned>
__device__ __forceinline__ Acc warp_tile_root(const T* __restrict__ tile) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  Acc v[32];
#pragma unroll
  for (int row = 0; row < 32; ++row)
    v[row] = lane_vector_root<Acc, T>(load_lane_vector<T, Aligned>(tile + (row * 32 + lane) * V));
  return warp_rows_root<32>(v);
}

// Rows per pass in warp_chunk_root: a full tile where the row values are one register each (plain float
// accumulation), half a tile for wider accumulators, so that the pass's values plus the next pass's 16-byte vectors
// fit in registers without spilling (measured on the H100, docs/PERFORMANCE.md).
template <class Acc>
inline constexpr int rows_per_pass = sizeof(Acc) == 4 ? 32 : 16;

// Root of `tiles` (1, 2, 4, 8 or 16; warp-uniform) consecutive warp tiles starting at `chunk`: the complete tree over
// tiles * tile_shape<T>::elements elements. Software-pipelined: the chunk is read in passes of rows_per_pass<Acc> rows
// (each pass an aligned complete subtree, so the pass size changes registers and bytes in flight, never the result),
// and the next Depth passes' vectors (1 or 2; 2 only for passes of 16 rows, whose two passes fit the registers) are
// loaded into registers before the current pass is reduced, so every warp always has Depth passes of loads in
// flight. Pass roots are joined by a register_tree. Returned in every lane.
template <class Acc, class T, bool Aligned, int Depth = 1>
__device__ __forceinline__ Acc warp_chunk_root(const T* __restrict__ chunk, int tiles) {
  constexpr int Rows = rows_per_pass<Acc>;
  static_assert(Depth == 1 || (Depth == 2 && Rows == 16), "two passes in flight only for 16-row passes");
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr std::uint64_t pass_elements = std::uint64_t(Rows) * 32 * V;
  const int lane = threadIdx.x & 31;
  const int passes = tiles * (32 / Rows);  // at most 32 (16 tiles of 16-row passes)
  register_tree<Acc, 5> joined;
  Acc root{};
  const auto load = [&](uint4(&raw)[Rows], int p) {
    const T* pass = chunk + std::uint64_t(p) * pass_elements;
#pragma unroll
    for (int row = 0; row < Rows; ++row) raw[row] = load_lane_vector<T, Aligned>(pass + (row * 32 + lane) * V);
  };
  // Pass p from `raw`, whose registers then take pass p + Depth (if any); the pass root joined.
  const auto reduce_pass = [&](uint4(&raw)[Rows], int p) {
    Acc v[Rows];
#pragma unroll
    for (int row = 0; row < Rows; ++row) v[row] = lane_vector_root<Acc, T>(raw[row]);
    if (p + Depth < passes) load(raw, p + Depth);
    root = joined.push(warp_rows_root<Rows>(v), p);
  };
  uint4 raw0[Rows];
  load(raw0, 0);
  if constexpr (Depth == 1) {
#pragma unroll 1
    for (int p = 0; p < passes; ++p) reduce_pass(raw0, p);
  } else {
    uint4 raw1[Rows];
    if (passes > 1) load(raw1, 1);
#pragma unroll 1
    for (int p = 0; p < passes; p += 2) {
      reduce_pass(raw0, p);
      if (p + 1 < passes) reduce_pass(raw1, p + 1);
    }
  }
  return root;  // after the last pass (p = passes - 1, all ones) every pending root has been merged in
}

}  // namespace detred::cuda
