// A row's 16-byte vectors as floats and back, for the softmax family's kernels: exact widening (bfloat16 pairs by a
// shift and a mask), the hardware's round-to-nearest-even narrowing (two elements an instruction for the 16-bit types:
// T::from_float's bits for every float but NaN), and the one-step exponential's row test and leaves.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "detred/accumulators/plain.hpp"
#include "detred/cuda/warp/warp_tile.cuh"
#include "detred/rows/specified_math.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/float_traits.hpp"
#include "detred/types/half.hpp"

namespace detred::cuda::detail {

// A 16-byte vector's elements widened to float (exact): bfloat16 pairs by a shift and a mask, the others by widen.
template <class T>
__device__ __forceinline__ void widened_vector(const uint4& raw, float (&f)[tile_shape<T>::vector_elements]) {
  if constexpr (std::is_same_v<T, bfloat16>) {
    const std::uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  } else {
    constexpr int V = tile_shape<T>::vector_elements;
    T e[V];
    std::memcpy(e, &raw, sizeof(raw));
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = widen<float>(e[i]);
  }
}

// V floats rounded to T to nearest even and packed into 16 bytes, by the hardware's conversions (two a instruction
// for the 16-bit types): T::from_float's bits for every float but NaN, which callers rule out.
template <class T>
__device__ __forceinline__ uint4 rounded_vector(const float (&y)[tile_shape<T>::vector_elements]) {
  uint4 packed;
  if constexpr (std::is_same_v<T, bfloat16>) {
    __nv_bfloat162 p[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) p[i] = __floats2bfloat162_rn(y[2 * i], y[2 * i + 1]);
    std::memcpy(&packed, p, sizeof(packed));
  } else if constexpr (std::is_same_v<T, half>) {
    __half2 p[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) p[i] = __floats2half2_rn(y[2 * i], y[2 * i + 1]);
    std::memcpy(&packed, p, sizeof(packed));
  } else {
    std::memcpy(&packed, y, sizeof(packed));
  }
  return packed;
}

// One float rounded to T to nearest even by the hardware's conversion: T::from_float's bits for every float but NaN.
template <class T>
__device__ __forceinline__ T rounded_element(float y) {
  if constexpr (std::is_same_v<T, bfloat16>)
    return bfloat16::from_bits(__bfloat16_as_ushort(__float2bfloat16_rn(y)));
  else if constexpr (std::is_same_v<T, half>)
    return half::from_bits(__half_as_ushort(__float2half_rn(y)));
  else
    return y;
}

// Whether every exp(x - max) of a row whose minimum and maximum (finite) these are may take
// specified::exp_float_lite_one_step: fl(min - max) bounds every fl(x - max) below.
__device__ __forceinline__ bool row_range_allows_one_step(float min, float max) {
  return min - max >= specified::exp_float_lite_one_step_min;
}

// The log-sum-exp leaf exp(x - max) of a row that row_range_allows_one_step: shifted_exp_leaf's bits.
struct one_step_exp_leaf {
  float max;
  __device__ __forceinline__ plain_accumulator<float> operator()(float x) const {
    return plain_accumulator<float>::from_value(specified::exp_float_lite_one_step(x - max));
  }
};
// The same leaf for any row with a finite maximum: shifted_exp_leaf's operations on a widened element.
struct nonpositive_exp_leaf {
  float max;
  __device__ __forceinline__ plain_accumulator<float> operator()(float x) const {
    return plain_accumulator<float>::from_value(specified::exp_float_lite_nonpositive(x - max));
  }
};

}  // namespace detred::cuda::detail
