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

#include "detred/reduce.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

// How a scan is launched. Speed only, never bits. 0 means "choose" (256 x 32 for 4-byte values, 128 x 32 for 8-byte
// ones, 256 x 8 up to 16 bytes, 256 x 4 beyond). block_threads: 32, 64, 128 or 256; items_per_thread: 4, 8, 16 or 32
// (a tile is their product; 32 items with 64 threads or more, and only where the tile of values fits the kernel's
// 40 KiB of shared memory: not 256 x 32 for 8-byte values).
struct scan_launch_config {
  int block_threads = 0;
  int items_per_thread = 0;
};

// Bytes of device workspace for a scan of n values of value_bytes bytes each (the accumulation type; 8 covers every
// sum scan), for every launch configuration: per tile of the smallest shape (128 elements) a status word and two
// values, plus a constant. Pointers from cudaMalloc are suitably aligned (16 bytes needed).
std::size_t scan_workspace_bytes(std::uint64_t n, std::size_t value_bytes = 8);

namespace detail {
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
