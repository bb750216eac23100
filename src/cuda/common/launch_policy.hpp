// The canonical sum's launch shape, apart from the algorithm: which block size, grid and chunk size a call runs with.
// Every choice here changes speed only, never bits (the GPU tests prove it over many shapes).
#pragma once

#include <cstdint>

#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/errors.hpp"

namespace detred::cuda::detail {

struct device_facts {
  int multiprocessors = 1;
  int resident_blocks_per_multiprocessor = 1;  // of the chunk kernel at the chosen block size
};

inline constexpr int max_block_threads = 256;  // the chunk kernel's __launch_bounds__
inline constexpr int max_tiles_per_chunk = 16;
inline constexpr int one_chunk_per_warp = 0x7fffffff;  // grid_blocks: capped by the launcher at items / warps per block
static_assert(sum_tuning{}.block_threads == max_block_threads);

// Throws invalid_argument for a field outside its documented range (0 always means "choose").
inline void validate(const sum_options& c) {
  if (c.block_threads != 0 && (c.block_threads < 32 || c.block_threads > max_block_threads || c.block_threads % 32))
    detred::detail::throw_invalid("cuda::sum", "sum_options.block_threads must be 0 or a multiple of 32 in [32, 256]");
  if (c.grid_blocks < 0) detred::detail::throw_invalid("cuda::sum", "sum_options.grid_blocks must be >= 0");
  const int t = c.tiles_per_chunk;
  if (t != 0 && t != 1 && t != 2 && t != 4 && t != 8 && t != 16)
    detred::detail::throw_invalid("cuda::sum", "sum_options.tiles_per_chunk must be 0, 1, 2, 4, 8 or 16");
}

// The chunk kernel's block size: the caller's, else the device's tuning.
inline int chosen_block_threads(const sum_options& requested, const sum_tuning& tuning = {}) {
  return requested.block_threads ? requested.block_threads : tuning.block_threads;
}

// Fills the fields the caller left 0:
// - chunks of max_tiles_per_chunk (16) tiles where the input is large enough (fewer roots for the finishing block),
//   smaller ones until the device's resident warps get at least two chunks each;
// - one chunk per warp (no grid-stride loop): the hardware block scheduler then balances the load as blocks finish,
//   which measured 1-2% faster at 1 GiB than a resident-sized grid.
inline sum_options choose_launch_shape(sum_options requested, std::uint64_t n, std::uint64_t tile_elements,
                                       const device_facts& device, const sum_tuning& tuning = {}) {
  sum_options c = requested;
  c.block_threads = chosen_block_threads(requested, tuning);
  const std::uint64_t resident_warps =
      std::uint64_t(device.multiprocessors) * device.resident_blocks_per_multiprocessor * (c.block_threads / 32);
  if (c.tiles_per_chunk == 0) {
    c.tiles_per_chunk = max_tiles_per_chunk;
    while (c.tiles_per_chunk > 1 && n / (tile_elements * c.tiles_per_chunk) < 2 * resident_warps)
      c.tiles_per_chunk /= 2;
  }
  if (c.grid_blocks == 0) c.grid_blocks = one_chunk_per_warp;
  return c;
}

inline sum_options with_block_threads(sum_options c, int block_threads) {
  c.block_threads = block_threads;
  return c;
}

// Whether a call should "spread" (one warp per block instead of several): when the caller left the block size and
// the grid to the library and the chosen shape gives fewer blocks than the device has SMs, the few chunks of a small
// input would sit on a few SMs. On the H100 and the H200 one-warp blocks cut the back-to-back time per call at 2^16
// and 2^20 elements by 18-45% (docs/PERFORMANCE.md). Speed only: the bits never depend on it.
inline bool spread_small_input(const sum_options& requested, const sum_options& chosen, std::uint64_t n,
                               std::uint64_t tile_elements, const device_facts& device) {
  if (requested.block_threads != 0 || requested.grid_blocks != 0) return false;
  const std::uint64_t chunk = tile_elements * std::uint64_t(chosen.tiles_per_chunk);
  const std::uint64_t items = (n + chunk - 1) / chunk;  // at least the chunk count; tail tiles add at most a few
  const std::uint64_t warps_per_block = std::uint64_t(chosen.block_threads / 32);
  return (items + warps_per_block - 1) / warps_per_block < std::uint64_t(device.multiprocessors);
}

}  // namespace detred::cuda::detail
