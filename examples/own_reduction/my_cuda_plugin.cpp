// The user's CUDA sums as a detred-audit plugin: detred-audit data.npy --plugin ./libmy_cuda_plugin.so
// cuda_fixed_order claims gpu_to_gpu (same bits for every launch shape) and keeps it; cuda_atomic claims run_to_run,
// which atomics break: the audit exits 1. (A plugin that claims not_guaranteed for it would pass, and be reported.)
#include <detred/audit_plugin.h>

#include "my_cuda_sums.hpp"

namespace {
const unsigned block_counts[] = {1, 7, 64, 132, 264, 1024};
float fixed_order(const float* x, size_t n, unsigned config, void*) {
  return mine::cuda::fixed_order_sum(x, n, block_counts[config]);
}
float atomic(const float* x, size_t n, unsigned config, void*) {
  return mine::cuda::atomic_sum(x, n, block_counts[config]);
}
detred_audit_algorithm algorithms[2] = {
    {.name = "cuda_fixed_order",
     .guarantee = "gpu_to_gpu",
     .bound = "sequential",
     .config_count = 6,
     .sum_f32_f32 = fixed_order},
    {.name = "cuda_atomic", .guarantee = "run_to_run", .bound = "sequential", .config_count = 6, .sum_f32_f32 = atomic},
};
}  // namespace

extern "C" unsigned detred_audit_plugin_abi_version(void) { return DETRED_AUDIT_PLUGIN_ABI_VERSION; }
extern "C" const detred_audit_algorithm* detred_audit_plugin_algorithms(size_t* count) {
  *count = 2;
  return algorithms;
}
