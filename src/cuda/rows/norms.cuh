// The kernels behind include/detred/cuda/norms.hpp: one warp per row (grid-stride), the row's reductions by
// warp_row_root, outputs by the formulas of detred/rows/norm_formulas.hpp; 16-byte loads and stores where the rows
// are aligned, element by element otherwise. RMSNorm's backward entry point, which adds dweight's column reduction
// (src/cuda/rows/columns.cuh), is in rmsnorm_backward.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "detred/cuda/error.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/workspace.hpp"
#include "detred/norms.hpp"
#include "src/cuda/rows/columns.cuh"
#include "src/cuda/rows/row_kernels.cuh"
#include "src/cuda/rows/warp_resident_softmax.cuh"

namespace detred::cuda::detail {

// f(i) for i in [0, n) of one row, lane by lane; with Vector, lane l handles V consecutive elements per step (the
// caller's loads and stores then coalesce into 16-byte accesses).
template <class T, bool Vector, class F>
__device__ __forceinline__ void for_each_element(std::uint64_t n, const F& f) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  if constexpr (Vector) {
    for (std::uint64_t i = std::uint64_t(lane) * V; i < n; i += 32 * V) f.template vector<V>(i);
  } else {
    for (std::uint64_t i = lane; i < n; i += 32) f.scalar(i);
  }
}

template <class T, int V>
__device__ __forceinline__ void load_vector(const T* p, T (&e)[V]) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  std::memcpy(e, &raw, sizeof(raw));
}
template <class T, int V>
__device__ __forceinline__ void store_vector(T* p, const T (&e)[V]) {
  uint4 raw;
  std::memcpy(&raw, e, sizeof(raw));
  *reinterpret_cast<uint4*>(p) = raw;
}

template <class T>
struct layernorm_writer {
  const T *x, *w, *b;
  T* out;
  float mean, rstd;
  __device__ void scalar(std::uint64_t i) const { out[i] = norms::layernorm_value(x[i], mean, rstd, w[i], b[i]); }
  template <int V>
  __device__ void vector(std::uint64_t i) const {
    T ex[V], ew[V], eb[V], eo[V];
    load_vector(x + i, ex), load_vector(w + i, ew), load_vector(b + i, eb);
#pragma unroll
    for (int k = 0; k < V; ++k) eo[k] = norms::layernorm_value(ex[k], mean, rstd, ew[k], eb[k]);
    store_vector(out + i, eo);
  }
};

template <class T, bool Aligned>
__global__ void __launch_bounds__(256)
    layernorm_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, std::uint64_t rows,
                     std::uint64_t c, T* __restrict__ out, float* mean, float* rstd, float eps) {
  using Acc = plain_accumulator<float>;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t t = warp; t < rows; t += warps) {
    const T* row = x + t * c;
    const float m = norms::mean_of(warp_row_root<Acc, T, Aligned>(row, c, widened_leaf<Acc>{}).result(), c);
    const float rs =
        norms::rstd_of(warp_row_root<Acc, T, Aligned>(row, c, norms::centered_square_leaf{m}).result(), c, eps);
    for_each_element<T, Aligned>(c, layernorm_writer<T>{row, w, b, out + t * c, m, rs});
    if ((threadIdx.x & 31) == 0) mean[t] = m, rstd[t] = rs;
  }
}

// Rows of at most Segs full segments (32 V elements each) plus a tail, 16-byte aligned: the warp loads the row's
// segments into registers once (Segs 16-byte loads in flight per lane), takes its reductions from there with
// warp_registers_row_root (the same order, so the same bits, as warp_row_root) and writes the output from there: one
// read of x from memory instead of three (LayerNorm) or two (RMSNorm). The tail (< 32 V elements) is read from
// memory.
template <class T, int Segs>
__device__ __forceinline__ void load_row_segments(const T* __restrict__ row, int segments, uint4 (&raw)[Segs]) {
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int s = 0; s < Segs; ++s)
    if (s < segments) raw[s] = __ldg(reinterpret_cast<const uint4*>(row + (s * 32 + lane) * V));
}

template <class T, int Segs>
__global__ void __launch_bounds__(256)
    layernorm_registers_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                               std::uint64_t rows, std::uint64_t c, T* __restrict__ out, float* mean, float* rstd,
                               float eps) {
  using Acc = plain_accumulator<float>;
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  const int segments = int(c / (32 * V));
  const std::uint64_t at = std::uint64_t(segments) * 32 * V;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t t = warp; t < rows; t += warps) {
    const T* row = x + t * c;
    uint4 raw[Segs];
    load_row_segments<T, Segs>(row, segments, raw);
    const float m = norms::mean_of(warp_registers_row_root<Acc, T, Segs>(raw, row, c, widened_leaf<Acc>{}).result(), c);
    const float rs = norms::rstd_of(
        warp_registers_row_root<Acc, T, Segs>(raw, row, c, norms::centered_square_leaf{m}).result(), c, eps);
    T* o = out + t * c;
#pragma unroll
    for (int s = 0; s < Segs; ++s) {
      if (s < segments) {
        const std::uint64_t i = std::uint64_t(s * 32 + lane) * V;
        T ex[V], ew[V], eb[V], eo[V];
        std::memcpy(ex, &raw[s], sizeof(ex));
        load_vector(w + i, ew), load_vector(b + i, eb);
#pragma unroll
        for (int k = 0; k < V; ++k) eo[k] = norms::layernorm_value(ex[k], m, rs, ew[k], eb[k]);
        store_vector(o + i, eo);
      }
    }
    for (std::uint64_t i = at + lane; i < c; i += 32) o[i] = norms::layernorm_value(row[i], m, rs, w[i], b[i]);
    if (lane == 0) mean[t] = m, rstd[t] = rs;
  }
}

template <class T, int Segs>
__global__ void __launch_bounds__(256)
    rmsnorm_registers_kernel(const T* __restrict__ x, const T* __restrict__ w, std::uint64_t rows, std::uint64_t c,
                             T* __restrict__ out, float* rstd, float eps) {
  using Acc = plain_accumulator<float>;
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  const int segments = int(c / (32 * V));
  const std::uint64_t at = std::uint64_t(segments) * 32 * V;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t t = warp; t < rows; t += warps) {
    const T* row = x + t * c;
    uint4 raw[Segs];
    load_row_segments<T, Segs>(row, segments, raw);
    const float rs =
        norms::rstd_of(warp_registers_row_root<Acc, T, Segs>(raw, row, c, norms::square_leaf{}).result(), c, eps);
    T* o = out + t * c;
#pragma unroll
    for (int s = 0; s < Segs; ++s) {
      if (s < segments) {
        const std::uint64_t i = std::uint64_t(s * 32 + lane) * V;
        T ex[V], ew[V], eo[V];
        std::memcpy(ex, &raw[s], sizeof(ex));
        load_vector(w + i, ew);
#pragma unroll
        for (int k = 0; k < V; ++k) eo[k] = norms::rmsnorm_value(ex[k], rs, ew[k]);
        store_vector(o + i, eo);
      }
    }
    for (std::uint64_t i = at + lane; i < c; i += 32) o[i] = norms::rmsnorm_value(row[i], rs, w[i]);
    if (lane == 0) rstd[t] = rs;
  }
}

// The register-resident kernels' segment capacities: the smallest that holds c's full segments, 0 when none does (the
// streaming kernels then read the row per pass). 32 segments are 128 registers of row per lane.
template <class T>
int register_segments(std::uint64_t c) {
  const std::uint64_t segments = c / (32 * tile_shape<T>::vector_elements);
  return segments <= 8 ? 8 : segments <= 16 ? 16 : segments <= 32 ? 32 : 0;
}

template <class T>
struct rmsnorm_writer {
  const T *x, *w;
  T* out;
  float rstd;
  __device__ void scalar(std::uint64_t i) const { out[i] = norms::rmsnorm_value(x[i], rstd, w[i]); }
  template <int V>
  __device__ void vector(std::uint64_t i) const {
    T ex[V], ew[V], eo[V];
    load_vector(x + i, ex), load_vector(w + i, ew);
#pragma unroll
    for (int k = 0; k < V; ++k) eo[k] = norms::rmsnorm_value(ex[k], rstd, ew[k]);
    store_vector(out + i, eo);
  }
};

template <class T, bool Aligned>
__global__ void __launch_bounds__(256)
    rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ w, std::uint64_t rows, std::uint64_t c,
                   T* __restrict__ out, float* rstd, float eps) {
  using Acc = plain_accumulator<float>;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t t = warp; t < rows; t += warps) {
    const T* row = x + t * c;
    const float rs = norms::rstd_of(warp_row_root<Acc, T, Aligned>(row, c, norms::square_leaf{}).result(), c, eps);
    for_each_element<T, Aligned>(c, rmsnorm_writer<T>{row, w, out + t * c, rs});
    if ((threadIdx.x & 31) == 0) rstd[t] = rs;
  }
}

template <class T>
struct rmsnorm_dx_writer {
  const T *dy, *x, *w;
  T* dx;
  float rstd, k;
  __device__ void scalar(std::uint64_t i) const { dx[i] = norms::rmsnorm_dx(dy[i], x[i], w[i], rstd, k); }
};

template <class T, bool Aligned>
__global__ void __launch_bounds__(256)
    rmsnorm_dx_kernel(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w,
                      const float* __restrict__ rstd, std::uint64_t rows, std::uint64_t c, T* __restrict__ dx) {
  using Acc = plain_accumulator<float>;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t t = warp; t < rows; t += warps) {
    const float dot = warp_row_root<Acc, T, Aligned>(dy + t * c, c, norms::weighted_dot_leaf<T>{w, x + t * c}).result();
    const float k = norms::rmsnorm_backward_k(rstd[t], dot, c);
    for_each_element<T, false>(c, rmsnorm_dx_writer<T>{dy + t * c, x + t * c, w, dx + t * c, rstd[t], k});
  }
}

// The canonical root of a row whose full segments' leaves each lane computes from registers: make(s, node) fills
// node[0..V) with the leaves of the row's elements (s * 32 + lane) * V + k of full segment s; the tail (c mod 32 V
// elements) takes tail_leaf(tail_row[i], i) from memory. The same operations in the same order as
// warp_registers_row_root (a row of exactly Segs segments as one transpose-reduction, otherwise segment roots through
// the butterfly and the counter), so the bits of warp_row_root with the equivalent leaf; what it saves is the
// element-by-element reads of a leaf's second and third arrays (x and weight in the backward passes).
template <class Acc, class T, int Segs, class Make, class TailLeaf>
__device__ __forceinline__ Acc registers_leaves_root(const Make& make, const T* __restrict__ tail_row, std::uint64_t c,
                                                     const TailLeaf& tail_leaf) {
  constexpr int V = tile_shape<T>::vector_elements;
  constexpr std::uint64_t segment = 32 * V;
  const int lane = threadIdx.x & 31;
  const int segments = int(c / segment);
  if (c == std::uint64_t(Segs) * segment) {
    Acc v[Segs];
#pragma unroll
    for (int s = 0; s < Segs; ++s) {
      Acc node[V];
      make(s, node);
      v[s] = lane_tree<Acc, V>(node);
    }
    return warp_rows_root<Segs>(v);
  }
  warp_counter<Acc> counter;
#pragma unroll
  for (int s = 0; s < Segs; ++s) {
    if (s < segments) {
      Acc node[V];
      make(s, node);
      Acc v = lane_tree<Acc, V>(node);
#pragma unroll
      for (int level = 0; level < 5; ++level) {
        const Acc other = detail::shuffle_xor(v, 1 << level);
        v = (lane >> level) & 1 ? detail::merged(other, v) : detail::merged(v, other);
      }
      counter.push(v, tile_shape<T>::lane_level + 5);
    }
  }
  const std::uint64_t at = std::uint64_t(segments) * segment;
  const int r = int(c - at);
  if (r > 0) push_tail_blocks<Acc, T>(tail_row + at, at, r, tail_leaf, counter);
  return counter.fold();
}

// Where a register-resident rmsnorm dx row may also put its dweight leaves (dy x) rstd: nowhere (no_leaves), or a
// buffer of the row's c floats (rmsnorm_backward.cuh). vector<V>(i, dy, x, rstd) takes elements i .. i + V - 1.
struct no_leaves {
  template <int V, class T>
  __device__ __forceinline__ void vector(std::uint64_t, const T (&)[V], const T (&)[V], float) const {}
  template <class T>
  __device__ __forceinline__ void scalar(std::uint64_t, T, T, float) const {}
};

// One row of dy and x in registers: its full segments (Segs at most), 16-byte loads, all in flight at once.
template <class T, int Segs>
struct rmsnorm_dx_row_registers {
  uint4 dy[Segs], x[Segs];
  __device__ __forceinline__ void load(const T* __restrict__ dy_rows, const T* __restrict__ x_rows, std::uint64_t t,
                                       std::uint64_t c) {
    const int segments = int(c / (32 * tile_shape<T>::vector_elements));
    const std::uint64_t at = t * c;
    load_row_segments<T, Segs>(dy_rows + at, segments, dy);
    load_row_segments<T, Segs>(x_rows + at, segments, x);
  }
};

// Register-resident rmsnorm dx of row t (a row of at most Segs full segments plus a tail, every array 16-byte
// aligned), by the calling warp, from the row's dy and x already loaded into r: the dot sum(w dy x) (norms::
// weighted_dot_leaf's leaves, the same order), dx written from the registers, and every element's dweight leaf handed
// to leaves. Splitting the loads from the rest lets a caller issue the next row's loads early.
template <class T, int Segs, class Leaves>
__device__ __forceinline__ void rmsnorm_dx_registers_row(const rmsnorm_dx_row_registers<T, Segs>& r,
                                                         const T* __restrict__ dy, const T* __restrict__ x,
                                                         const T* __restrict__ w, const float* __restrict__ rstd,
                                                         std::uint64_t t, std::uint64_t c, T* __restrict__ dx,
                                                         const Leaves& leaves) {
  using Acc = plain_accumulator<float>;
  constexpr int V = tile_shape<T>::vector_elements;
  const int lane = threadIdx.x & 31;
  const int segments = int(c / (32 * V));
  const std::uint64_t at = std::uint64_t(segments) * 32 * V;
  const T* g = dy + t * c;
  const T* xr = x + t * c;
  const uint4(&rdy)[Segs] = r.dy;
  const uint4(&rx)[Segs] = r.x;
  const auto make = [&](int s, Acc(&node)[V]) {
    T ed[V], ex[V], ew[V];
    std::memcpy(ed, &rdy[s], sizeof(ed));
    std::memcpy(ex, &rx[s], sizeof(ex));
    load_vector(w + std::uint64_t(s * 32 + lane) * V, ew);
#pragma unroll
    for (int k = 0; k < V; ++k)
      node[k] = Acc::from_value((widen<float>(ew[k]) * widen<float>(ed[k])) * widen<float>(ex[k]));
  };
  const float dot = registers_leaves_root<Acc, T, Segs>(make, g, c, norms::weighted_dot_leaf<T>{w, xr}).result();
  const float rs = rstd[t];
  const float k = norms::rmsnorm_backward_k(rs, dot, c);
  T* o = dx + t * c;
#pragma unroll
  for (int s = 0; s < Segs; ++s) {
    if (s < segments) {
      const std::uint64_t i = std::uint64_t(s * 32 + lane) * V;
      T ed[V], ex[V], ew[V], eo[V];
      std::memcpy(ed, &rdy[s], sizeof(ed));
      std::memcpy(ex, &rx[s], sizeof(ex));
      load_vector(w + i, ew);
#pragma unroll
      for (int e = 0; e < V; ++e) eo[e] = norms::rmsnorm_dx(ed[e], ex[e], ew[e], rs, k);
      store_vector(o + i, eo);
      leaves.template vector<V>(i, ed, ex, rs);
    }
  }
  for (std::uint64_t i = at + lane; i < c; i += 32) {
    o[i] = norms::rmsnorm_dx(g[i], xr[i], w[i], rs, k);
    leaves.scalar(i, g[i], xr[i], rs);
  }
}

// The backward kernels' register capacity: 8 or 16 segments of two arrays (dy and x), 0 (streaming) beyond.
template <class T>
int backward_register_segments(std::uint64_t c) {
  const int segs = register_segments<T>(c);
  return segs <= 16 ? segs : 0;
}

// The dweight leaves: (dy x) rstd_t, CW columns at a time.
template <class T>
struct dweight_columns {
  const T* dy;
  const T* x;
  const float* rstd;
  std::uint64_t c;
  template <int CW, bool Vector>
  __device__ __forceinline__ void load(std::uint64_t t, std::uint64_t j, float (&v)[CW]) const {
    float a[CW], b[CW];
    load_columns<T, CW, Vector>(dy + t * c + j, a);
    load_columns<T, CW, Vector>(x + t * c + j, b);
    const float r = rstd[t];
#pragma unroll
    for (int i = 0; i < CW; ++i) v[i] = (a[i] * b[i]) * r;
  }
};

// One warp a row (grid-stride): the log-sum-exp passes, then the outputs. The output loop keeps 4 independent exps
// in flight per lane.
template <class T, bool Aligned>
__global__ void __launch_bounds__(256) softmax_kernel(const T* __restrict__ x, row_shape shape, T* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t r = warp; r < shape.rows; r += warps) {
    const T* row = x + r * shape.stride;
    T* o = out + r * shape.stride;
    const std::uint64_t n = shape.length(r);
    const logsumexp_parts<float> parts = warp_row_logsumexp<T, Aligned>(row, n);
    for (std::uint64_t i0 = std::uint64_t(lane); i0 < n; i0 += 128) {
      T e[4];
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (i0 + 32 * k < n) e[k] = row[i0 + 32 * k];
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (i0 + 32 * k < n) o[i0 + 32 * k] = norms::softmax_value(e[k], parts);
    }
  }
}

}  // namespace detred::cuda::detail

namespace detred::cuda::detail {

// The checks and the workspace query of a norm: row_options with the one method, a dense shape, the pointers that
// the shape reads or writes. Returns true when the call must return at once (a size query).
inline bool norm_prologue(void* d_workspace, std::size_t& workspace_bytes, std::size_t needed, const row_shape& shape,
                          const row_options& options,
                          std::initializer_list<std::pair<const void*, const char*>> rows_data,
                          std::initializer_list<std::pair<const void*, const char*>> row_stats, const char* what) {
  check_single_method(options, what);
  detred::detail::check_dense_shape(shape, what);
  check_row_length_limit(shape, what);
  if (workspace_query(d_workspace, workspace_bytes, needed, what)) return true;
  if (shape.cols > 0) {
    if (shape.rows > 0)
      for (const auto& [p, name] : rows_data) check_pointer(p, what, name);
    for (const auto& [p, name] : row_stats) check_pointer(p, what, name);
  }
  return false;
}

}  // namespace detred::cuda::detail

namespace detred::cuda {

template <class T>
void layernorm_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const T* d_weight,
                       const T* d_bias, T* d_out, float* d_mean, float* d_rstd, const row_shape& shape, float eps,
                       cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::layernorm_forward";
  const std::uint64_t rows = shape.rows, c = shape.cols;
  if (detail::norm_prologue(d_workspace, workspace_bytes, 0, shape, options,
                            {{d_x, "d_x"},
                             {d_weight, "d_weight"},
                             {d_bias, "d_bias"},
                             {d_out, "d_out"},
                             {d_mean, "d_mean"},
                             {d_rstd, "d_rstd"}},
                            {}, what))
    return;
  if (rows == 0 || c == 0) return;
  const int threads = detail::row_threads(options);
  const unsigned grid = detail::row_grid(rows, options, threads);
  const bool aligned = detail::rows_aligned<T>(d_x, c) && detail::rows_aligned<T>(d_weight, 0) &&
                       detail::rows_aligned<T>(d_bias, 0) && detail::rows_aligned<T>(d_out, c);
  const int segs = aligned ? detail::register_segments<T>(c) : 0;
  if (segs == 8)
    detail::layernorm_registers_kernel<T, 8>
        <<<grid, threads, 0, stream>>>(d_x, d_weight, d_bias, rows, c, d_out, d_mean, d_rstd, eps);
  else if (segs == 16)
    detail::layernorm_registers_kernel<T, 16>
        <<<grid, threads, 0, stream>>>(d_x, d_weight, d_bias, rows, c, d_out, d_mean, d_rstd, eps);
  else if (segs == 32)
    detail::layernorm_registers_kernel<T, 32>
        <<<grid, threads, 0, stream>>>(d_x, d_weight, d_bias, rows, c, d_out, d_mean, d_rstd, eps);
  else if (aligned)
    detail::layernorm_kernel<T, true>
        <<<grid, threads, 0, stream>>>(d_x, d_weight, d_bias, rows, c, d_out, d_mean, d_rstd, eps);
  else
    detail::layernorm_kernel<T, false>
        <<<grid, threads, 0, stream>>>(d_x, d_weight, d_bias, rows, c, d_out, d_mean, d_rstd, eps);
  check(cudaGetLastError(), what);
}

template <class T>
void rmsnorm_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const T* d_weight, T* d_out,
                     float* d_rstd, const row_shape& shape, float eps, cudaStream_t stream,
                     const row_options& options) {
  constexpr const char* what = "cuda::rmsnorm_forward";
  const std::uint64_t rows = shape.rows, c = shape.cols;
  if (detail::norm_prologue(d_workspace, workspace_bytes, 0, shape, options,
                            {{d_x, "d_x"}, {d_weight, "d_weight"}, {d_out, "d_out"}, {d_rstd, "d_rstd"}}, {}, what))
    return;
  if (rows == 0 || c == 0) return;
  const int threads = detail::row_threads(options);
  const unsigned grid = detail::row_grid(rows, options, threads);
  const bool aligned =
      detail::rows_aligned<T>(d_x, c) && detail::rows_aligned<T>(d_weight, 0) && detail::rows_aligned<T>(d_out, c);
  const int segs = aligned ? detail::register_segments<T>(c) : 0;
  if (segs == 8)
    detail::rmsnorm_registers_kernel<T, 8><<<grid, threads, 0, stream>>>(d_x, d_weight, rows, c, d_out, d_rstd, eps);
  else if (segs == 16)
    detail::rmsnorm_registers_kernel<T, 16><<<grid, threads, 0, stream>>>(d_x, d_weight, rows, c, d_out, d_rstd, eps);
  else if (segs == 32)
    detail::rmsnorm_registers_kernel<T, 32><<<grid, threads, 0, stream>>>(d_x, d_weight, rows, c, d_out, d_rstd, eps);
  else if (aligned)
    detail::rmsnorm_kernel<T, true><<<grid, threads, 0, stream>>>(d_x, d_weight, rows, c, d_out, d_rstd, eps);
  else
    detail::rmsnorm_kernel<T, false><<<grid, threads, 0, stream>>>(d_x, d_weight, rows, c, d_out, d_rstd, eps);
  check(cudaGetLastError(), what);
}

template <class T>
void softmax_forward(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, T* d_out, const row_shape& shape,
                     cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::softmax_forward";
  detail::check_single_method(options, what, true);
  if (detail::row_call_prologue(d_workspace, workspace_bytes, d_x, {}, shape, what)) return;
  if (detail::rows_read_input(shape)) detail::check_pointer(d_out, what, "d_out");
  if (shape.rows == 0) return;
  const int threads = detail::row_threads(options);
  const unsigned grid = detail::row_grid(shape.rows, options, threads);
  if (detail::warp_resident_softmax_applies<T>(d_x, d_out, shape)) {
    // The masked entries in the same pass where asked (fill_past_length): no fill kernel after it.
    if (options.fill_past_length)
      detail::warp_resident_softmax_kernel<T, true><<<grid, threads, 0, stream>>>(d_x, shape, d_out);
    else
      detail::warp_resident_softmax_kernel<T, false><<<grid, threads, 0, stream>>>(d_x, shape, d_out);
    check(cudaGetLastError(), what);
    return;
  } else if (detail::block_rows_apply<T>(d_x, d_out, shape)) {
    detail::launch_block_row_logsumexp(d_x, shape, detail::softmax_to_elements<T>{d_out}, stream, options);
  } else {
    if (detail::rows_aligned<T>(d_x, shape.stride))
      detail::softmax_kernel<T, true><<<grid, threads, 0, stream>>>(d_x, shape, d_out);
    else
      detail::softmax_kernel<T, false><<<grid, threads, 0, stream>>>(d_x, shape, d_out);
  }
  if (options.fill_past_length)
    detail::launch_fill_past_length(d_out, shape, norms::softmax_fill<T>(), stream, options);
  check(cudaGetLastError(), what);
}

}  // namespace detred::cuda

#define DETRED_INSTANTIATE_NORMS(T)                                                                                    \
  template void detred::cuda::layernorm_forward<T>(void*, std::size_t&, const T*, const T*, const T*, T*, float*,      \
                                                   float*, const detred::row_shape&, float, cudaStream_t,              \
                                                   const detred::cuda::row_options&);                                  \
  template void detred::cuda::rmsnorm_forward<T>(void*, std::size_t&, const T*, const T*, T*, float*,                  \
                                                 const detred::row_shape&, float, cudaStream_t,                        \
                                                 const detred::cuda::row_options&);                                    \
  template void detred::cuda::rmsnorm_backward<T>(void*, std::size_t&, const T*, const T*, const T*, const float*, T*, \
                                                  float*, const detred::row_shape&, cudaStream_t,                      \
                                                  const detred::cuda::row_options&);                                   \
  template void detred::cuda::softmax_forward<T>(void*, std::size_t&, const T*, T*, const detred::row_shape&,          \
                                                 cudaStream_t, const detred::cuda::row_options&);
