// The row-reduction kernel behind include/detred/cuda/rows.hpp: one warp per row (grid-stride over rows), each row
// reduced by warp_row_root (include/detred/cuda/warp/row_warp.cuh) and its result written by lane 0.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "detred/cuda/warp/row_warp.cuh"
#include "detred/cuda/error.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/errors.hpp"
#include "detred/rows.hpp"

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

inline void validate_rows(const row_shape& shape, const row_launch& launch, const char* what) {
  if (launch.block_threads != 0 &&
      (launch.block_threads < 32 || launch.block_threads > row_max_block_threads || launch.block_threads % 32))
    detred::detail::throw_invalid(what, "row_launch.block_threads must be 0 or a multiple of 32 in [32, 256]");
  if (launch.grid_blocks < 0) detred::detail::throw_invalid(what, "row_launch.grid_blocks must be >= 0");
  if (shape.lengths == nullptr && shape.causal_period == 0 && shape.stride < shape.cols && shape.rows > 1)
    detred::detail::throw_invalid(what, "row_shape.stride must be >= cols");
  if (shape.cols >= (std::uint64_t{1} << 32)) detred::detail::throw_invalid(what, "rows must be shorter than 2^32");
  if (shape.causal_period != 0 && shape.cols < shape.causal_period)
    detred::detail::throw_invalid(what, "row_shape.cols must be >= causal_period (the longest row)");
}

template <class Acc, class T, class Store>
void launch_rows(const T* d_x, const row_shape& shape, Store store, cudaStream_t stream, const row_launch& launch,
                 const char* what) {
  validate_rows(shape, launch, what);
  if (shape.rows == 0) return;
  const bool aligned = reinterpret_cast<std::uintptr_t>(d_x) % 16 == 0 && (shape.stride * sizeof(T)) % 16 == 0;
  const int threads = launch.block_threads ? launch.block_threads : 256;
  const std::uint64_t warps_per_block = std::uint64_t(threads / 32);
  std::uint64_t grid = (shape.rows + warps_per_block - 1) / warps_per_block;
  if (launch.grid_blocks != 0 && std::uint64_t(launch.grid_blocks) < grid) grid = std::uint64_t(launch.grid_blocks);
  if (grid > 0x7fffffffu) grid = 0x7fffffffu;
  const bool tiles = shape.cols >= tile_shape<T>::elements || (shape.lengths != nullptr && shape.cols == 0);
  const dim3 g{unsigned(grid)}, b{unsigned(threads)};
  if (aligned && tiles) rows_kernel<Acc, T, true, true><<<g, b, 0, stream>>>(d_x, shape, store);
  if (aligned && !tiles) rows_kernel<Acc, T, true, false><<<g, b, 0, stream>>>(d_x, shape, store);
  if (!aligned && tiles) rows_kernel<Acc, T, false, true><<<g, b, 0, stream>>>(d_x, shape, store);
  if (!aligned && !tiles) rows_kernel<Acc, T, false, false><<<g, b, 0, stream>>>(d_x, shape, store);
  check(cudaGetLastError(), what);
}

}  // namespace detred::cuda::detail

// The public entry points (instantiated per input type in rows_<type>.cu).
namespace detred::cuda {

template <class T>
void row_sum(const T* d_x, const row_shape& shape, float* d_out, sum_method method, cudaStream_t stream,
             const row_launch& launch) {
  if (method == sum_method::tree) {
    using Acc = plain_accumulator<float>;
    detail::launch_rows<Acc>(d_x, shape, detail::store_result<Acc>{d_out}, stream, launch, "cuda::row_sum");
  } else if (method == sum_method::tree_neumaier) {
    using Acc = neumaier_accumulator<float>;
    detail::launch_rows<Acc>(d_x, shape, detail::store_result<Acc>{d_out}, stream, launch, "cuda::row_sum");
  } else {
    detred::detail::throw_invalid("cuda::row_sum", "method must be tree or tree_neumaier");
  }
}

template <class T>
void row_max(const T* d_x, const row_shape& shape, float* d_out, cudaStream_t stream, const row_launch& launch) {
  using Acc = max_accumulator<float>;
  detail::launch_rows<Acc>(d_x, shape, detail::store_result<Acc>{d_out}, stream, launch, "cuda::row_max");
}

template <class T>
void row_mean_variance(const T* d_x, const row_shape& shape, float* d_mean, float* d_variance, cudaStream_t stream,
                       const row_launch& launch) {
  using Acc = welford_accumulator<float>;
  detail::launch_rows<Acc>(d_x, shape, detail::store_mean_variance{d_mean, d_variance}, stream, launch,
                           "cuda::row_mean_variance");
}

template <class T>
void row_logsumexp(const T* d_x, const row_shape& shape, float* d_out, cudaStream_t stream, const row_launch& launch) {
  using Acc = logsumexp_accumulator<float>;
  detail::launch_rows<Acc>(d_x, shape, detail::store_result<Acc>{d_out}, stream, launch, "cuda::row_logsumexp");
}

}  // namespace detred::cuda

#define DETRED_INSTANTIATE_ROWS(T)                                                                                     \
  template void detred::cuda::row_sum<T>(const T*, const detred::row_shape&, float*, detred::sum_method, cudaStream_t, \
                                         const detred::cuda::row_launch&);                                             \
  template void detred::cuda::row_max<T>(const T*, const detred::row_shape&, float*, cudaStream_t,                     \
                                         const detred::cuda::row_launch&);                                             \
  template void detred::cuda::row_mean_variance<T>(const T*, const detred::row_shape&, float*, float*, cudaStream_t,   \
                                                   const detred::cuda::row_launch&);                                   \
  template void detred::cuda::row_logsumexp<T>(const T*, const detred::row_shape&, float*, cudaStream_t,               \
                                               const detred::cuda::row_launch&);
