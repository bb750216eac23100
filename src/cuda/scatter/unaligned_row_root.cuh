// The canonical root of a row that starts off a 16-byte boundary, read with 16-byte loads: the same lane vectors, the
// same tree and so the same bits as warp_row_root<Acc, T, false> (include/detred/cuda/warp/row_warp.cuh), whose
// element-wise loads it replaces.
//
// The row starts o elements past a boundary (0 < o < V, V = 16 / sizeof(T), h = V - o). Lane vector k of the row (its
// elements k V .. k V + V - 1, what warp_row_root reads for one lane of one pass) straddles two aligned vectors: the
// last h elements of A_k, the aligned vector holding element k V, then the first o elements of A_(k + 1). In a pass
// over lane vectors base .. base + 31, lane L loads A_(base + L + 1) with one 16-byte load and receives A_(base + L)
// from lane L - 1 by a shuffle; lane 0 takes the A_base that lane 31 loaded in the previous pass (the head, A_0's
// last h elements, loaded element-wise before the first pass). A funnel shift of the pair by o elements gives the lane
// vector, bit for bit what the element loads give. Only the last aligned vector can reach past the row: it is read
// element-wise, its first o elements only. The tail (after the last full segment) is read as warp_row_root reads it.
#pragma once

#include <cstdint>
#include <cstring>

#include "detred/cuda/warp/row_warp.cuh"

namespace detred::cuda::detail {

// The 16 bytes at byte offset `shift` (1..15, warp-uniform) of the 32 bytes lo:hi (lo first, little-endian).
__device__ __forceinline__ uint4 funnel_vector(const uint4& lo, const uint4& hi, int shift) {
  const unsigned c[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int q = shift >> 2, r = (shift & 3) * 8;
  unsigned out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned a = q == 0 ? c[i] : q == 1 ? c[i + 1] : q == 2 ? c[i + 2] : c[i + 3];
    const unsigned b = q == 0 ? c[i + 1] : q == 1 ? c[i + 2] : q == 2 ? c[i + 3] : c[i + 4];
    out[i] = __funnelshift_r(a, b, r);
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// The shifted reader of one row: `aligned` = row - o (16-byte aligned), n the row's length.
template <class T>
struct unaligned_row {
  static constexpr int V = tile_shape<T>::vector_elements;
  const T* aligned;
  std::uint64_t n;
  int o;
  uint4 carry;  // lane 0: A_base of the next pass

  __device__ __forceinline__ unaligned_row(const T* row, std::uint64_t length, int offset)
      : aligned(row - offset), n(length), o(offset) {
    // The head: A_0's elements o .. V - 1 (row[0 .. h)), the others unused.
    T e[V] = {};
#pragma unroll
    for (int i = 0; i < V; ++i)
      if (i >= o && std::uint64_t(i - o) < n) e[i] = aligned[i];
    std::memcpy(&carry, e, sizeof(carry));
  }

  // A_k for k >= 1: one 16-byte load where it lies inside the row, else its first o elements (all that is used).
  __device__ __forceinline__ uint4 load(std::uint64_t k) const {
    const T* p = aligned + k * V;
    if (k * V + V <= n + std::uint64_t(o)) return __ldg(reinterpret_cast<const uint4*>(p));
    T e[V] = {};
#pragma unroll
    for (int i = 0; i < V; ++i)
      if (i < o) e[i] = p[i];
    uint4 raw;
    std::memcpy(&raw, e, sizeof(raw));
    return raw;
  }

  // This lane's vector of a pass, given `next` = A_(k + 1) loaded by this lane (k = base + lane). Warp-uniform, in
  // pass order.
  __device__ __forceinline__ uint4 lane_vector(const uint4& next) {
    const int lane = threadIdx.x & 31;
    const int from = (lane + 31) & 31;
    const uint4 left = make_uint4(__shfl_sync(0xffffffffu, next.x, from), __shfl_sync(0xffffffffu, next.y, from),
                                  __shfl_sync(0xffffffffu, next.z, from), __shfl_sync(0xffffffffu, next.w, from));
    const uint4 previous = lane == 0 ? carry : left;
    carry = left;  // lane 0 now holds lane 31's A_(base + 32)
    return funnel_vector(previous, next, o * int(sizeof(T)));
  }
};

// warp_row_root<Acc, T, false, Leaf, Tiles>(row, n, leaf) for a row whose address is a multiple of sizeof(T) but not
// of 16 bytes: tiles (Tiles = true) and full segments from shifted 16-byte loads, then the tail. Warp-uniform.
template <class Acc, class T, class Leaf, bool Tiles>
__device__ Acc unaligned_row_root(const T* __restrict__ row, std::uint64_t n, const Leaf& leaf) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr int tile_level = tile_shape<T>::tile_level;
  constexpr std::uint64_t segment = 32 * V;
  const int lane = threadIdx.x & 31;
  const int o = int((reinterpret_cast<std::uintptr_t>(row) & 15) / sizeof(T));
  unaligned_row<T> reader(row, n, o);
  warp_counter<Acc> counter;
  const std::uint64_t tiles = Tiles ? n >> tile_level : 0;
  if constexpr (Tiles) {
    for (std::uint64_t t = 0; t < tiles; ++t) {
      const std::uint64_t first = t << tile_level;
      uint4 raw[32];
#pragma unroll
      for (int r = 0; r < 32; ++r) raw[r] = reader.load(first / V + std::uint64_t(r * 32 + lane) + 1);
      Acc v[32];
#pragma unroll
      for (int r = 0; r < 32; ++r) {
        Acc node[V];
        vector_leaves<Acc, T>(reader.lane_vector(raw[r]), first + std::uint64_t(r * 32 + lane) * V, leaf, node);
        v[r] = lane_tree<Acc, V>(node);
      }
      counter.push(warp_rows_root<32>(v), tile_level);
    }
  }
  std::uint64_t at = tiles << tile_level;
  const int segments = int((n - at) / segment);
  for (int s0 = 0; s0 < segments; s0 += 8) {
    uint4 raw[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (s0 + j < segments) raw[j] = reader.load((at + (s0 + j) * segment) / V + std::uint64_t(lane) + 1);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (s0 + j < segments)
        push_segment_root<Acc, T>(reader.lane_vector(raw[j]), at + (s0 + j) * segment, leaf, counter);
  }
  at += std::uint64_t(segments) * segment;
  const int r = int(n - at);
  if (r > 0) push_tail_blocks<Acc, T>(row + at, at, r, leaf, counter);
  return counter.fold();
}

}  // namespace detred::cuda::detail
