// Log-sum-exp rows held in registers by a block, one row a block: for rows long enough that one warp's three passes
// over its row (the maximum, the sum of exponentials, the outputs) would read it from L2 three times (one warp a row
// of [16384 x 32768] fp32 log_softmax measured 87% of L2 throughput and 0.33x a copy on the H200). Here the row is read
// from memory once, into registers, and written once.
//
// The bits are warp_row_logsumexp's (row_logsumexp.cuh), so the CPU's: the maximum is exact (any grouping), and the
// sum has the same canonical decomposition. A region is K full segments (K 32 V elements, V a 16-byte vector's
// elements): a complete aligned subtree at level lane_level + 5 + log2 K. Warp w < R (R = the row's full regions, at
// most the block's warps) loads region w, one vector a lane a segment, and reduces it: its K segment roots
// (warp_segment_root, as the warp kernel's segments) joined pairwise in order, which is what a binary counter makes of
// K pushes. Warp 0 then pushes the R region roots in order into a warp counter at the region's level, continues with
// the rest of the row (full segments, then the tail, read from memory: less than a region, or the part of a longer
// row beyond the block's regions) by push_segments_and_tail, and folds.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#include "detred/cuda/rows.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"
#include "detred/rows/gradient_formulas.hpp"
#include "detred/rows/norm_formulas.hpp"
#include "detred/rows/row_accumulators.hpp"

namespace detred::cuda::detail {

// The register tiling: K 16-byte vectors a lane (32 registers), a power of two.
inline constexpr int block_row_vectors = 8;

template <class T>
inline constexpr std::uint64_t block_row_region = std::uint64_t(32) * tile_shape<T>::vector_elements* block_row_vectors;

// Outputs of the three callers. store_row runs once a row (thread 0); value gives an output element (elementwise).
struct logsumexp_to_rows {
  float* out;
  static constexpr bool elementwise = false;
  __device__ void store_row(std::uint64_t r, const logsumexp_parts<float>& parts) const { out[r] = parts.result(); }
  template <class T>
  __device__ T value(T, const logsumexp_parts<float>&, float) const {
    return T{};
  }
};

template <class T>
struct log_softmax_to_elements {
  T* out;
  static constexpr bool elementwise = true;
  __device__ void store_row(std::uint64_t, const logsumexp_parts<float>&) const {}
  __device__ T value(T x, const logsumexp_parts<float>&, float lse) const { return norms::log_softmax_value(x, lse); }
};

template <class T>
struct softmax_to_elements {
  T* out;
  static constexpr bool elementwise = true;
  __device__ void store_row(std::uint64_t, const logsumexp_parts<float>&) const {}
  __device__ T value(T x, const logsumexp_parts<float>& parts, float) const { return norms::softmax_value(x, parts); }
};

// One row a block (grid-stride over rows), blockDim.x a multiple of 32 up to 1024; every row 16-byte aligned.
template <class T, class Output>
__global__ void __launch_bounds__(1024)
    block_row_logsumexp_kernel(const T* __restrict__ x, row_shape shape, Output output) {
  constexpr int V = tile_shape<T>::vector_elements, K = block_row_vectors;
  constexpr std::uint64_t segment = 32 * V, region = block_row_region<T>;
  constexpr int region_level = tile_shape<T>::lane_level + 5 + (K == 8 ? 3 : K == 4 ? 2 : K == 2 ? 1 : 0);
  static_assert(K == 1 || K == 2 || K == 4 || K == 8, "block_row_vectors: a power of two up to 8");
  using Acc = plain_accumulator<float>;
  __shared__ float warp_max[32];
  __shared__ float region_root[32];
  __shared__ float row_sum;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (std::uint64_t r = blockIdx.x; r < shape.rows; r += gridDim.x) {
    const T* row = x + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    const int regions = int(n / region < std::uint64_t(warps) ? n / region : std::uint64_t(warps));
    const std::uint64_t rest = std::uint64_t(regions) * region;
    const std::uint64_t mine = std::uint64_t(warp) * region + std::uint64_t(lane) * V;  // this lane's first element
    // Pass 1: load the regions, the maximum (fmaxf and a NaN flag, as warp_row_max).
    uint4 raw[K];
    float m = minus_infinity<float>();
    bool nan = false;
    if (warp < regions) {
#pragma unroll
      for (int k = 0; k < K; ++k) raw[k] = __ldg(reinterpret_cast<const uint4*>(row + mine + k * segment));
#pragma unroll
      for (int k = 0; k < K; ++k) {
        T e[V];
        std::memcpy(e, &raw[k], sizeof(raw[k]));
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float v = widen<float>(e[j]);
          m = fmaxf(m, v);
          nan |= v != v;
        }
      }
    }
    for (std::uint64_t i = rest + threadIdx.x; i < n; i += blockDim.x) {
      const float v = widen<float>(row[i]);
      m = fmaxf(m, v);
      nan |= v != v;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    nan = __any_sync(0xffffffffu, nan);
    if (lane == 0) warp_max[warp] = nan ? canonical_nan<float>() : m;
    __syncthreads();
    logsumexp_parts<float> parts{minus_infinity<float>(), negative_zero<float>()};
    for (int w = 0; w < warps; ++w) {
      const float v = warp_max[w];
      parts.max = v != v || parts.max != parts.max ? canonical_nan<float>() : fmaxf(parts.max, v);
    }
    // Pass 2: the sum of exp(x - max), from the registers and then the rest of the row.
    if (is_finite(parts.max)) {
      const shifted_exp_leaf<float> leaf{parts.max};
      if (warp < regions) {
        Acc root[K];
#pragma unroll
        for (int k = 0; k < K; ++k)
          root[k] = warp_segment_root<Acc, T>(raw[k], std::uint64_t(warp) * region + k * segment, leaf);
#pragma unroll
        for (int width = K; width > 1; width /= 2) {
#pragma unroll
          for (int i = 0; i < width / 2; ++i) root[i] = detail::merged(root[2 * i], root[2 * i + 1]);
        }
        if (lane == 0) region_root[warp] = root[0].sum;
      }
      __syncthreads();
      if (warp == 0) {
        warp_counter<Acc> counter;
        for (int q = 0; q < regions; ++q) counter.push(Acc::from_value(region_root[q]), region_level);
        push_segments_and_tail<Acc, T, true>(row, rest, n, leaf, counter);
        const float sum = counter.fold().result();
        if (lane == 0) row_sum = sum;
      }
      __syncthreads();
      parts.sum = row_sum;
    }
    if (threadIdx.x == 0) output.store_row(r, parts);
    // Pass 3: the outputs, from the registers and then the rest of the row.
    if constexpr (Output::elementwise) {
      const float lse = parts.result();
      T* o = output.out + r * shape.stride;
      if (warp < regions) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          T e[V], y[V];
          std::memcpy(e, &raw[k], sizeof(raw[k]));
#pragma unroll
          for (int j = 0; j < V; ++j) y[j] = output.value(e[j], parts, lse);
          uint4 packed;
          std::memcpy(&packed, y, sizeof(packed));
          *reinterpret_cast<uint4*>(o + mine + k * segment) = packed;
        }
      }
      for (std::uint64_t i = rest + threadIdx.x; i < n; i += blockDim.x) o[i] = output.value(row[i], parts, lse);
    }
    __syncthreads();  // warp_max, region_root and row_sum are the next row's
  }
}

// Whether block_row_logsumexp_kernel takes a launch: every row 16-byte aligned and at least two regions long at its
// longest (shape.cols; per-row lengths with cols = 0 are not taken). Then the block has one warp a region of cols (at
// most 32).
template <class T>
bool block_rows_apply(const void* a, const void* b, const row_shape& shape) {
  const auto aligned = [&](const void* p) {
    return p == nullptr || (reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (shape.stride * sizeof(T)) % 16 == 0);
  };
  return aligned(a) && aligned(b) && shape.cols >= 2 * block_row_region<T>;
}

template <class T>
int block_rows_threads(const row_shape& shape) {
  const std::uint64_t regions = shape.cols / block_row_region<T>;
  return 32 * int(regions < 32 ? regions : 32);
}

// One block a row, or options.grid_blocks blocks when that is fewer (speed only).
template <class T, class Output>
void launch_block_row_logsumexp(const T* x, const row_shape& shape, Output output, cudaStream_t stream,
                                const row_options& options) {
  std::uint64_t blocks = shape.rows < 0x7fffffffu ? shape.rows : 0x7fffffffu;
  if (options.grid_blocks != 0 && std::uint64_t(options.grid_blocks) < blocks)
    blocks = std::uint64_t(options.grid_blocks);
  const unsigned grid = unsigned(blocks);
  block_row_logsumexp_kernel<T, Output><<<grid, block_rows_threads<T>(shape), 0, stream>>>(x, shape, output);
}

}  // namespace detred::cuda::detail
