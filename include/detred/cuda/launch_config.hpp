// How the device-wide canonical sum is launched. Every field changes speed only, never bits: the result is a function
// of the input values and n (docs/ORDER.md), which the GPU tests prove over many configurations. A zero field means
// "choose for this device and n" (src/cuda/common/launch_policy.hpp); tests and benchmarks set fields to force a shape.
// A field out of range throws detred::invalid_argument.
#pragma once

#include <cstdint>

namespace detred::cuda {

struct launch_config {
  // Threads per block of the main kernel: a multiple of 32 in [32, 256]. 0: chosen (256).
  int block_threads = 0;
  // Blocks of the main kernel, at most one per 32 * block_threads / 32 chunks; warps take chunks grid-stride.
  // 0: chosen (one chunk per warp, so the hardware block scheduler balances the load).
  int grid_blocks = 0;
  // Warp tiles (complete subtrees of 32 rows x 32 lanes x 16 bytes) per chunk, the unit one warp reduces and whose
  // root it writes to the workspace: 1, 2, 4, 8 or 16. 0: chosen from n (16 for large inputs, fewer for small ones).
  int tiles_per_chunk = 0;
};

}  // namespace detred::cuda
