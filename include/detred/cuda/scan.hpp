// Device-wide scans on the GPU with the CPU scan's bits (docs/ORDER.md section 3): out[i] is bit for bit what
// detred::inclusive_sum_scan / exclusive_sum_scan (and, through detred/cuda/scan.cuh, inclusive_scan /
// exclusive_scan with the same operator) give on the CPU, for every n (2^31 and more included), launch
// configuration, element-aligned pointer and GPU: every output is the canonical reduce of its prefix, so the last
// inclusive output equals cuda::sum / detred::sum (sum_method::tree) of the whole input. Reproducibility:
// cpu_gpu. Bound per output: gamma_{h(i+1)} sum|x_0..x_i| (docs/ACCURACY.md).
//
// Sum scans: half, bfloat16 -> float; float -> float or double; double -> double (exact widening, plain additions).
// exclusive outputs start with -0.0 (the identity of IEEE addition); NaN outputs are canonical NaNs; Inf and overflow
// as IEEE addition gives them in this order. In-place (d_out == d_in) is allowed where the types are equal; any
// other overlap is undefined (not checked on the device).
//
// One pass (a decoupled look-back whose carry-ins follow the Fenwick recurrence over tile roots, docs/ORDER.md):
// 2n elements move (read + write). Memory: the caller provides the workspace (scan_workspace_bytes); no call
// allocates. Asynchronous on `stream`. CUDA failures throw detred::cuda::cuda_error; bad arguments
// detred::invalid_argument.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "detred/errors.hpp"
#include "detred/reduce.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

// How a scan is launched. Speed only, never bits. 0 means "choose" (the device's defaults: 256 x 32 for 4-byte values,
// 128 x 32 for 8-byte ones, 256 x 8 up to 16 bytes, 256 x 4 beyond; src/cuda/common/device_tuning.hpp).
// block_threads: 32, 64, 128 or 256; items_per_thread: 4, 8, 16 or 32 (a tile is their product; 32 items with 64
// threads or more, and only where the tile of values, plus one value per 32, fits 96 KiB of shared memory; tiles
// above 40 KiB, e.g. 256 x 32 for 8-byte values, use dynamic shared memory).
struct scan_launch_config {
  int block_threads = 0;
  int items_per_thread = 0;
};

// Bytes of device workspace for a scan of n values of value_bytes bytes each (the accumulation type; 8 covers every
// sum scan), for every launch configuration: per tile of the smallest shape (128 elements) a status word and two
// values, plus a constant. Pointers from cudaMalloc are suitably aligned (16 bytes needed).
std::size_t scan_workspace_bytes(std::uint64_t n, std::size_t value_bytes = 8);

namespace detail {
// How the scan clears its look-back flags before each call (speed only).
enum class scan_flag_init {
  memset,       // cudaMemsetAsync (the default)
  kernel,       // a small clearing kernel
  kernel_early  // the clearing kernel, and the scan launched with programmatic stream serialization: its launch and
                // its tile loads overlap the clearing; each block waits (griddepcontrol.wait) before its look-back
};

// The scans' per-device defaults (speed only; chosen in src/cuda/common/device_tuning.hpp). scan_launch_config
// fields set by the caller win.
struct scan_tuning {
  int block_threads_4 = 256, items_per_thread_4 = 32;  // values of 4 bytes
  int block_threads_8 = 128, items_per_thread_8 = 32;  // values of 8 bytes (fp64, affine maps of two floats)
  scan_flag_init flag_init = scan_flag_init::memset;
  int prefetch_tiles = 0;  // each block L2-prefetches the input of the tile this many tiles ahead (0: none)
  bool keep_swept = true;  // threads keep their up-swept values in shared memory across the look-back instead of
                           // sweeping their leaves again (Items / 2 stores instead of Items - 1 combines; measured
                           // 2026-11-24: affine-map scan +0.3-0.6% on the H200, sums unchanged)
};
// The scan tuning in force for the current device (cached; device_tuning.cpp).
scan_tuning current_scan_tuning();

// Checks the caller's fields and fills those left 0 from the device's tuning (scan_tuning; its defaults were
// measured on the H100, docs/PERFORMANCE.md: 32 items per thread for values of 4 and 8 bytes, the most bytes in
// flight per SM at 48 registers; 256 threads for 4-byte values, 128 for 8-byte ones). Speed only.
inline scan_launch_config choose_scan_config(scan_launch_config c, std::size_t value_bytes,
                                             const scan_tuning& tuning = {}) {
  const auto bad = [](int v, int a, int b, int d, int e) { return v != 0 && v != a && v != b && v != d && v != e; };
  if (bad(c.block_threads, 32, 64, 128, 256))
    detred::detail::throw_invalid("cuda scan", "scan_launch_config.block_threads must be 0, 32, 64, 128 or 256");
  if (bad(c.items_per_thread, 4, 8, 16, 32))
    detred::detail::throw_invalid("cuda scan", "scan_launch_config.items_per_thread must be 0, 4, 8, 16 or 32");
  if (c.block_threads == 0)
    c.block_threads = value_bytes <= 4 ? tuning.block_threads_4 : value_bytes == 8 ? tuning.block_threads_8 : 256;
  if (c.items_per_thread == 0)
    c.items_per_thread = value_bytes <= 4    ? tuning.items_per_thread_4
                         : value_bytes == 8  ? tuning.items_per_thread_8
                         : value_bytes <= 16 ? 8
                                             : 4;
  if (c.items_per_thread == 32 && c.block_threads == 32)
    detred::detail::throw_invalid("cuda scan", "scan_launch_config: 32 items per thread need 64 threads or more");
  return c;
}

template <class A, class T>
void sum_scan_on_device(const T* d_in, A* d_out, std::uint64_t n, bool exclusive, void* d_workspace,
                        std::size_t workspace_bytes, cudaStream_t stream, const scan_launch_config& config);
// Tests and tools: copies host data to the device (at `offset` elements past a 256-byte boundary), scans (in place
// when in_place and the types are equal), returns the outputs. Allocates on every call.
template <class A, class T>
std::vector<A> sum_scan_host_data(std::span<const T> host, bool exclusive, const scan_launch_config& config,
                                  std::size_t offset, bool in_place);
}  // namespace detail

// out[i] = sum of d_in[0..i] in the canonical order, accumulated in A. See the file comment.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void inclusive_sum_scan(const T* d_in, accumulation_for<Acc, T>* d_out, std::uint64_t n, void* d_workspace,
                        std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                        const scan_launch_config& config = {}) {
  detail::sum_scan_on_device(d_in, d_out, n, false, d_workspace, workspace_bytes, stream, config);
}
// out[i] = sum of d_in[0..i) in the canonical order (out[0] = -0.0). See the file comment.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>>
void exclusive_sum_scan(const T* d_in, accumulation_for<Acc, T>* d_out, std::uint64_t n, void* d_workspace,
                        std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                        const scan_launch_config& config = {}) {
  detail::sum_scan_on_device(d_in, d_out, n, true, d_workspace, workspace_bytes, stream, config);
}

}  // namespace detred::cuda
