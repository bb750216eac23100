// Warp-level canonical subtrees straight from global memory, usable inside users' kernels: the building blocks of
// detred's device-wide sum (src/cuda/canonical_sum_kernels.cuh).
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

#include <cstdint>
#include <cstring>

#include "detred/cuda/detail/registers.cuh"
#include "detred/cuda/warp_reduce.cuh"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

template <class T>
struct tile_shape {
  static constexpr int vector_elements = int(16 / sizeof(T));                            // V
  static constexpr int lane_level = vector_elements == 8 ? 3 : vector_elements == 4 ? 2 : 1;  // log2 V
  static constexpr int tile_level = lane_level + 10;
  static constexpr std::uint64_t elements = std::uint64_t{1} << tile_level;
};

// Root of the tree over the V elements p[0..V) of one lane. Aligned: p is 16-byte aligned (one vector load);
// otherwise V element loads.
template <class Acc, class T, bool Aligned>
__device__ __forceinline__ Acc lane_vector_root(const T* __restrict__ p) {
  using A = typename Acc::value_type;
  constexpr int V = tile_shape<T>::vector_elements;
  T e[V];
  if constexpr (Aligned) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
    std::memcpy(e, &raw, sizeof(raw));
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) e[i] = p[i];
  }
  Acc node[V];
#pragma unroll
  for (int i = 0; i < V; ++i) node[i] = Acc::from_value(widen<A>(e[i]));
#pragma unroll
  for (int width = V; width > 1; width /= 2) {
#pragma unroll
    for (int i = 0; i < width / 2; ++i) node[i] = detail::merged(node[2 * i], node[2 * i + 1]);
  }
  return node[0];
}

namespace detail {
// One step of the transpose-reduction: before it a lane holds 32 >> S row values, after it half as many.
template <int S, class Acc>
__device__ __forceinline__ void transpose_step(Acc (&v)[32], int lane) {
  constexpr int k = 32 >> S;
  const bool upper = (lane >> S) & 1;
#pragma unroll
  for (int j = 0; j < k / 2; ++j) {
    const Acc lo = v[j], hi = v[j + k / 2];
    const Acc send = pick(upper, lo, hi);  // the lower lane keeps rows [0, k/2), the upper lane rows [k/2, k)
    const Acc keep = pick(upper, hi, lo);
    const Acc received = shuffle_xor(send, 1 << S);
    v[j] = merged(pick(upper, received, keep), pick(upper, keep, received));
  }
}
}  // namespace detail

// Root of the warp tile starting at `tile` (tile_shape<T>::elements consecutive elements), returned in every lane.
// Aligned: `tile` is 16-byte aligned. All 32 lanes must call it.
template <class Acc, class T, bool Aligned>
__device__ __forceinline__ Acc warp_tile_root(const T* __restrict__ tile) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  Acc v[32];
#pragma unroll
  for (int row = 0; row < 32; ++row) v[row] = lane_vector_root<Acc, T, Aligned>(tile + (row * 32 + lane) * V);
  detail::transpose_step<0>(v, lane);
  detail::transpose_step<1>(v, lane);
  detail::transpose_step<2>(v, lane);
  detail::transpose_step<3>(v, lane);
  detail::transpose_step<4>(v, lane);
  // Lane l holds row bitreverse5(l): rows 2j, 2j+1 sit in lanes that differ in bit 4, then bit 3, ...
  Acc root = v[0];
#pragma unroll
  for (int mask = 16; mask >= 1; mask /= 2) {
    const Acc other = detail::shuffle_xor(root, mask);
    root = (lane & mask) ? detail::merged(other, root) : detail::merged(root, other);
  }
  return root;
}

// Root of `tiles` (1, 2, 4, 8 or 16; warp-uniform) consecutive warp tiles starting at `chunk`: the complete tree over
// tiles * tile_shape<T>::elements elements, the tile roots joined by a binary counter held in registers. Returned in
// every lane.
template <class Acc, class T, bool Aligned>
__device__ __forceinline__ Acc warp_chunk_root(const T* __restrict__ chunk, int tiles) {
  constexpr std::uint64_t tile = tile_shape<T>::elements;
  Acc s0{}, s1{}, s2{}, s3{};  // pending roots of 1, 2, 4 and 8 tiles (bit k of t set: s_k is pending)
  Acc root{};
#pragma unroll 1
  for (int t = 0; t < tiles; ++t) {
    root = warp_tile_root<Acc, T, Aligned>(chunk + t * tile);
    // Carry like a binary increment: merge with the pending roots of t's trailing one bits, left operand first.
    // Named registers and warp-uniform branches, never an indexed array (which would live in local memory).
    int carried = 0;
    if (t & 1) {
      root = detail::merged(s0, root), carried = 1;
      if (t & 2) {
        root = detail::merged(s1, root), carried = 2;
        if (t & 4) {
          root = detail::merged(s2, root), carried = 3;
          if (t & 8) root = detail::merged(s3, root), carried = 4;
        }
      }
    }
    if (carried == 0) s0 = root;
    if (carried == 1) s1 = root;
    if (carried == 2) s2 = root;
    if (carried == 3) s3 = root;
  }
  return root;  // after the last tile (t = tiles - 1, all ones) every pending root has been merged in
}

}  // namespace detred::cuda
