// cuda::sum's sum_method::exact (docs/EXACT.md), host-side declarations: the workspace it needs and its launcher,
// instantiated per input type in exact_sum_<type>.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace detred::cuda::detail {

// Blocks of the first kernel: at most exact_max_blocks, each over at most 2^30 terms (so that a block's limbs stay
// below 2^62 in magnitude), so n <= 2^42.
inline constexpr std::uint64_t exact_max_blocks = 4096;
inline constexpr std::uint64_t exact_min_items_per_block = 4096;
inline constexpr std::uint64_t exact_max_n = exact_max_blocks << 30;
inline constexpr std::size_t exact_block_state_bytes = 69 * 8 + 8;  // the double layout's limbs and a flag word

inline constexpr std::uint64_t exact_block_bound(std::uint64_t n) {
  const std::uint64_t b = (n + exact_min_items_per_block - 1) / exact_min_items_per_block;
  return b < 1 ? 1 : (b > exact_max_blocks ? exact_max_blocks : b);
}
// Bytes after the 256-byte header that the exact sum of n terms needs (the per-block states).
inline constexpr std::size_t exact_workspace_bytes(std::uint64_t n) {
  return std::size_t(exact_block_bound(n)) * exact_block_state_bytes;
}

// Writes the correctly rounded sum of d_in[0..n) to *d_out, asynchronously on `stream`. Arguments checked by the
// caller (sum_on_device); throws invalid_argument for n > exact_max_n.
template <class A, class T>
void launch_exact_sum(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, cudaStream_t stream);

// The exact state of d_in[0..n) instead of its rounding, for distributed sums (src/nccl/): at d_state, L + 2 integers:
// the normalised limbs of exact_accumulator_for<T> (L of them), the count, the flags. Asynchronous on `stream`; the
// workspace is cuda::sum's.
template <class T>
void launch_exact_state(const T* d_in, std::uint64_t n, long long* d_state, void* d_workspace, cudaStream_t stream);

}  // namespace detred::cuda::detail
