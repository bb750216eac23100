// One warp reduces one row of any length in the canonical order (docs/ORDER.md), usable inside users' kernels: the
// building block of detred's batch-invariant row reductions (src/cuda/rows/).
//
// A row of n elements, leaves leaf(x[i], i) (any mergeable accumulator: plain, Neumaier, max, Welford, log-sum-exp),
// is cut into the aligned blocks of n's binary digits, read as:
//   - full warp tiles of 2^tile_level elements (32 passes x 32 lanes x one 16-byte vector, the transpose-reduction of
//     warp_tile.cuh), each a complete subtree T(a, 2^tile_level);
//   - then full segments of 32 V elements (one vector per lane, a 5-level butterfly), each T(a, 2^segment_level);
//   - then the tail (< 32 V elements): padded, and only its complete nodes that lie inside the row are used - the roots
//     of the tail's own aligned blocks, taken from the lane tree and from the butterfly as they form.
// Every root is pushed at its level into warp_counter (a binary counter whose level-k node lives in lane k) and the
// counter is left-folded: the canonical reduce of the row, a function of n and the values only - not of the row's
// position, of the other rows or of the launch. Rows must be shorter than 2^32 elements.
#pragma once

#include <cstdint>
#include <cstring>

#include "detred/cuda/detail/registers.cuh"
#include "detred/cuda/warp/warp_tile.cuh"

namespace detred::cuda {

namespace detail {
// __shfl_sync of every 32-bit word of v from lane `source`.
template <class Acc>
__device__ __forceinline__ Acc shuffle_from(const Acc& v, int source) {
  unsigned w[words_of<Acc>];
  std::memcpy(w, &v, sizeof(Acc));
#pragma unroll
  for (int i = 0; i < words_of<Acc>; ++i) w[i] = __shfl_sync(0xffffffffu, w[i], source);
  Acc out;
  std::memcpy(&out, w, sizeof(Acc));
  return out;
}
}  // namespace detail

// The binary counter of docs/ORDER.md spread over a warp: lane k holds the pending root of level k. push and fold are
// warp-uniform (all 32 lanes call them with the same arguments); levels 0..31.
template <class Acc>
struct warp_counter {
  Acc node{};
  std::uint64_t count = 0;

  __device__ __forceinline__ void push(Acc value, int level) {
    const int lane = threadIdx.x & 31;
    count += std::uint64_t{1} << level;
    // The carries: the pending roots of the levels that the addition cleared, each the left operand.
    while (!((count >> level) & 1)) {
      value = detail::merged(detail::shuffle_from(node, level), value);
      ++level;
    }
    if (lane == level) node = value;
  }

  // The left fold of the pending roots, largest first; Acc{} when nothing was pushed. Returned in every lane.
  __device__ __forceinline__ Acc fold() const {
    if (count == 0) return Acc{};
    int level = 63 - __clzll((long long)count);
    Acc acc = detail::shuffle_from(node, level);
    for (--level; level >= 0; --level)
      if ((count >> level) & 1) acc = detail::merged(acc, detail::shuffle_from(node, level));
    return acc;
  }
};

// The leaves of one lane's 16-byte vector: leaf(e[i], first + i) for its V elements (first: the row index of e[0]).
template <class Acc, class T, class Leaf>
__device__ __forceinline__ void vector_leaves(const uint4& raw, std::uint64_t first, const Leaf& leaf,
                                              Acc (&node)[tile_shape<T>::vector_elements]) {
  constexpr int V = tile_shape<T>::vector_elements;
  T e[V];
  std::memcpy(e, &raw, sizeof(raw));
#pragma unroll
  for (int i = 0; i < V; ++i) node[i] = leaf(e[i], first + i);
}

// The tree over one lane's V leaves.
template <class Acc, int V>
__device__ __forceinline__ Acc lane_tree(Acc (&node)[V]) {
#pragma unroll
  for (int width = V; width > 1; width /= 2) {
#pragma unroll
    for (int i = 0; i < width / 2; ++i) node[i] = detail::merged(node[2 * i], node[2 * i + 1]);
  }
  return node[0];
}

// Root of a warp tile (2^tile_level elements at `tile`) with leaves leaf(x): warp_tile_root with a leaf function.
template <class Acc, class T, bool Aligned, class Leaf>
__device__ __forceinline__ Acc warp_tile_root_of(const T* __restrict__ tile, std::uint64_t first, const Leaf& leaf) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  uint4 raw[32];
#pragma unroll
  for (int row = 0; row < 32; ++row) raw[row] = load_lane_vector<T, Aligned>(tile + (row * 32 + lane) * V);
  Acc v[32];
#pragma unroll
  for (int row = 0; row < 32; ++row) {
    Acc node[V];
    vector_leaves<Acc, T>(raw[row], first + std::uint64_t(row * 32 + lane) * V, leaf, node);
    v[row] = lane_tree<Acc, V>(node);
  }
  return warp_rows_root<32>(v);
}

// Pushes the roots of the tail's aligned blocks from its leaves: the tail is the last r elements of a row
// (0 < r < 32 V), a multiple of 32 V elements from the row start, and node[i] is this lane's leaf of tail element
// lane V + i (Acc{} past r); its blocks are those of r's binary digits. node is consumed.
template <class Acc, class T>
__device__ __forceinline__ void push_tail_nodes(Acc (&node)[tile_shape<T>::vector_elements], int r,
                                                warp_counter<Acc>& counter) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int lv = tile_shape<T>::lane_level;
  const int lane = threadIdx.x & 31;
  // Blocks inside one lane (levels < lv) all lie in lane r >> lv: their roots are nodes of that lane's tree.
  Acc small[lv > 0 ? lv : 1];
  const int within = r & (V - 1);
#pragma unroll
  for (int k = 0; k < lv; ++k) {
    // Level-k nodes: node[i] for i < V >> k; the block of bit k starts at (within >> (k + 1)) << (k + 1).
    const int index = (within >> (k + 1)) << 1;
#pragma unroll
    for (int i = 0; i < (V >> k); ++i)
      if (i == index) small[k] = node[i];
#pragma unroll
    for (int i = 0; i < (V >> (k + 1)); ++i) node[i] = detail::merged(node[2 * i], node[2 * i + 1]);
  }
  // Blocks of lv + j levels (j = 0..4): lane groups of 2^j lanes, captured before butterfly step j.
  Acc value = node[0], captured{};
#pragma unroll
  for (int j = 0; j < 5; ++j) {
    if (((r >> (j + lv)) & 1) && lane == ((r >> (j + lv + 1)) << (j + 1))) captured = value;
    if (j < 4) {
      const Acc other = detail::shuffle_xor(value, 1 << j);
      value = detail::merged_with_partner(value, other, (lane >> j) & 1);
    }
  }
#pragma unroll
  for (int j = 4; j >= 0; --j)
    if ((r >> (j + lv)) & 1) counter.push(detail::shuffle_from(captured, (r >> (j + lv + 1)) << (j + 1)), j + lv);
#pragma unroll
  for (int k = lv - 1; k >= 0; --k)
    if ((r >> k) & 1) counter.push(detail::shuffle_from(small[k], r >> lv), k);
}

// push_tail_nodes with the leaves read from `tail` (the tail's first element, row index `first`).
template <class Acc, class T, class Leaf>
__device__ __forceinline__ void push_tail_blocks(const T* __restrict__ tail, std::uint64_t first, int r,
                                                 const Leaf& leaf, warp_counter<Acc>& counter) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  Acc node[V];
#pragma unroll
  for (int i = 0; i < V; ++i)
    node[i] = lane * V + i < r ? leaf(tail[lane * V + i], first + std::uint64_t(lane * V + i)) : Acc{};
  push_tail_nodes<Acc, T>(node, r, counter);
}

// The root of one full segment from its 32 lane roots (`v` this lane's), in every lane: a 5-level butterfly, lower
// lanes on the left, so the complete tree over the lanes in position order.
template <class Acc>
__device__ __forceinline__ Acc lane_butterfly_root(Acc v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int level = 0; level < 5; ++level) {
    const Acc other = detail::shuffle_xor(v, 1 << level);
    v = detail::merged_with_partner(v, other, (lane >> level) & 1);
  }
  return v;
}

// The root of one full segment (32 lanes x one 16-byte vector, `raw` this lane's, starting at row index `first`), a
// complete subtree at level lane_level + 5, in every lane: the lane tree, then lane_butterfly_root.
template <class Acc, class T, class Leaf>
__device__ __forceinline__ Acc warp_segment_root(const uint4& raw, std::uint64_t first, const Leaf& leaf) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  Acc node[V];
  vector_leaves<Acc, T>(raw, first + std::uint64_t(lane) * V, leaf, node);
  return lane_butterfly_root(lane_tree<Acc, V>(node));
}

// Pushes the root of one full segment (warp_segment_root) at its level.
template <class Acc, class T, class Leaf>
__device__ __forceinline__ void push_segment_root(const uint4& raw, std::uint64_t first, const Leaf& leaf,
                                                  warp_counter<Acc>& counter) {
  counter.push(warp_segment_root<Acc, T>(raw, first, leaf), tile_shape<T>::lane_level + 5);
}

// Pushes the roots of row[at, n) into counter, read as full segments and then the tail: the part of warp_row_root after
// its tiles. `at` is a multiple of 32 V and every level below counter's next push is empty (at is a multiple of the
// largest block pushed so far), so that the counter ends holding the canonical decomposition of [0, n). Warp-uniform.
template <class Acc, class T, bool Aligned, class Leaf>
__device__ __forceinline__ void push_segments_and_tail(const T* __restrict__ row, std::uint64_t at, std::uint64_t n,
                                                       const Leaf& leaf, warp_counter<Acc>& counter) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr std::uint64_t segment = 32 * V;
  const int lane = threadIdx.x & 31;
  const int segments = int((n - at) / segment);
  for (int s0 = 0; s0 < segments; s0 += 8) {
    uint4 raw[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (s0 + j < segments) raw[j] = load_lane_vector<T, Aligned>(row + at + (s0 + j) * segment + lane * V);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (s0 + j < segments) push_segment_root<Acc, T>(raw[j], at + (s0 + j) * segment, leaf, counter);
  }
  at += std::uint64_t(segments) * segment;
  const int r = int(n - at);
  if (r > 0) push_tail_blocks<Acc, T>(row + at, at, r, leaf, counter);
}

// The canonical root of leaf(row[i], i) for i in [0, n) (Acc{} for n = 0), returned in every lane; all 32 lanes call it
// with the same row and n. Aligned: row is 16-byte aligned (vector loads). Tiles = false reads every row by segments
// (the same bits: a tile is 32 segments' complete tree), leaving out the tile path and its 128 registers of loads in
// flight, so that more warps fit on a multiprocessor: the choice for short rows.
template <class Acc, class T, bool Aligned, class Leaf, bool Tiles = true>
__device__ Acc warp_row_root(const T* __restrict__ row, std::uint64_t n, const Leaf& leaf) {
  constexpr int tile_level = tile_shape<T>::tile_level;
  warp_counter<Acc> counter;
  const std::uint64_t tiles = Tiles ? n >> tile_level : 0;
  if constexpr (Tiles) {
    for (std::uint64_t t = 0; t < tiles; ++t)
      counter.push(warp_tile_root_of<Acc, T, Aligned>(row + (t << tile_level), t << tile_level, leaf), tile_level);
  }
  push_segments_and_tail<Acc, T, Aligned>(row, tiles << tile_level, n, leaf, counter);
  return counter.fold();
}

}  // namespace detred::cuda

namespace detred::cuda {

// The canonical root of a row whose full segments the warp already holds in registers: raw[s] is this lane's 16-byte
// vector of segment s (row + s * 32 V + lane * V) for s < n / (32 V) <= Segs; the tail (n mod 32 V elements) is read
// from `row`. The same operations in the same order as warp_row_root (a tile is 32 segments' complete tree), so the
// same bits; what it saves is the reads: a caller that needs the row again (a second reduction, an output) keeps it.
template <class Acc, class T, int Segs, class Leaf>
__device__ __forceinline__ Acc warp_registers_row_root(const uint4 (&raw)[Segs], const T* __restrict__ row,
                                                       std::uint64_t n, const Leaf& leaf) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr std::uint64_t segment = 32 * V;
  const int segments = int(n / segment);
  if constexpr (Segs == 8 || Segs == 16 || Segs == 32) {
    // A row of exactly Segs segments is one complete tree of Segs x 32 lane vectors (the counter would merge the
    // segment roots pairwise into it): the transpose-reduction computes the same nodes with Segs + 4
    // shuffles instead of 5 per segment plus the counter's carries.
    if (n == std::uint64_t(Segs) * segment) {
      const int lane = threadIdx.x & 31;
      Acc v[Segs];
#pragma unroll
      for (int s = 0; s < Segs; ++s) {
        Acc node[V];
        vector_leaves<Acc, T>(raw[s], std::uint64_t(s) * segment + std::uint64_t(lane) * V, leaf, node);
        v[s] = lane_tree<Acc, V>(node);
      }
      return warp_rows_root<Segs>(v);
    }
  }
  warp_counter<Acc> counter;
#pragma unroll
  for (int s = 0; s < Segs; ++s)
    if (s < segments) push_segment_root<Acc, T>(raw[s], std::uint64_t(s) * segment, leaf, counter);
  const std::uint64_t at = std::uint64_t(segments) * segment;
  const int r = int(n - at);
  if (r > 0) push_tail_blocks<Acc, T>(row + at, at, r, leaf, counter);
  return counter.fold();
}

}  // namespace detred::cuda
