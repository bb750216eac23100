// The kernels behind cuda::log_softmax_forward, softmax_backward, log_softmax_backward and row_logsumexp_backward
// (include/detred/cuda/norms.hpp): one warp per row (grid-stride), the row's one reduction (the log-sum-exp of x by
// warp_row_logsumexp; sum(dy y) and sum(dy) by warp_row_root), then the row's outputs by the formulas of
// detred/rows/gradient_formulas.hpp, 16-byte vectors where every row is aligned. Tiles = false when no row reaches a
// warp tile (causal rows of up to a few thousand elements): the backward sums' same bits without the tile path's
// registers (the log-sum-exp reads by segments either way).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "detred/cuda/error.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/workspace.hpp"
#include "detred/norms.hpp"
#include "detred/rows/gradient_formulas.hpp"
#include "src/cuda/rows/norms.cuh"
#include "src/cuda/rows/row_elements.cuh"
#include "src/cuda/rows/row_kernels.cuh"
#include "src/cuda/rows/row_logsumexp.cuh"

namespace detred::cuda::detail {

// Writers of one row's outputs (for_each_in_row): out[i] = f(a[i], b[i]) with the row's statistic.
template <class T>
struct log_softmax_writer {
  const T* x;
  T* out;
  float lse;
  __device__ void scalar(std::uint64_t i) const { out[i] = norms::log_softmax_value(x[i], lse); }
  template <int V>
  __device__ void vector(std::uint64_t i) const {
    T e[V], o[V];
    load_vector(x + i, e);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = norms::log_softmax_value(e[k], lse);
    store_vector(out + i, o);
  }
};

// Softmax backward (Log = false) or log-softmax backward (Log = true) of one row, s its sum.
template <class T, bool Log>
struct softmax_dx_writer {
  const T *y, *dy;
  T* dx;
  float s;
  static __device__ T value(T y, T dy, float s) {
    if constexpr (Log)
      return norms::log_softmax_dx(y, dy, s);
    else
      return norms::softmax_dx(y, dy, s);
  }
  __device__ void scalar(std::uint64_t i) const { dx[i] = value(y[i], dy[i], s); }
  template <int V>
  __device__ void vector(std::uint64_t i) const {
    T ey[V], eg[V], o[V];
    load_vector(y + i, ey), load_vector(dy + i, eg);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = value(ey[k], eg[k], s);
    store_vector(dx + i, o);
  }
};

template <class T>
struct logsumexp_dx_writer {
  const T* x;
  T* dx;
  float lse, dout;
  __device__ void scalar(std::uint64_t i) const { dx[i] = norms::logsumexp_dx(x[i], lse, dout); }
  template <int V>
  __device__ void vector(std::uint64_t i) const {
    T e[V], o[V];
    load_vector(x + i, e);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = norms::logsumexp_dx(e[k], lse, dout);
    store_vector(dx + i, o);
  }
};

// The three row-reducing calls of this file, told apart by Kind.
enum class softmax_kind { log_softmax_forward, softmax_backward, log_softmax_backward };

// a: x (forward) or y (backward); b: dy (backward) or unused; out: out or dx. Every row starts at r * stride.
template <softmax_kind Kind, class T, bool Aligned, bool Tiles>
__global__ void __launch_bounds__(256)
    softmax_family_kernel(const T* __restrict__ a, const T* __restrict__ b, row_shape shape, T* __restrict__ out) {
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t r = warp; r < shape.rows; r += warps) {
    const std::uint64_t at = r * shape.stride, n = shape.length(r);
    if constexpr (Kind == softmax_kind::log_softmax_forward) {
      const float lse = warp_row_logsumexp<T, Aligned>(a + at, n).result();
      for_each_in_row<T, Aligned>(n, log_softmax_writer<T>{a + at, out + at, lse});
    } else if constexpr (Kind == softmax_kind::softmax_backward) {
      using Acc = plain_accumulator<float>;
      const float s =
          warp_row_root<Acc, T, Aligned, norms::product_leaf<T>, Tiles>(b + at, n, norms::product_leaf<T>{a + at})
              .result();
      for_each_in_row<T, Aligned>(n, softmax_dx_writer<T, false>{a + at, b + at, out + at, s});
    } else {
      using Acc = plain_accumulator<float>;
      const float s = warp_row_root<Acc, T, Aligned, widened_leaf<Acc>, Tiles>(b + at, n, widened_leaf<Acc>{}).result();
      for_each_in_row<T, Aligned>(n, softmax_dx_writer<T, true>{a + at, b + at, out + at, s});
    }
  }
}

template <class T, bool Aligned>
__global__ void __launch_bounds__(256)
    logsumexp_backward_kernel(const T* __restrict__ x, const float* __restrict__ lse, const float* __restrict__ dout,
                              row_shape shape, T* __restrict__ dx) {
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t r = warp; r < shape.rows; r += warps) {
    const std::uint64_t at = r * shape.stride;
    for_each_in_row<T, Aligned>(shape.length(r), logsumexp_dx_writer<T>{x + at, dx + at, lse[r], dout[r]});
  }
}

// The checks and the workspace query (none needed) of the calls of this file. Returns true for a size query.
inline bool softmax_family_prologue(void* d_workspace, std::size_t& workspace_bytes, const row_shape& shape,
                                    const row_options& options,
                                    std::initializer_list<std::pair<const void*, const char*>> rows_data,
                                    std::initializer_list<std::pair<const void*, const char*>> row_stats,
                                    const char* what, bool takes_fill = false) {
  check_single_method(options, what, takes_fill);
  detred::detail::check_row_shape(shape, what);
  check_row_length_limit(shape, what);
  if (workspace_query(d_workspace, workspace_bytes, 0, what)) return true;
  if (rows_read_input(shape))
    for (const auto& [p, name] : rows_data) check_pointer(p, what, name);
  if (shape.rows > 0)
    for (const auto& [p, name] : row_stats) check_pointer(p, what, name);
  return false;
}

template <softmax_kind Kind, class T>
void launch_softmax_family(const T* a, const T* b, T* out, const row_shape& shape, cudaStream_t stream,
                           const row_options& options, const char* what) {
  if (shape.rows == 0) return;
  const int threads = row_threads(options);
  const unsigned grid = row_grid(shape.rows, options, threads);
  const bool aligned = rows_aligned<T>(a, shape.stride) && rows_aligned<T>(out, shape.stride) &&
                       (b == nullptr || rows_aligned<T>(b, shape.stride));
  const bool tiles = rows_may_have_tiles<T>(shape);
  if (aligned && tiles) softmax_family_kernel<Kind, T, true, true><<<grid, threads, 0, stream>>>(a, b, shape, out);
  if (aligned && !tiles) softmax_family_kernel<Kind, T, true, false><<<grid, threads, 0, stream>>>(a, b, shape, out);
  if (!aligned && tiles) softmax_family_kernel<Kind, T, false, true><<<grid, threads, 0, stream>>>(a, b, shape, out);
  if (!aligned && !tiles) softmax_family_kernel<Kind, T, false, false><<<grid, threads, 0, stream>>>(a, b, shape, out);
  check(cudaGetLastError(), what);
}

}  // namespace detred::cuda::detail

namespace detred::cuda {

template <class T>
void log_softmax_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, T* d_out,
                         const row_shape& shape, cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::log_softmax_forward";
  if (detail::softmax_family_prologue(d_workspace, workspace_bytes, shape, options, {{d_x, "d_x"}, {d_out, "d_out"}},
                                      {}, what, true))
    return;
  if (shape.rows == 0) return;
  if (detail::block_rows_apply<T>(d_x, d_out, shape))
    detail::launch_block_row_logsumexp(d_x, shape, detail::log_softmax_to_elements<T>{d_out}, stream, options);
  else
    detail::launch_softmax_family<detail::softmax_kind::log_softmax_forward, T>(d_x, nullptr, d_out, shape, stream,
                                                                                options, what);
  if (options.fill_past_length)
    detail::launch_fill_past_length(d_out, shape, norms::log_softmax_fill<T>(), stream, options);
  check(cudaGetLastError(), what);
}

template <class T>
void softmax_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_y, const T* d_dy, T* d_dx,
                      const row_shape& shape, cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::softmax_backward";
  if (detail::softmax_family_prologue(d_workspace, workspace_bytes, shape, options,
                                      {{d_y, "d_y"}, {d_dy, "d_dy"}, {d_dx, "d_dx"}}, {}, what))
    return;
  detail::launch_softmax_family<detail::softmax_kind::softmax_backward, T>(d_y, d_dy, d_dx, shape, stream, options,
                                                                           what);
}

template <class T>
void log_softmax_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_y, const T* d_dy, T* d_dx,
                          const row_shape& shape, cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::log_softmax_backward";
  if (detail::softmax_family_prologue(d_workspace, workspace_bytes, shape, options,
                                      {{d_y, "d_y"}, {d_dy, "d_dy"}, {d_dx, "d_dx"}}, {}, what))
    return;
  detail::launch_softmax_family<detail::softmax_kind::log_softmax_backward, T>(d_y, d_dy, d_dx, shape, stream, options,
                                                                               what);
}

template <class T>
void row_logsumexp_backward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const float* d_lse,
                            const float* d_dout, T* d_dx, const row_shape& shape, cudaStream_t stream,
                            const row_options& options) {
  constexpr const char* what = "cuda::row_logsumexp_backward";
  if (detail::softmax_family_prologue(d_workspace, workspace_bytes, shape, options, {{d_x, "d_x"}, {d_dx, "d_dx"}},
                                      {{d_lse, "d_lse"}, {d_dout, "d_dout"}}, what))
    return;
  if (shape.rows == 0) return;
  const int threads = detail::row_threads(options);
  const unsigned grid = detail::row_grid(shape.rows, options, threads);
  if (detail::rows_aligned<T>(d_x, shape.stride) && detail::rows_aligned<T>(d_dx, shape.stride))
    detail::logsumexp_backward_kernel<T, true><<<grid, threads, 0, stream>>>(d_x, d_lse, d_dout, shape, d_dx);
  else
    detail::logsumexp_backward_kernel<T, false><<<grid, threads, 0, stream>>>(d_x, d_lse, d_dout, shape, d_dx);
  check(cudaGetLastError(), what);
}

}  // namespace detred::cuda

#define DETRED_INSTANTIATE_SOFTMAX_FAMILY(T)                                                                           \
  template void detred::cuda::log_softmax_forward<T>(void*, std::size_t&, const T*, T*, const detred::row_shape&,      \
                                                     cudaStream_t, const detred::cuda::row_options&);                  \
  template void detred::cuda::softmax_backward<T>(void*, std::size_t&, const T*, const T*, T*,                         \
                                                  const detred::row_shape&, cudaStream_t,                              \
                                                  const detred::cuda::row_options&);                                   \
  template void detred::cuda::log_softmax_backward<T>(void*, std::size_t&, const T*, const T*, T*,                     \
                                                      const detred::row_shape&, cudaStream_t,                          \
                                                      const detred::cuda::row_options&);                               \
  template void detred::cuda::row_logsumexp_backward<T>(void*, std::size_t&, const T*, const float*, const float*, T*, \
                                                        const detred::row_shape&, cudaStream_t,                        \
                                                        const detred::cuda::row_options&);
