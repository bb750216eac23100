// The row-reduction kernel behind include/detred/cuda/rows.hpp: one warp per row (grid-stride over rows), each row
// reduced by warp_row_root (include/detred/cuda/warp/row_warp.cuh) and its result written by lane 0; and the checks,
// launch shape and workspace idiom that the row reductions and the norms (norms.cuh) share.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "detred/cuda/error.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/workspace.hpp"
#include "detred/errors.hpp"
#include "detred/rows.hpp"
#include "src/cuda/rows/block_row_logsumexp.cuh"
#include "src/cuda/rows/row_logsumexp.cuh"

namespace detred::cuda::detail {

inline constexpr int row_max_block_threads = 256;

// Writes root.result() to out[r].
template <class Acc>
struct store_result {
  float* out;
  __device__ void operator()(std::uint64_t r, const Acc& root) const { out[r] = canonicalize_nan(root.result()); }
};

struct store_mean_variance {
  float* mean;
  float* variance;
  __device__ void operator()(std::uint64_t r, const welford_accumulator<float>& root) const {
    mean[r] = root.result_mean();
    variance[r] = root.result_variance();
  }
};

// Tiles = false when every row is shorter than a warp tile (shape.cols bounds the lengths): fewer registers.
template <class Acc, class T, bool Aligned, bool Tiles, class Store>
__global__ void __launch_bounds__(row_max_block_threads)
    rows_kernel(const T* __restrict__ x, row_shape shape, Store store) {
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t r = warp; r < shape.rows; r += warps) {
    const Acc root = warp_row_root<Acc, T, Aligned, widened_leaf<Acc>, Tiles>(x + r * shape.stride, shape.length(r),
                                                                              widened_leaf<Acc>{});
    if ((threadIdx.x & 31) == 0) store(r, root);
  }
}

// The warp counter of row_warp.cuh holds levels 0..31: rows shorter than 2^32 elements (lengths are int32 anyway).
inline void check_row_length_limit(const row_shape& shape, const char* what) {
  if (shape.cols >= (std::uint64_t{1} << 32)) detred::detail::throw_invalid(what, "row_shape.cols must be below 2^32");
}

// The launch fields of row_options (speed only), and fill_past_length where the call takes it; `what` names the call.
inline void check_row_launch(const row_options& options, const char* what, bool takes_fill = false) {
  if (options.fill_past_length && !takes_fill)
    detred::detail::throw_invalid(what, "row_options.fill_past_length is for softmax_forward and log_softmax_forward");
  if (options.block_threads != 0 &&
      (options.block_threads < 32 || options.block_threads > row_max_block_threads || options.block_threads % 32))
    detred::detail::throw_invalid(what, "row_options.block_threads must be 0 or a multiple of 32 in [32, 256]");
  if (options.grid_blocks < 0) detred::detail::throw_invalid(what, "row_options.grid_blocks must be >= 0");
}

// row_options of a call that has one method (every row call but row_sum, and the norms).
inline void check_single_method(const row_options& options, const char* what, bool takes_fill = false) {
  if (options.method != sum_method::tree)
    detred::detail::throw_invalid(what, "row_options.method must be tree (the only method of this call)");
  check_row_launch(options, what, takes_fill);
}

inline void check_pointer(const void* p, const char* what, const char* name) {
  if (p == nullptr) detred::detail::throw_invalid(what, std::string(name) + " is null");
}

// Whether any row may have elements (then the input is read).
inline bool rows_read_input(const row_shape& shape) {
  return shape.rows > 0 && (shape.cols > 0 || shape.lengths != nullptr);
}

// The launch shape: options.block_threads (256 when 0) threads, one row per warp, or options.grid_blocks blocks.
inline unsigned row_grid(std::uint64_t rows, const row_options& options, int threads) {
  const std::uint64_t per_block = std::uint64_t(threads / 32);
  std::uint64_t grid = (rows + per_block - 1) / per_block;
  if (options.grid_blocks != 0 && std::uint64_t(options.grid_blocks) < grid) grid = std::uint64_t(options.grid_blocks);
  return unsigned(grid < 0x7fffffffu ? grid : 0x7fffffffu);
}
inline int row_threads(const row_options& options) { return options.block_threads ? options.block_threads : 256; }

// Writes value into the entries [length(r), cols) of every row of out: one warp a row, grid-stride.
template <class T>
__global__ void __launch_bounds__(256) fill_past_length_kernel(T* __restrict__ out, row_shape shape, T value) {
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  for (std::uint64_t r = warp; r < shape.rows; r += warps) {
    T* o = out + r * shape.stride;
    for (std::uint64_t i = shape.length(r) + (threadIdx.x & 31); i < shape.cols; i += 32) o[i] = value;
  }
}

template <class T>
void launch_fill_past_length(T* out, const row_shape& shape, T value, cudaStream_t stream, const row_options& options) {
  const int threads = row_threads(options);
  fill_past_length_kernel<T><<<row_grid(shape.rows, options, threads), threads, 0, stream>>>(out, shape, value);
}

template <class T>
bool rows_aligned(const void* p, std::uint64_t stride) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (stride * sizeof(T)) % 16 == 0;
}

// Whether a row may reach a warp tile (shape.cols bounds the lengths; 0 with lengths: unknown).
template <class T>
bool rows_may_have_tiles(const row_shape& shape) {
  return shape.cols >= tile_shape<T>::elements || (shape.lengths != nullptr && shape.cols == 0);
}

// The common part of every row reduction, after the checks: one warp per row, results through `store`.
template <class Acc, class T, class Store>
void launch_rows(const T* d_x, const row_shape& shape, Store store, cudaStream_t stream, const row_options& options,
                 const char* what) {
  if (shape.rows == 0) return;
  const bool aligned = rows_aligned<T>(d_x, shape.stride);
  const bool tiles = rows_may_have_tiles<T>(shape);
  const int threads = row_threads(options);
  const dim3 g{row_grid(shape.rows, options, threads)}, b{unsigned(threads)};
  if (aligned && tiles) rows_kernel<Acc, T, true, true><<<g, b, 0, stream>>>(d_x, shape, store);
  if (aligned && !tiles) rows_kernel<Acc, T, true, false><<<g, b, 0, stream>>>(d_x, shape, store);
  if (!aligned && tiles) rows_kernel<Acc, T, false, true><<<g, b, 0, stream>>>(d_x, shape, store);
  if (!aligned && !tiles) rows_kernel<Acc, T, false, false><<<g, b, 0, stream>>>(d_x, shape, store);
  check(cudaGetLastError(), what);
}

// The checks and the workspace query of a row reduction with `outputs` output arrays. Returns true when the call must
// return at once (a size query).
inline bool row_call_prologue(void* d_workspace, std::size_t& workspace_bytes, const void* d_x,
                              std::initializer_list<std::pair<const void*, const char*>> outputs,
                              const row_shape& shape, const char* what) {
  detred::detail::check_row_shape(shape, what);
  check_row_length_limit(shape, what);
  if (workspace_query(d_workspace, workspace_bytes, 0, what)) return true;
  if (rows_read_input(shape)) check_pointer(d_x, what, "d_x");
  if (shape.rows > 0)
    for (const auto& [p, name] : outputs) check_pointer(p, what, name);
  return false;
}

}  // namespace detred::cuda::detail

// The public entry points (instantiated per input type in rows_<type>.cu).
namespace detred::cuda {

template <class T>
void row_sum(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
             cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::row_sum";
  if (options.method != sum_method::tree && options.method != sum_method::tree_neumaier)
    detred::detail::throw_invalid(what, "row_options.method must be tree or tree_neumaier");
  detail::check_row_launch(options, what);
  if (detail::row_call_prologue(d_workspace, workspace_bytes, d_x, {{d_out, "d_out"}}, shape, what)) return;
  if (options.method == sum_method::tree) {
    using Acc = plain_accumulator<float>;
    detail::launch_rows<Acc>(d_x, shape, detail::store_result<Acc>{d_out}, stream, options, what);
  } else {
    using Acc = neumaier_accumulator<float>;
    detail::launch_rows<Acc>(d_x, shape, detail::store_result<Acc>{d_out}, stream, options, what);
  }
}

template <class T>
void row_max(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
             cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::row_max";
  detail::check_single_method(options, what);
  if (detail::row_call_prologue(d_workspace, workspace_bytes, d_x, {{d_out, "d_out"}}, shape, what)) return;
  using Acc = max_accumulator<float>;
  detail::launch_rows<Acc>(d_x, shape, detail::store_result<Acc>{d_out}, stream, options, what);
}

template <class T>
void row_mean_variance(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_mean, float* d_variance,
                       const row_shape& shape, cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::row_mean_variance";
  detail::check_single_method(options, what);
  if (detail::row_call_prologue(d_workspace, workspace_bytes, d_x, {{d_mean, "d_mean"}, {d_variance, "d_variance"}},
                                shape, what))
    return;
  using Acc = welford_accumulator<float>;
  detail::launch_rows<Acc>(d_x, shape, detail::store_mean_variance{d_mean, d_variance}, stream, options, what);
}

template <class T>
void row_logsumexp(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, float* d_out, const row_shape& shape,
                   cudaStream_t stream, const row_options& options) {
  constexpr const char* what = "cuda::row_logsumexp";
  detail::check_single_method(options, what);
  if (detail::row_call_prologue(d_workspace, workspace_bytes, d_x, {{d_out, "d_out"}}, shape, what)) return;
  if (shape.rows == 0) return;
  if (detail::block_rows_apply<T>(d_x, nullptr, shape)) {
    detail::launch_block_row_logsumexp(d_x, shape, detail::logsumexp_to_rows{d_out}, stream, options);
    check(cudaGetLastError(), what);
    return;
  }
  const int threads = detail::row_threads(options);
  const dim3 g{detail::row_grid(shape.rows, options, threads)}, b{unsigned(threads)};
  if (detail::rows_aligned<T>(d_x, shape.stride))
    detail::row_logsumexp_kernel<T, true><<<g, b, 0, stream>>>(d_x, shape, d_out);
  else
    detail::row_logsumexp_kernel<T, false><<<g, b, 0, stream>>>(d_x, shape, d_out);
  check(cudaGetLastError(), what);
}

}  // namespace detred::cuda

#define DETRED_INSTANTIATE_ROWS(T)                                                                              \
  template void detred::cuda::row_sum<T>(void*, std::size_t&, const T*, float*, const detred::row_shape&,       \
                                         cudaStream_t, const detred::cuda::row_options&);                       \
  template void detred::cuda::row_max<T>(void*, std::size_t&, const T*, float*, const detred::row_shape&,       \
                                         cudaStream_t, const detred::cuda::row_options&);                       \
  template void detred::cuda::row_mean_variance<T>(void*, std::size_t&, const T*, float*, float*,               \
                                                   const detred::row_shape&, cudaStream_t,                      \
                                                   const detred::cuda::row_options&);                           \
  template void detred::cuda::row_logsumexp<T>(void*, std::size_t&, const T*, float*, const detred::row_shape&, \
                                               cudaStream_t, const detred::cuda::row_options&);
