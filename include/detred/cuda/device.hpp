// The facts about a CUDA device that detred's launch tuning and GPU tests use.
#pragma once

#include <cstddef>
#include <string>

namespace detred::cuda {

// Number of usable CUDA devices; 0 (not an error) when there is no device or no driver, so that GPU tests can skip
// with a clear message on a machine without a GPU. Other failures throw cuda_error.
int device_count();

struct device_summary {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int multiprocessors = 0;
  std::size_t l2_cache_bytes = 0;
  std::size_t global_memory_bytes = 0;
};

device_summary describe_device(int device);

}  // namespace detred::cuda
