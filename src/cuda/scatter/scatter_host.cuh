// The host side of detred/cuda/scatter.hpp: argument checks, the workspace layout and the launches of
// scatter_kernels.cuh and segment_kernels.cuh. Included by one .cu file a value type (scatter_<type>.cu), which
// instantiates the calls for both index types.
//
// Workspace of scatter_add / index_add (slots = m * d): a 256-byte header; for narrow words (16-bit rows) the output
// rows' counts and private-slot map (4 bytes each a row), cleared with the header by one memset; the slots' flags
// (4 bytes a slot); then max_levels(n) words a slot (8 bytes for float outputs, 16 for double), level-major.
// max_levels(n) is the most levels any data can need (scatter_levels.hpp); a call clears and reads only the levels its
// data use, and with narrow words only those of the output rows some source row hits.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include "detred/cuda/error.hpp"
#include "detred/cuda/scatter.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/errors.hpp"
#include "src/cuda/scatter/narrow_kernels.cuh"
#include "src/cuda/scatter/scatter_kernels.cuh"
#include "src/cuda/scatter/segment_kernels.cuh"
#include "src/cuda/scatter/segment_registers.cuh"

namespace detred::cuda::detail {

inline constexpr std::size_t scatter_align(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
// Per-block copies of the levels when they fit, with the table, in the 48 KiB of shared memory a block may use without
// opting in (256 slots at n = 2^26: 20 levels, 41 KiB).
inline constexpr std::size_t scatter_private_bytes = 48 * 1024;

// The default block of the scatter launches: 512 threads (measured on the H100 against 256 and 1024:
// docs/PERFORMANCE.md, "Scatter").
inline constexpr int scatter_default_threads = 512;

// The canonical segment kernel's grid cap, in blocks (one warp each) an SM: a block a segment up to several waves of
// the blocks an SM holds; past that, blocks take further segments grid-stride, 32 at a time.
inline constexpr int staged_blocks_per_sm = 256;

// Narrow words (narrow_kernels.cuh) for 16-bit inputs: the input's precision, 0 for the others.
template <class T>
inline constexpr int narrow_precision = sizeof(T) == 2 ? float_traits<T>::precision : 0;

// Narrow words: the block's private copy of the claimed output rows (hot_capacity_max rows at most), and the count a
// row must reach to claim one, in blocks of the scatter (each block flushes its copy: a row is worth keeping when it
// receives many terms a block).
inline constexpr std::size_t narrow_private_bytes = 24 * 1024;
inline constexpr unsigned narrow_hot_blocks = 2;

struct scatter_layout {
  std::size_t counts_offset, hot_offset, flags_offset, levels_offset, bytes;
};

// 16-bit inputs add the narrow words' counts and private-slot map: 4 bytes each an output row, right after the header
// (bytes [0, flags_offset) are zeroed by one memset a call).
template <class T>
scatter_layout scatter_workspace_layout(std::uint64_t n, std::uint64_t m, std::uint64_t slots) {
  using R = scatter_output_t<T>;
  scatter_layout l;
  l.counts_offset = 256;
  l.hot_offset = l.counts_offset + (narrow_precision<T> ? scatter_align(m * 4) : 0);
  l.flags_offset = l.hot_offset + (narrow_precision<T> ? scatter_align(m * 4) : 0);
  l.levels_offset = l.flags_offset + scatter_align(slots * 4);
  l.bytes =
      l.levels_offset + scatter_align(std::size_t(detred::detail::max_levels<R>(n)) * slots * sizeof(level_word<R>));
  return l;
}

inline int scatter_sm_count() {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return sms;
}

inline void check_scatter_options(const scatter_options& o, const char* what) {
  if (o.block_threads != 0 && (o.block_threads < 64 || o.block_threads > 1024 || o.block_threads % 32))
    detred::detail::throw_invalid(what, "scatter_options.block_threads must be 0 or a multiple of 32 in [64, 1024]");
  if (o.grid_blocks < 0) detred::detail::throw_invalid(what, "scatter_options.grid_blocks must be >= 0");
}

inline unsigned grid_for(std::uint64_t work, int threads, int per_sm, int requested) {
  if (requested > 0) return unsigned(requested);
  const std::uint64_t full = (work + threads - 1) / std::uint64_t(threads);
  return unsigned(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(full, std::uint64_t(scatter_sm_count()) * per_sm)));
}

template <class T, class I>
void scatter_rows(void* d_workspace, std::size_t& workspace_bytes, const T* d_source, const I* d_index,
                  scatter_output_t<T>* d_out, std::uint64_t n, std::uint64_t m, std::uint64_t d, cudaStream_t stream,
                  const scatter_options& options, const char* what) {
  using R = scatter_output_t<T>;
  check_scatter_options(options, what);
  if (n > detred::detail::max_scatter_terms) detred::detail::throw_invalid(what, "n must be below 2^36");
  if (d == 0 && n > 0) detred::detail::throw_invalid(what, "d must be >= 1");
  const std::uint64_t slots = m * d;
  const scatter_layout layout = scatter_workspace_layout<T>(n, m, slots);
  if (workspace_query(d_workspace, workspace_bytes, layout.bytes, what)) return;
  if (n > 0 && (d_source == nullptr || d_index == nullptr))
    detred::detail::throw_invalid(what, "d_source or d_index is null");
  if (slots > 0 && d_out == nullptr) detred::detail::throw_invalid(what, "d_out is null");
  auto* base = static_cast<unsigned char*>(d_workspace);
  auto* header = reinterpret_cast<scatter_header*>(base);
  auto* flags = reinterpret_cast<std::uint32_t*>(base + layout.flags_offset);
  auto* levels = reinterpret_cast<level_word<R>*>(base + layout.levels_offset);
  if (slots == 0 || n == 0) check(cudaMemsetAsync(header, 0, sizeof(scatter_header), stream), "cudaMemsetAsync");
  if (slots > 0 && n > 0) {  // n = 0 leaves out as it is, as the CPU twin does
    const int width = detred::detail::level_width<R>(n);
    const int wide_levels = detred::detail::max_levels<R>(n);
    const int threads = options.block_threads ? options.block_threads : scatter_default_threads;
    const int per_sm = 2048 / threads;
    const std::uint64_t count = n * d;
    constexpr std::size_t table_bytes = ((scatter_format<R>::max_field + 1) * 2 + 15) / 16 * 16;
    const std::size_t private_bytes = std::size_t(wide_levels) * slots * sizeof(level_word<R>);
    const bool privatise = private_bytes + table_bytes <= scatter_private_bytes;
    const std::uint64_t work = d == 1 ? n : n * 32;
    const unsigned grid = grid_for(work, threads, per_sm, options.grid_blocks);
    // Narrow words: 16-bit rows (d > 1) into outputs too large for the privatised path (fewer than 2^31 source rows,
    // 2^32 - 1 output rows: the counts are 32-bit); the device then decides from the data (narrow_geometry).
    const int narrow_p =
        narrow_precision<T> != 0 && d > 1 && !privatise && n < (std::uint64_t{1} << 31) && m < 0xffffffffu
            ? narrow_precision<T>
            : 0;
    const int capacity = narrow_p ? int(std::min<std::uint64_t>(hot_capacity_max, narrow_private_bytes / (4 * d))) : 0;
    auto* counts = narrow_p ? reinterpret_cast<unsigned*>(base + layout.counts_offset) : nullptr;
    auto* hot = reinterpret_cast<int*>(base + layout.hot_offset);
    // The header, and with narrow words the counts and the private-slot map (0: no slot), in one memset.
    check(cudaMemsetAsync(header, 0, narrow_p ? layout.flags_offset : sizeof(scatter_header), stream),
          "cudaMemsetAsync");
    if (count > 0)
      geometry_kernel<R, T, I><<<grid_for(count, threads, per_sm, options.grid_blocks), threads, 0, stream>>>(
          d_source, count, header, d_index, n, m, counts);
    if (narrow_p) {
      const unsigned threshold = std::max<unsigned>(256, narrow_hot_blocks * grid);
      hot_rows_kernel<<<grid_for(m, threads, per_sm, 0), threads, 0, stream>>>(counts, m, hot, header, threshold,
                                                                               capacity);
    }
    clear_kernel<R><<<grid_for(std::uint64_t(wide_levels) * slots, threads, per_sm, 0), threads, 0, stream>>>(
        header, width, narrow_p, wide_levels, levels, flags, slots, counts, d);
    {
      const std::size_t shared = table_bytes + (privatise ? private_bytes : 0);
      if (d == 1 && privatise)
        scatter_kernel<R, T, I, false, true, false><<<grid, threads, shared, stream>>>(
            d_source, d_index, n, m, d, header, width, narrow_p, wide_levels, levels, flags);
      else if (d == 1)
        scatter_kernel<R, T, I, false, false, true><<<grid, threads, shared, stream>>>(
            d_source, d_index, n, m, d, header, width, narrow_p, wide_levels, levels, flags);
      else if (privatise)
        scatter_kernel<R, T, I, true, true, false><<<grid, threads, shared, stream>>>(
            d_source, d_index, n, m, d, header, width, narrow_p, wide_levels, levels, flags);
      else
        scatter_kernel<R, T, I, true, false, false><<<grid, threads, shared, stream>>>(
            d_source, d_index, n, m, d, header, width, narrow_p, wide_levels, levels, flags);
      if constexpr (narrow_precision<T> != 0) {
        if (narrow_p)
          narrow_rows_kernel<T, I><<<grid, threads, table_bytes + std::size_t(capacity) * d * 4, stream>>>(
              d_source, d_index, n, m, d, header, narrow_p, wide_levels, reinterpret_cast<std::int32_t*>(levels), flags,
              reinterpret_cast<const int*>(base + layout.hot_offset), capacity);
      }
    }
    finish_kernel<R><<<grid_for(slots, threads, per_sm, 0), threads, 0, stream>>>(
        header, width, narrow_p, wide_levels, levels, flags, d_out, slots, counts, d);
    if (count > 0)
      zero_sign_kernel<R, T, I><<<grid_for(count, threads, per_sm, 0), threads, 0, stream>>>(header, d_source, d_index,
                                                                                             n, m, d, flags, d_out);
    check(cudaGetLastError(), what);
  }
  if (options.d_invalid_count != nullptr)
    check(cudaMemcpyAsync(options.d_invalid_count, &header->invalid, sizeof(std::uint64_t), cudaMemcpyDeviceToDevice,
                          stream),
          "cudaMemcpyAsync");
}

inline void check_segment_options(const segment_options& o, const char* what) {
  if (o.method != sum_method::tree && o.method != sum_method::exact)
    detred::detail::throw_invalid(what, "segment_options.method must be sum_method::tree or sum_method::exact");
  if (o.block_threads != 0 && (o.block_threads < 32 || o.block_threads > 256 || o.block_threads % 32))
    detred::detail::throw_invalid(what, "segment_options.block_threads must be 0 or a multiple of 32 in [32, 256]");
}

template <class T, class Bounds>
void launch_segments(const T* d_values, scatter_output_t<T>* d_out, std::uint64_t segments,
                     const std::uint64_t* d_segments, Bounds bounds, cudaStream_t stream,
                     const segment_options& options, const char* what) {
  using R = scatter_output_t<T>;
  if (segments == 0) return;
  const auto grid_of = [&](int threads) {
    return unsigned(std::min<std::uint64_t>((segments + threads / 32 - 1) / (threads / 32),
                                            std::uint64_t(scatter_sm_count()) * 64));
  };
  // Exact: blocks of 256 threads (measured on the H100: docs/PERFORMANCE.md, "Scatter"), options.block_threads when
  // set. Canonical: one warp a block, a block a segment up to staged_blocks_per_sm an SM, so that the block scheduler
  // balances segments of unequal lengths.
  if (options.method == sum_method::exact) {
    const int threads = options.block_threads ? options.block_threads : 256;
    exact_segment_kernel<R, T><<<grid_of(threads), threads, 0, stream>>>(d_values, d_out, segments, d_segments, bounds);
  } else {
    const unsigned grid =
        unsigned(std::min<std::uint64_t>(segments, std::uint64_t(scatter_sm_count()) * staged_blocks_per_sm));
    // The largest shared-memory carveout, so that canonical_blocks_per_sm rings fit an SM: once a device.
    static std::array<std::atomic<bool>, 64> carved{};
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    if (device >= int(carved.size()) || !carved[std::size_t(device)].load(std::memory_order_acquire)) {
      check(cudaFuncSetAttribute(canonical_segment_kernel<R, T, Bounds>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutMaxShared),
            "cudaFuncSetAttribute");
      if (device < int(carved.size())) carved[std::size_t(device)].store(true, std::memory_order_release);
    }
    canonical_segment_kernel<R, T><<<grid, 32, 0, stream>>>(d_values, d_out, segments, d_segments, bounds);
  }
  check(cudaGetLastError(), what);
}

template <class T, class I>
void segment_sum_impl(void* d_workspace, std::size_t& workspace_bytes, const T* d_values, const I* d_offsets,
                      scatter_output_t<T>* d_out, std::uint64_t segments, cudaStream_t stream,
                      const segment_options& options) {
  check_segment_options(options, "cuda::segment_sum");
  if (workspace_query(d_workspace, workspace_bytes, 0, "cuda::segment_sum")) return;
  if (segments > 0 && (d_offsets == nullptr || d_out == nullptr))
    detred::detail::throw_invalid("cuda::segment_sum", "d_offsets or d_out is null");
  // Canonical, with the values count: long mean lengths take the register kernel (segment_registers.cuh) in the
  // shape their mean length asks for, with the driver's default carveout.
  using R = scatter_output_t<T>;
  const std::uint64_t mean_bytes =
      segments > 0 ? std::min<std::uint64_t>(options.values / segments, std::uint64_t{1} << 40) * sizeof(T) : 0;
  if (options.method == sum_method::tree && mean_bytes >= register_segment_min_mean_bytes) {
    const unsigned grid =
        unsigned(std::min<std::uint64_t>(segments, std::uint64_t(scatter_sm_count()) * staged_blocks_per_sm));
    const auto launch = [&](auto shape) {
      constexpr register_segment_shape s = decltype(shape)::value;
      register_segment_kernel<R, T, csr_segments<I>, s.warps, s.blocks_per_sm>
          <<<grid, 32 * s.warps, 0, stream>>>(d_values, d_out, segments, csr_segments<I>{d_offsets});
    };
    if (mean_bytes >= register_segment_long_mean_bytes)
      launch(std::integral_constant<register_segment_shape, register_segment_long<T>>{});
    else if (mean_bytes >= register_segment_medium_mean_bytes)
      launch(std::integral_constant<register_segment_shape, register_segment_medium<T>>{});
    else
      launch(std::integral_constant<register_segment_shape, register_segment_short<T>>{});
    check(cudaGetLastError(), "cuda::segment_sum");
    return;
  }
  launch_segments(d_values, d_out, segments, nullptr, csr_segments<I>{d_offsets}, stream, options, "cuda::segment_sum");
}

// reduce_by_key: CUB's run-length encoding (unique keys, run lengths, run count: integers, deterministic), an
// exclusive sum of the lengths (the run starts), then the segments. Workspace: CUB's temporary storage and two arrays
// of n indices.
template <class T, class I>
void reduce_by_key_impl(void* d_workspace, std::size_t& workspace_bytes, const I* d_keys, const T* d_values,
                        I* d_unique_keys, scatter_output_t<T>* d_sums, std::uint64_t* d_run_count, std::uint64_t n,
                        cudaStream_t stream, const segment_options& options) {
  const char* what = "cuda::reduce_by_key";
  check_segment_options(options, what);
  if (n > std::uint64_t(INT64_MAX)) detred::detail::throw_invalid(what, "n is too large");
  std::size_t encode_bytes = 0, scan_bytes = 0;
  check(cub::DeviceRunLengthEncode::Encode(nullptr, encode_bytes, d_keys, d_unique_keys, static_cast<I*>(nullptr),
                                           d_run_count, std::int64_t(n), stream),
        "cub::DeviceRunLengthEncode::Encode");
  check(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<I*>(nullptr), static_cast<I*>(nullptr),
                                      std::int64_t(n), stream),
        "cub::DeviceScan::ExclusiveSum");
  const std::size_t temp = scatter_align(std::max(encode_bytes, scan_bytes));
  const std::size_t array = scatter_align(std::size_t(n) * sizeof(I));
  if (workspace_query(d_workspace, workspace_bytes, temp + 2 * array, what)) return;
  if (d_run_count == nullptr) detred::detail::throw_invalid(what, "d_run_count is null");
  if (n == 0) {
    check(cudaMemsetAsync(d_run_count, 0, sizeof(std::uint64_t), stream), "cudaMemsetAsync");
    return;
  }
  if (d_keys == nullptr || d_values == nullptr || d_unique_keys == nullptr || d_sums == nullptr)
    detred::detail::throw_invalid(what, "d_keys, d_values, d_unique_keys or d_sums is null");
  auto* base = static_cast<unsigned char*>(d_workspace);
  I* lengths = reinterpret_cast<I*>(base + temp);
  I* starts = reinterpret_cast<I*>(base + temp + array);
  // Encode writes the lengths of the runs only; the scan reads all n (the rest, zeroed here, starts no run).
  check(cudaMemsetAsync(lengths, 0, std::size_t(n) * sizeof(I), stream), "cudaMemsetAsync");
  check(cub::DeviceRunLengthEncode::Encode(base, encode_bytes, d_keys, d_unique_keys, lengths, d_run_count,
                                           std::int64_t(n), stream),
        "cub::DeviceRunLengthEncode::Encode");
  check(cub::DeviceScan::ExclusiveSum(base, scan_bytes, lengths, starts, std::int64_t(n), stream),
        "cub::DeviceScan::ExclusiveSum");
  launch_segments(d_values, d_sums, n, d_run_count, run_segments<I>{starts, d_run_count, n}, stream, options, what);
}

}  // namespace detred::cuda::detail

namespace detred::cuda {

template <class T, class I>
void scatter_add(void* d_workspace, std::size_t& workspace_bytes, const T* d_values, const I* d_index,
                 scatter_output_t<T>* d_out, std::uint64_t n, std::uint64_t m, cudaStream_t stream,
                 const scatter_options& options) {
  detail::scatter_rows(d_workspace, workspace_bytes, d_values, d_index, d_out, n, m, 1, stream, options,
                       "cuda::scatter_add");
}

template <class T, class I>
void index_add(void* d_workspace, std::size_t& workspace_bytes, const T* d_source, const I* d_index,
               scatter_output_t<T>* d_out, std::uint64_t n, std::uint64_t m, std::uint64_t d, cudaStream_t stream,
               const scatter_options& options) {
  detail::scatter_rows(d_workspace, workspace_bytes, d_source, d_index, d_out, n, m, d, stream, options,
                       "cuda::index_add");
}

template <class T, class I>
void segment_sum(void* d_workspace, std::size_t& workspace_bytes, const T* d_values, const I* d_offsets,
                 scatter_output_t<T>* d_out, std::uint64_t segments, cudaStream_t stream,
                 const segment_options& options) {
  detail::segment_sum_impl(d_workspace, workspace_bytes, d_values, d_offsets, d_out, segments, stream, options);
}

template <class T, class I>
void reduce_by_key(void* d_workspace, std::size_t& workspace_bytes, const I* d_keys, const T* d_values,
                   I* d_unique_keys, scatter_output_t<T>* d_sums, std::uint64_t* d_run_count, std::uint64_t n,
                   cudaStream_t stream, const segment_options& options) {
  detail::reduce_by_key_impl(d_workspace, workspace_bytes, d_keys, d_values, d_unique_keys, d_sums, d_run_count, n,
                             stream, options);
}

}  // namespace detred::cuda

// Explicit instantiations of the public calls for value type T and both index types.
#define DETRED_CUDA_SCATTER_INSTANTIATE_INDEX(T, I)                                                                    \
  template void scatter_add<T, I>(void*, std::size_t&, const T*, const I*, scatter_output_t<T>*, std::uint64_t,        \
                                  std::uint64_t, cudaStream_t, const scatter_options&);                                \
  template void index_add<T, I>(void*, std::size_t&, const T*, const I*, scatter_output_t<T>*, std::uint64_t,          \
                                std::uint64_t, std::uint64_t, cudaStream_t, const scatter_options&);                   \
  template void segment_sum<T, I>(void*, std::size_t&, const T*, const I*, scatter_output_t<T>*, std::uint64_t,        \
                                  cudaStream_t, const segment_options&);                                               \
  template void reduce_by_key<T, I>(void*, std::size_t&, const I*, const T*, I*, scatter_output_t<T>*, std::uint64_t*, \
                                    std::uint64_t, cudaStream_t, const segment_options&);
#define DETRED_CUDA_SCATTER_INSTANTIATE(T)               \
  namespace detred::cuda {                               \
  DETRED_CUDA_SCATTER_INSTANTIATE_INDEX(T, std::int32_t) \
  DETRED_CUDA_SCATTER_INSTANTIATE_INDEX(T, std::int64_t) \
  }
