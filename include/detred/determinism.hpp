// The vocabulary of reproducibility guarantees, in the words CUB (cuda::execution::determinism) and PyTorch
// (torch.use_deterministic_algorithms) users already use, extended where detred goes further. Each level implies
// the ones before it. The audit tool's JSON names the same levels with the same strings.
#pragma once

#include <string_view>

namespace detred {

enum class determinism {
  not_guaranteed,  // results may differ between runs (atomics, dynamic scheduling)
  run_to_run,      // same bits on the same device, configuration and input
  gpu_to_gpu,      // same bits on every GPU model and every launch configuration
  cpu_gpu,         // also the same bits as the CPU backend, for every CPU thread count
  exact,           // correctly rounded: the same bits as any exact method, whatever the order, split or device
};

constexpr std::string_view to_string(determinism level) {
  switch (level) {
    case determinism::not_guaranteed:
      return "not_guaranteed";
    case determinism::run_to_run:
      return "run_to_run";
    case determinism::gpu_to_gpu:
      return "gpu_to_gpu";
    case determinism::cpu_gpu:
      return "cpu_gpu";
    case determinism::exact:
      return "exact";
  }
  return "unknown";
}

}  // namespace detred
