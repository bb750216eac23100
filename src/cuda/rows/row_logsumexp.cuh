// One row's log-sum-exp on the GPU, the row held by one warp: the two passes of detred/rows/row_accumulators.hpp
// (the row's maximum, then the canonical sum of exp(x_i - max) by warp_row_root), the same bits as the CPU's
// canonical_row_logsumexp. Shared by row_logsumexp (row_kernels.cuh), softmax_forward (norms.cuh) and
// log_softmax_forward (softmax_family.cuh).
#pragma once

#include <cstdint>
#include <cstring>

#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"
#include "detred/rows/row_accumulators.hpp"

namespace detred::cuda::detail {

// The maximum of row[0, n) (-Inf for n = 0), NaN if any element is NaN, in every lane: logsumexp_parts's max. The
// lanes take their elements in any grouping (16-byte vectors, four in flight a lane, where Aligned, then the elements
// one by one; then a butterfly) with fmaxf, which ignores NaN operands, and a NaN flag beside it: two instructions an
// element where ieee_maximum takes about six. fmaxf's choice between +0 and -0 may differ from ieee_maximum's, and no
// result bit depends on it: x - (+0) == x - (-0) for every x but a zero, whose exponential is 1 either way, and
// +0 + log(s) == -0 + log(s).
template <class T, bool Aligned>
__device__ __forceinline__ float warp_row_max(const T* __restrict__ row, std::uint64_t n) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  float m[4] = {minus_infinity<float>(), minus_infinity<float>(), minus_infinity<float>(), minus_infinity<float>()};
  bool nan = false;
  std::uint64_t done = 0;
  if constexpr (Aligned) {
    done = n - n % V;
    constexpr std::uint64_t step = 32 * V;
    std::uint64_t i = std::uint64_t(lane) * V;
    for (; i + 3 * step < done; i += 4 * step) {
      uint4 raw[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) raw[k] = __ldg(reinterpret_cast<const uint4*>(row + i + k * step));
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        T e[V];
        std::memcpy(e, &raw[k], sizeof(raw[k]));
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float v = widen<float>(e[j]);
          m[k] = fmaxf(m[k], v);
          nan |= v != v;
        }
      }
    }
    for (; i < done; i += step) {
      T e[V];
      const uint4 raw = __ldg(reinterpret_cast<const uint4*>(row + i));
      std::memcpy(e, &raw, sizeof(raw));
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float v = widen<float>(e[j]);
        m[0] = fmaxf(m[0], v);
        nan |= v != v;
      }
    }
  }
  for (std::uint64_t i = done + std::uint64_t(lane); i < n; i += 32) {
    const float v = widen<float>(row[i]);
    m[1] = fmaxf(m[1], v);
    nan |= v != v;
  }
  float v = fmaxf(fmaxf(m[0], m[1]), fmaxf(m[2], m[3]));
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return __any_sync(0xffffffffu, nan) ? canonical_nan<float>() : v;
}

// The log-sum-exp passes of row[0, n), in every lane; all 32 lanes call it with the same row and n. The sum reads the
// row by warp_row_root's segments, never its 32-vector tiles (the same bits): a tile inlines 32 V exponentials (256 for
// bf16: 18,000 instructions and 192 registers a thread, measured 5.9 ms for a [16384 x 32768] log_softmax on the H100,
// instruction-fetch and occupancy bound), a batch of 8 segments 8 V. The sum is left -0.0 when the maximum is not
// finite.
template <class T, bool Aligned>
__device__ __forceinline__ logsumexp_parts<float> warp_row_logsumexp(const T* __restrict__ row, std::uint64_t n) {
  using Leaf = shifted_exp_leaf<float>;
  logsumexp_parts<float> parts{warp_row_max<T, Aligned>(row, n), negative_zero<float>()};
  if (is_finite(parts.max))
    parts.sum = warp_row_root<plain_accumulator<float>, T, Aligned, Leaf, false>(row, n, Leaf{parts.max}).result();
  return parts;
}

}  // namespace detred::cuda::detail

namespace detred::cuda::detail {

// row_logsumexp's kernel: one warp per row (grid-stride), lane 0 writes the row's result.
template <class T, bool Aligned>
__global__ void __launch_bounds__(256) row_logsumexp_kernel(const T* __restrict__ x, row_shape shape, float* out) {
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t r = warp; r < shape.rows; r += warps) {
    const float lse = warp_row_logsumexp<T, Aligned>(x + r * shape.stride, shape.length(r)).result();
    if ((threadIdx.x & 31) == 0) out[r] = lse;
  }
}

}  // namespace detred::cuda::detail
