// The table of algorithms one audit runs: the CPU entries, the GPU entries where asked for and built, filtered by
// --algorithms.
#pragma once

#include <string>
#include <vector>

#include "algorithms.hpp"

namespace detred::audit {

struct registry_options {
  bool cpu = true;
  bool gpu = false;                     // needs the GPU rows module (has_gpu_backend()) and a device
  std::vector<unsigned> thread_counts;  // CPU configurations beyond the default
  std::vector<std::string> selection;   // --algorithms entries; empty: all
};

// True when the GPU rows module (gpu_rows_module.hpp) is built and loads; otherwise *why (when given) says why.
bool has_gpu_backend(std::string* why = nullptr);
// Usable CUDA devices (0 without the module, a driver or a device).
int gpu_device_count();
// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)", or "" without a device.
std::string gpu_description();

// The rows `options` select, and the twin of each selected row that has one (its promise is checked against it).
template <floating_input T>
std::vector<algorithm<T>> make_registry(const registry_options& options);

// The stable names of every algorithm this build knows, for any input type, in registry order.
std::vector<std::string> all_algorithm_names();

}  // namespace detred::audit
