// The kernels behind cuda::layernorm_backward (include/detred/cuda/norms.hpp): one warp per row (grid-stride) takes the
// row's two sums, sum(g) and sum(g xhat) with g = w dy, in one canonical tree (norms::sum_pair through warp_row_root)
// and writes dx by norms::layernorm_dx; dweight and dbias are column reductions canonical over the rows
// (src/cuda/rows/columns.cuh), taken together in one pass over dy and x (layernorm_parameter_columns).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "detred/cuda/error.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/workspace.hpp"
#include "detred/norms.hpp"
#include "detred/rows/gradient_formulas.hpp"
#include "src/cuda/rows/columns.cuh"
#include "src/cuda/rows/norms.cuh"
#include "src/cuda/rows/row_elements.cuh"
#include "src/cuda/rows/row_kernels.cuh"

namespace detred::cuda::detail {

template <class T>
struct layernorm_dx_writer {
  const T *dy, *x, *w;
  T* dx;
  float mean, rstd, mean_g, mean_gxhat;
  __device__ void scalar(std::uint64_t i) const {
    dx[i] = norms::layernorm_dx(dy[i], x[i], w[i], mean, rstd, mean_g, mean_gxhat);
  }
  template <int V>
  __device__ void vector(std::uint64_t i) const {
    T eg[V], ex[V], ew[V], eo[V];
    load_vector(dy + i, eg), load_vector(x + i, ex), load_vector(w + i, ew);
#pragma unroll
    for (int k = 0; k < V; ++k) eo[k] = norms::layernorm_dx(eg[k], ex[k], ew[k], mean, rstd, mean_g, mean_gxhat);
    store_vector(dx + i, eo);
  }
};

// Aligned: dy, x, dx rows and weight start 16-byte aligned (vector loads and stores).
template <class T, bool Aligned>
__global__ void __launch_bounds__(256)
    layernorm_dx_kernel(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w,
                        const float* __restrict__ mean, const float* __restrict__ rstd, std::uint64_t rows,
                        std::uint64_t c, std::uint64_t stride, T* __restrict__ dx) {
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t t = warp; t < rows; t += warps) {
    const T* g = dy + t * stride;
    const T* xr = x + t * stride;
    const float m = mean[t], rs = rstd[t];
    const norms::sum_pair s =
        warp_row_root<norms::sum_pair, T, Aligned>(g, c, norms::layernorm_backward_leaf<T>{w, xr, m, rs});
    const float mean_g = s.first / float(c), mean_gxhat = s.second / float(c);
    for_each_in_row<T, Aligned>(c, layernorm_dx_writer<T>{g, xr, w, dx + t * stride, m, rs, mean_g, mean_gxhat});
  }
}

// Register-resident dx (rows of at most Segs full segments plus a tail, every array 16-byte aligned): dy and x are
// read once into registers, the two row sums taken from there (norms::layernorm_backward_leaf's leaves, the same
// order: registers_leaves_root) and dx written from there.
template <class T, int Segs>
__global__ void __launch_bounds__(256)
    layernorm_dx_registers_kernel(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w,
                                  const float* __restrict__ mean, const float* __restrict__ rstd, std::uint64_t rows,
                                  std::uint64_t c, std::uint64_t stride, T* __restrict__ dx) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  const int segments = int(c / (32 * V));
  const std::uint64_t at = std::uint64_t(segments) * 32 * V;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t t = warp; t < rows; t += warps) {
    const T* g = dy + t * stride;
    const T* xr = x + t * stride;
    const float m = mean[t], rs = rstd[t];
    uint4 rdy[Segs], rx[Segs];
    load_row_segments<T, Segs>(g, segments, rdy);
    load_row_segments<T, Segs>(xr, segments, rx);
    const auto make = [&](int s, norms::sum_pair(&node)[V]) {
      T ed[V], ex[V], ew[V];
      std::memcpy(ed, &rdy[s], sizeof(ed));
      std::memcpy(ex, &rx[s], sizeof(ex));
      load_vector(w + std::uint64_t(s * 32 + lane) * V, ew);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float gk = widen<float>(ew[k]) * widen<float>(ed[k]);
        node[k] = norms::sum_pair{gk, gk * norms::layernorm_xhat(widen<float>(ex[k]), m, rs)};
      }
    };
    const norms::sum_pair sums =
        registers_leaves_root<norms::sum_pair, T, Segs>(make, g, c, norms::layernorm_backward_leaf<T>{w, xr, m, rs});
    const float mean_g = sums.first / float(c), mean_gxhat = sums.second / float(c);
    T* o = dx + t * stride;
#pragma unroll
    for (int s = 0; s < Segs; ++s) {
      if (s < segments) {
        const std::uint64_t i = std::uint64_t(s * 32 + lane) * V;
        T ed[V], ex[V], ew[V], eo[V];
        std::memcpy(ed, &rdy[s], sizeof(ed));
        std::memcpy(ex, &rx[s], sizeof(ex));
        load_vector(w + i, ew);
#pragma unroll
        for (int k = 0; k < V; ++k) eo[k] = norms::layernorm_dx(ed[k], ex[k], ew[k], m, rs, mean_g, mean_gxhat);
        store_vector(o + i, eo);
      }
    }
    for (std::uint64_t i = at + lane; i < c; i += 32)
      o[i] = norms::layernorm_dx(g[i], xr[i], w[i], m, rs, mean_g, mean_gxhat);
  }
}

// dweight's and dbias's leaves in one pass over dy and x: virtual column 2k is column k's dweight leaf dy xhat, 2k + 1
// its dbias leaf dy, each reduced over the rows as a column of its own (the leaves and order of two separate column
// reductions, so their bits, with dy read once). CW virtual columns at a time: CW / 2 columns of each matrix, one
// 8-byte load each where Vector (CW = 16 / sizeof(T)).
template <class T>
struct layernorm_parameter_columns {
  const T* dy;
  const T* x;
  const float* mean;
  const float* rstd;
  std::uint64_t stride;
  template <int CW, bool Vector>
  __device__ __forceinline__ void load(std::uint64_t t, std::uint64_t j, float (&v)[CW]) const {
    const float m = mean[t], r = rstd[t];
    if constexpr (CW == 1) {
      const std::uint64_t at = t * stride + (j >> 1);
      const float g = widen<float>(dy[at]);
      v[0] = (j & 1) ? g : norms::layernorm_dweight_leaf(g, widen<float>(x[at]), m, r);
    } else {
      constexpr int R = CW / 2;
      static_assert(R * sizeof(T) == 8 || !Vector, "Vector: one 8-byte load of each matrix");
      const std::uint64_t at = t * stride + (j >> 1);
      T eg[R], ex[R];
      if constexpr (Vector) {
        const uint2 a = __ldg(reinterpret_cast<const uint2*>(dy + at));
        const uint2 b = __ldg(reinterpret_cast<const uint2*>(x + at));
        std::memcpy(eg, &a, sizeof(a));
        std::memcpy(ex, &b, sizeof(b));
      } else {
#pragma unroll
        for (int i = 0; i < R; ++i) eg[i] = dy[at + i], ex[i] = x[at + i];
      }
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const float g = widen<float>(eg[i]);
        v[2 * i] = norms::layernorm_dweight_leaf(g, widen<float>(ex[i]), m, r);
        v[2 * i + 1] = g;
      }
    }
  }
};

// Virtual column j's result (layernorm_parameter_columns): dweight[j / 2] or dbias[j / 2].
struct layernorm_parameter_out {
  float* dweight;
  float* dbias;
  __device__ __forceinline__ void store(std::uint64_t j, float v) const { ((j & 1) ? dbias : dweight)[j >> 1] = v; }
};

}  // namespace detred::cuda::detail

namespace detred::cuda {

template <class T>
void layernorm_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_dy, const T* d_x, const T* d_weight,
                        const float* d_mean, const float* d_rstd, T* d_dx, float* d_dweight, float* d_dbias,
                        const row_shape& shape, cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::layernorm_backward";
  const std::uint64_t rows = shape.rows, c = shape.cols, stride = shape.stride;
  detail::check_single_method(options, what);
  detred::detail::check_full_rows_shape(shape, what);
  detail::check_row_length_limit(shape, what);
  // The column reductions run with the default column options: their bits do not depend on them.
  const column_options columns{};
  if (detail::workspace_query(d_workspace, workspace_bytes, detail::column_workspace_bytes(rows, 2 * c, columns), what))
    return;
  if (c == 0) return;
  if (rows > 0)
    for (const auto& [p, name] : {std::pair<const void*, const char*>{d_dy, "d_dy"},
                                  {d_x, "d_x"},
                                  {d_weight, "d_weight"},
                                  {d_mean, "d_mean"},
                                  {d_rstd, "d_rstd"},
                                  {d_dx, "d_dx"}})
      detail::check_pointer(p, what, name);
  detail::check_pointer(d_dweight, what, "d_dweight");
  detail::check_pointer(d_dbias, what, "d_dbias");
  if (rows > 0) {
    const int threads = detail::row_threads(options);
    const unsigned grid = detail::row_grid(rows, options, threads);
    const bool aligned = detail::rows_aligned<T>(d_dy, stride) && detail::rows_aligned<T>(d_x, stride) &&
                         detail::rows_aligned<T>(d_dx, stride) && detail::rows_aligned<T>(d_weight, 0);
    const int segs = aligned ? detail::backward_register_segments<T>(c) : 0;
    if (segs == 8)
      detail::layernorm_dx_registers_kernel<T, 8>
          <<<grid, threads, 0, stream>>>(d_dy, d_x, d_weight, d_mean, d_rstd, rows, c, stride, d_dx);
    else if (segs == 16)
      detail::layernorm_dx_registers_kernel<T, 16>
          <<<grid, threads, 0, stream>>>(d_dy, d_x, d_weight, d_mean, d_rstd, rows, c, stride, d_dx);
    else if (aligned)
      detail::layernorm_dx_kernel<T, true>
          <<<grid, threads, 0, stream>>>(d_dy, d_x, d_weight, d_mean, d_rstd, rows, c, stride, d_dx);
    else
      detail::layernorm_dx_kernel<T, false>
          <<<grid, threads, 0, stream>>>(d_dy, d_x, d_weight, d_mean, d_rstd, rows, c, stride, d_dx);
    check(cudaGetLastError(), what);
  }
  const bool vector = detail::rows_aligned<T>(d_dy, stride) && detail::rows_aligned<T>(d_x, stride);
  detail::launch_column_reduce<T>(detail::layernorm_parameter_columns<T>{d_dy, d_x, d_mean, d_rstd, stride}, rows,
                                  2 * c, vector, detail::layernorm_parameter_out{d_dweight, d_dbias}, d_workspace,
                                  stream, columns, what);
}

}  // namespace detred::cuda

#define DETRED_INSTANTIATE_LAYERNORM_BACKWARD(T)                                                                     \
  template void detred::cuda::layernorm_backward<T>(void*, std::size_t&, const T*, const T*, const T*, const float*, \
                                                    const float*, T*, float*, float*, const detred::row_shape&,      \
                                                    cudaStream_t, const detred::cuda::row_options&);
