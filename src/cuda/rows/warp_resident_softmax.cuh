// Softmax of short rows (at most warp_softmax_capacity<T> elements: 1024) held in registers by one warp, one row at a
// time: the causal attention shape. The row is read once, its exponentials exp_float_lite(x - max) computed once and
// kept for the outputs e / sum (where the warp kernel of norms.cuh computes each twice and reads the row three times).
//
// The bits are softmax_kernel's, so the CPU's: the maximum is exact (any grouping); the sum pushes the full segments'
// roots in order into a warp counter (each the lane tree over the lane's V leaves and a 5-level butterfly, lower lanes
// on the left: warp_segment_root's tree, over the kept exponentials) and then the tail's blocks by push_tail_nodes
// (push_tail_blocks's tree over the partial segment's kept terms: the same leaves in the same lanes), which is
// warp_row_root's decomposition of the row; and every output is softmax_of_term of the same kept term (each
// exponential computed once, the row read once), rounded by the hardware where the row's maximum is finite (the same
// bits: no output is NaN there). The row moves as 16-byte vectors but for the one vector its end cuts.
#pragma once

#include <cstdint>
#include <cstring>

#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows.hpp"
#include "detred/rows/norm_formulas.hpp"
#include "detred/rows/row_accumulators.hpp"
#include "src/cuda/rows/row_vectors.cuh"

namespace detred::cuda::detail {

// K: the 16-byte vectors a lane holds; rows of up to 32 V K = 1024 elements.
template <class T>
inline constexpr int warp_softmax_vectors = sizeof(T) == 4 ? 8 : 4;
template <class T>
inline constexpr std::uint64_t warp_softmax_capacity =
    std::uint64_t(32) * tile_shape<T>::vector_elements* warp_softmax_vectors<T>;

// Writes value into o[n, cols) (a row's entries past its length), 32 lanes together: the elements up to the next
// 16-byte boundary one by one, then whole vectors, then what is left past the last whole vector.
template <class T>
__device__ __forceinline__ void fill_row_past_length(T* __restrict__ o, std::uint64_t n, std::uint64_t cols, T value) {
  constexpr std::uint64_t V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  const std::uint64_t boundary = (n + V - 1) / V * V, whole = cols / V * V;
  for (std::uint64_t i = n + lane; i < (boundary < cols ? boundary : cols); i += 32) o[i] = value;
  T values[V];
#pragma unroll
  for (std::uint64_t j = 0; j < V; ++j) values[j] = value;
  uint4 packed;
  std::memcpy(&packed, values, sizeof(packed));
  for (std::uint64_t i = boundary + lane * V; i + V <= cols; i += 32 * V) *reinterpret_cast<uint4*>(o + i) = packed;
  for (std::uint64_t i = (whole > boundary ? whole : boundary) + lane; i < cols; i += 32) o[i] = value;
}

// One warp a row (grid-stride over rows); every row 16-byte aligned and at most warp_softmax_capacity<T> long. Fill:
// also write softmax_fill (+0) into each row's entries [length, cols) (row_options::fill_past_length), in the same
// pass.
template <class T, bool Fill>
__global__ void __launch_bounds__(256)
    warp_resident_softmax_kernel(const T* __restrict__ x, row_shape shape, T* __restrict__ out) {
  constexpr int V = tile_shape<T>::vector_elements, K = warp_softmax_vectors<T>;
  constexpr std::uint64_t segment = 32 * V;
  using Acc = plain_accumulator<float>;
  const int lane = threadIdx.x & 31;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t r = warp; r < shape.rows; r += warps) {
    const T* row = x + r * shape.stride;
    T* o = out + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    const int full = int(n / segment), rest = int(n % segment);
    // The row, widened: the lane's 16-byte vectors that lie inside the row whole, the one vector the row's end
    // cuts element by element, -Inf past the row.
    float v[K][V];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int first = k * int(segment) + lane * V;  // the lane's first element in segment k
      if (first + V <= int(n)) {
        widened_vector<T>(__ldg(reinterpret_cast<const uint4*>(row + first)), v[k]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
          v[k][j] = first + j < int(n) ? widen<float>(row[first + j]) : minus_infinity<float>();
      }
    }
    float m = minus_infinity<float>();
    bool nan = false;
#pragma unroll
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int j = 0; j < V; ++j) m = fmaxf(m, v[k][j]), nan |= v[k][j] != v[k][j];
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    logsumexp_parts<float> parts{__any_sync(0xffffffffu, nan) ? canonical_nan<float>() : m, negative_zero<float>()};
    if (is_finite(parts.max)) {
      warp_counter<Acc> counter;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (k < full) {
          Acc node[V];
#pragma unroll
          for (int j = 0; j < V; ++j) {
            v[k][j] = specified::exp_float_lite_nonpositive(v[k][j] - parts.max);  // shifted_exp_leaf's term, kept
            node[j] = Acc::from_value(v[k][j]);
          }
          Acc root = lane_tree<Acc, V>(node);
#pragma unroll
          for (int level = 0; level < 5; ++level) {
            const Acc other = shuffle_xor(root, 1 << level);
            root = (lane >> level) & 1 ? merged(other, root) : merged(root, other);
          }
          counter.push(root, tile_shape<T>::lane_level + 5);
        } else if (k == full && rest > 0) {  // the partial segment: its terms kept too, Acc{} past the row
          Acc node[V];
#pragma unroll
          for (int j = 0; j < V; ++j) {
            v[k][j] = specified::exp_float_lite_nonpositive(v[k][j] - parts.max);
            node[j] = lane * V + j < rest ? Acc::from_value(v[k][j]) : Acc{};
          }
          push_tail_nodes<Acc, T>(node, rest, counter);
        }
      }
      parts.sum = counter.fold().result();
    }
    // The outputs, softmax_of_term of each kept term: vectors inside the row whole at once, the cut one element by
    // element. Where the maximum is finite, every e / sum lies in [0, 1] (sum >= 1, the maximum's own term), so no
    // output is NaN and the hardware's rounding gives softmax_of_term's bits.
    const bool finite_max = is_finite(parts.max);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int first = k * int(segment) + lane * V;
      if (first + V <= int(n)) {
        uint4 packed;
        if (finite_max) {
          float y[V];
#pragma unroll
          for (int j = 0; j < V; ++j) y[j] = v[k][j] / parts.sum;
          packed = rounded_vector<T>(y);
        } else {
          T y[V];
#pragma unroll
          for (int j = 0; j < V; ++j) y[j] = norms::softmax_of_term<T>(v[k][j], parts);
          std::memcpy(&packed, y, sizeof(packed));
        }
        *reinterpret_cast<uint4*>(o + first) = packed;
      } else if (first < int(n)) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (first + j < int(n))
            o[first + j] =
                finite_max ? rounded_element<T>(v[k][j] / parts.sum) : norms::softmax_of_term<T>(v[k][j], parts);
        }
      }
    }
    if constexpr (Fill) fill_row_past_length(o, n, shape.cols, norms::softmax_fill<T>());
  }
}

// Whether warp_resident_softmax_kernel takes a launch: x and out 16-byte aligned, every row at most its capacity.
template <class T>
bool warp_resident_softmax_applies(const void* x, const void* out, const row_shape& shape) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && (shape.stride * sizeof(T)) % 16 == 0;
  return aligned && shape.cols > 0 && shape.cols <= warp_softmax_capacity<T>;
}

}  // namespace detred::cuda::detail
