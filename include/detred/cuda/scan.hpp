// Device-wide sum scans on the GPU with the CPU scan's bits (docs/ORDER.md section 3): out[i] is bit for bit what
// detred::inclusive_sum_scan / exclusive_sum_scan give on the CPU, for every n (2^31 and more included), option,
// element-aligned pointer and GPU: every output is the canonical reduce of its prefix, so the last inclusive output
// equals cuda::sum / detred::sum (sum_method::tree) of the whole input. Reproducibility: cpu_gpu. Bound per output:
// gamma_{h(i+1)} sum|x_0..x_i| (docs/ACCURACY.md). Scans with a user's operator: detred/cuda/scan.cuh (nvcc).
//
// Sum scans: half, bfloat16 -> float; float -> float or double; double -> double (exact widening, plain additions).
// exclusive outputs start with -0.0 (the identity of IEEE addition); NaN outputs are canonical NaNs; Inf and overflow
// as IEEE addition gives them in this order. n == 0 writes nothing. In-place (d_out == d_in) is allowed where the
// types are equal; any other overlap is undefined (not checked on the device).
//
// The call shape of docs/API.md: workspace first (d_workspace == nullptr: the bytes needed are written to
// workspace_bytes, nothing else happens), then inputs, outputs, n, stream, options. One pass (a decoupled look-back
// whose carry-ins follow the Fenwick recurrence over tile roots, docs/ORDER.md): 2n elements move (read + write). The
// workspace (16-byte aligned; cudaMalloc's is) serves one call in flight at a time. Asynchronous on `stream`. CUDA
// failures throw detred::cuda::cuda_error; bad arguments detred::invalid_argument naming the call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "detred/cuda/workspace.hpp"
#include "detred/errors.hpp"
#include "detred/reduce.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda {

// How a scan is launched: speed only, never bits. 0 means "chosen by the device's tuning"
// (include/detred/cuda/detail/tuning.hpp; 256 x 32 for values of 4 bytes, 128 x 32 for 8 bytes, 256 x 8 up to 16
// bytes, 256 x 4 beyond). A tile is block_threads * items_per_thread elements; 32 items need 64 threads or more, and
// a tile's values (plus one value per 32) must fit 96 KiB of shared memory (tiles above 40 KiB use dynamic shared
// memory). Other values throw detred::invalid_argument naming the field.
struct scan_options {
  int block_threads = 0;     // 0, 32, 64, 128 or 256
  int items_per_thread = 0;  // 0, 4, 8, 16 or 32
};

namespace detail {

// Throws invalid_argument (naming `what` and the field) for a value scan_options does not allow.
inline void check_scan_options(const scan_options& o, const char* what) {
  const auto allowed = [](int v, int a, int b, int c, int d) { return v == 0 || v == a || v == b || v == c || v == d; };
  if (!allowed(o.block_threads, 32, 64, 128, 256))
    detred::detail::throw_invalid(what, "scan_options.block_threads must be 0, 32, 64, 128 or 256");
  if (!allowed(o.items_per_thread, 4, 8, 16, 32))
    detred::detail::throw_invalid(what, "scan_options.items_per_thread must be 0, 4, 8, 16 or 32");
  if (o.block_threads == 32 && o.items_per_thread == 32)
    detred::detail::throw_invalid(what, "scan_options: 32 items per thread need block_threads of 64 or more");
}

// Bytes of workspace for a scan of n values of value_bytes bytes each (the type the scan combines), for every launch
// shape: per tile of the smallest shape (128 elements) either two packed look-back words of at most 16 bytes (values
// of 4 or 8 bytes) or a status word and two values, plus 256 bytes.
constexpr std::size_t scan_workspace_size(std::uint64_t n, std::size_t value_bytes) {
  const std::uint64_t tiles = (n + 127) / 128;  // the smallest tile: 32 threads x 4 items
  const auto align16 = [](std::uint64_t b) { return (b + 15) / 16 * 16; };
  const std::uint64_t packed = tiles * 32;
  const std::uint64_t separate = align16(tiles * 4) + 2 * align16(tiles * value_bytes);
  return std::size_t((packed > separate ? packed : separate) + 256);
}

// The compiled sum scans (src/cuda/scan/): d_workspace holds at least scan_workspace_size(n, sizeof(A)) bytes.
// `what` names the public call in errors.
// The type pairs the sum scans are compiled for (the file comment): 16-bit inputs accumulate in float only.
template <class T, class A>
concept sum_scan_pair = accumulable<T, A> && !(sizeof(T) == 2 && std::same_as<A, double>);

template <class A, class T>
void sum_scan_on_device(void* d_workspace, const T* d_in, A* d_out, std::uint64_t n, bool exclusive,
                        cudaStream_t stream, const scan_options& options, const char* what);

template <class A, class T>
void sum_scan(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, A* d_out, std::uint64_t n, bool exclusive,
              cudaStream_t stream, const scan_options& options, const char* what) {
  check_scan_options(options, what);
  if (workspace_query(d_workspace, workspace_bytes, scan_workspace_size(n, sizeof(A)), what)) return;
  sum_scan_on_device(d_workspace, d_in, d_out, n, exclusive, stream, options, what);
}

}  // namespace detail

// d_out[i] = sum of d_in[0..i] in the canonical order, accumulated in A = accumulation_for<Acc, T>. See the file
// comment.
template <class Acc = default_accumulation, floating_input T>
requires detail::sum_scan_pair<T, accumulation_for<Acc, T>>
void inclusive_sum_scan(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, accumulation_for<Acc, T>* d_out,
                        std::uint64_t n, cudaStream_t stream = nullptr, const scan_options& options = {}) {
  detail::sum_scan(d_workspace, workspace_bytes, d_in, d_out, n, false, stream, options, "cuda::inclusive_sum_scan");
}

// d_out[i] = sum of d_in[0..i) in the canonical order (d_out[0] = -0.0), accumulated in A. See the file comment.
template <class Acc = default_accumulation, floating_input T>
requires detail::sum_scan_pair<T, accumulation_for<Acc, T>>
void exclusive_sum_scan(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, accumulation_for<Acc, T>* d_out,
                        std::uint64_t n, cudaStream_t stream = nullptr, const scan_options& options = {}) {
  detail::sum_scan(d_workspace, workspace_bytes, d_in, d_out, n, true, stream, options, "cuda::exclusive_sum_scan");
}

}  // namespace detred::cuda
