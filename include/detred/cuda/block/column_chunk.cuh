// One thread sums CW adjacent columns over an aligned chunk of 2^levels rows, in the canonical order over the row
// index (docs/ORDER.md): usable inside users' kernels, the building block of detred's column sums (src/cuda/rows/).
//
// Rows are read 8 at a time (all loads issued before any add), each group of 8 reduced by the complete tree of 8,
// group roots joined in registers by register_tree32 (up to 32 groups = 256 rows), and sub-chunks of 256 rows by a
// second register_tree32. The result per column is T(a, 2^levels) over the row index, a node of the canonical tree of
// the whole column whenever the chunk starts at a multiple of 2^levels rows.
#pragma once

#include <cstdint>
#include <cstring>

#include "detred/accumulators/plain.hpp"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

// The CW values of columns [j, j + CW) of the row at p (p points at column j): one 16-byte load when Vector
// (CW * sizeof(T) == 16 and p 16-byte aligned), else CW element loads. Widened exactly to float.
template <class T, int CW, bool Vector>
__device__ __forceinline__ void load_columns(const T* __restrict__ p, float (&v)[CW]) {
  if constexpr (Vector) {
    static_assert(CW * sizeof(T) == 16);
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
    T e[CW];
    std::memcpy(e, &raw, sizeof(raw));
#pragma unroll
    for (int i = 0; i < CW; ++i) v[i] = widen<float>(e[i]);
  } else {
#pragma unroll
    for (int i = 0; i < CW; ++i) v[i] = widen<float>(p[i]);
  }
}

// Root of 2^levels rows (3 <= levels <= 8) of CW columns, rows first, first + 1, ...: load(i, v) fills v with the CW
// float leaves of row i (e.g. load_columns of x + i * stride + j, or a product of several matrices' entries).
template <int CW, class Load>
__device__ __forceinline__ void column_subchunk_root(const Load& load, std::uint64_t first, int levels,
                                                     float (&root)[CW]) {
  using Acc = plain_accumulator<float>;
  register_tree32<Acc> tree[CW];
  const int groups = 1 << (levels - 3);
  for (int g = 0; g < groups; ++g) {
    float v[8][CW];
#pragma unroll
    for (int i = 0; i < 8; ++i) load(first + std::uint64_t(8 * g + i), v[i]);
#pragma unroll
    for (int c = 0; c < CW; ++c) {
      const float a = (v[0][c] + v[1][c]) + (v[2][c] + v[3][c]);
      const float b = (v[4][c] + v[5][c]) + (v[6][c] + v[7][c]);
      root[c] = tree[c].push(Acc::from_value(a + b), g).sum;
    }
  }
}

// Root of 2^levels rows (3 <= levels <= 13) of CW columns, rows first, first + 1, ... (load as above).
template <int CW, class Load>
__device__ __forceinline__ void column_chunk_root(const Load& load, std::uint64_t first, int levels,
                                                  float (&root)[CW]) {
  if (levels <= 8) {
    column_subchunk_root<CW>(load, first, levels, root);
    return;
  }
  using Acc = plain_accumulator<float>;
  register_tree32<Acc> tree[CW];
  const int subchunks = 1 << (levels - 8);
  for (int s = 0; s < subchunks; ++s) {
    float sub[CW];
    column_subchunk_root<CW>(load, first + std::uint64_t(s) * 256, 8, sub);
#pragma unroll
    for (int c = 0; c < CW; ++c) root[c] = tree[c].push(Acc::from_value(sub[c]), s).sum;
  }
}

}  // namespace detred::cuda
