// Shared pieces of the GPU test programs: the skip without a device, the quick mode for compute-sanitizer, and the
// launch configurations that every canonical-order GPU test runs.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/sum.hpp"

// A macro, not a function: GTEST_SKIP() returns from the function it is written in, which must be the test body.
#define DETRED_SKIP_WITHOUT_GPU()          \
  if (::detred::cuda::device_count() == 0) \
  GTEST_SKIP() << "no CUDA device: detred's GPU tests need one (ctest -L gpu on the GPU machine)"

namespace detred::test {

// DETRED_GPU_TEST_QUICK=1 (used under compute-sanitizer, which slows kernels 10-100x): fewer configurations and sizes.
inline bool gpu_test_quick() { return std::getenv("DETRED_GPU_TEST_QUICK") != nullptr; }

// 30 launch shapes of the canonical sum (5 in quick mode), method tree: the default, and shapes that move every
// chunk, tile and grid boundary. Fields: block_threads, grid_blocks, tiles_per_chunk.
inline std::vector<cuda::sum_options> canonical_launch_configs() {
  const auto shape = [](int block, int grid, int tiles) {
    return cuda::sum_options{.block_threads = block, .grid_blocks = grid, .tiles_per_chunk = tiles};
  };
  if (gpu_test_quick()) return {{}, shape(32, 1, 1), shape(96, 0, 2), shape(256, 3, 16), shape(160, 1000, 4)};
  std::vector<cuda::sum_options> configs{{}};
  for (int block : {32, 96, 256})
    for (int tiles : {1, 2, 4, 16})
      for (int grid : {1, 0}) configs.push_back(shape(block, grid, tiles));
  for (const cuda::sum_options& c :
       {shape(64, 3, 8), shape(128, 7, 16), shape(160, 1000, 1), shape(224, 133, 2), shape(256, 4096, 4)})
    configs.push_back(c);
  return configs;
}

}  // namespace detred::test
