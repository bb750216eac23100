// Shared pieces of the GPU test programs: the skip without a device, the quick mode for compute-sanitizer, and the
// launch configurations that every canonical-order GPU test runs.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/launch_config.hpp"

// A macro, not a function: GTEST_SKIP() returns from the function it is written in, which must be the test body.
#define DETRED_SKIP_WITHOUT_GPU()          \
  if (::detred::cuda::device_count() == 0) \
  GTEST_SKIP() << "no CUDA device: detred's GPU tests need one (ctest -L gpu on the GPU machine)"

namespace detred::test {

// DETRED_GPU_TEST_QUICK=1 (used under compute-sanitizer, which slows kernels 10-100x): fewer configurations and sizes.
inline bool gpu_test_quick() { return std::getenv("DETRED_GPU_TEST_QUICK") != nullptr; }

// 30 launch configurations (5 in quick mode): the default, and shapes that move every chunk, tile and grid boundary.
inline std::vector<cuda::launch_config> canonical_launch_configs() {
  if (gpu_test_quick()) return {{}, {32, 1, 1}, {96, 0, 2}, {256, 3, 16}, {160, 1000, 4}};
  std::vector<cuda::launch_config> configs{{}};
  for (int block : {32, 96, 256})
    for (int tiles : {1, 2, 4, 16})
      for (int grid : {1, 0}) configs.push_back({block, grid, tiles});
  for (cuda::launch_config c :
       {cuda::launch_config{64, 3, 8}, {128, 7, 16}, {160, 1000, 1}, {224, 133, 2}, {256, 4096, 4}})
    configs.push_back(c);
  return configs;
}

// The generic engine's variants (DETRED_GENERIC_ENGINE, include/detred/cuda/transform_reduce.cuh): each changes speed
// only, so every one must give the CPU's bits. "" is the run-3 base engine; the tuned default (the variable unset, used
// by every other test) is "ahead=3,prefold=1,batch=1". Quick mode: three that cover every new path.
inline std::vector<std::string> generic_engine_variants() {
  if (gpu_test_quick()) return {"", "ahead=3,prefold=1,batch=1", "single=1,prefold=1,batch=1"};
  // Every chunk kernel instantiated (ahead x minblocks x single x prefold), batch spread over them.
  return {"",
          "prefold=1,batch=1",
          "batch=1",
          "ahead=3",
          "ahead=3,prefold=1,batch=1",
          "ahead=4,batch=1",
          "ahead=4,prefold=1",
          "minblocks=4",
          "minblocks=4,prefold=1,batch=1",
          "minblocks=3",
          "minblocks=3,prefold=1,batch=1",
          "single=1",
          "single=1,prefold=1,batch=1"};
}

// Sets DETRED_GENERIC_ENGINE for its lifetime (restores the previous value after).
struct scoped_generic_engine {
  std::string previous;
  bool had = false;
  explicit scoped_generic_engine(const std::string& variant) {
    if (const char* p = std::getenv("DETRED_GENERIC_ENGINE")) previous = p, had = true;
    setenv("DETRED_GENERIC_ENGINE", variant.c_str(), 1);
  }
  ~scoped_generic_engine() {
    if (had)
      setenv("DETRED_GENERIC_ENGINE", previous.c_str(), 1);
    else
      unsetenv("DETRED_GENERIC_ENGINE");
  }
  scoped_generic_engine(const scoped_generic_engine&) = delete;
  scoped_generic_engine& operator=(const scoped_generic_engine&) = delete;
};

}  // namespace detred::test
