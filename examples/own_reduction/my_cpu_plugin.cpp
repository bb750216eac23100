// The user's CPU sums as a detred-audit plugin (include/detred/audit_plugin.h):
//   detred-audit data.npy --plugin ./libmy_cpu_plugin.so
// fixed_order claims gpu_to_gpu (same bits in every configuration) and keeps it; chunked claims the same and breaks
// it, so the audit exits 1 when it is selected.
#include <detred/audit_plugin.h>

#include "my_sums.hpp"

namespace {
const unsigned thread_counts[] = {1, 2, 3, 4, 7, 8};
float fixed_order(const float* x, size_t n, unsigned config, void*) {
  return mine::fixed_order_sum(x, n, thread_counts[config]);
}
float chunked(const float* x, size_t n, unsigned config, void*) {
  return mine::chunked_sum(x, n, thread_counts[config]);
}
detred_audit_algorithm algorithms[2] = {
    {.name = "fixed_order",
     .guarantee = "gpu_to_gpu",
     .bound = "sequential",
     .config_count = 6,
     .sum_f32_f32 = fixed_order},
    {.name = "chunked", .guarantee = "gpu_to_gpu", .bound = "sequential", .config_count = 6, .sum_f32_f32 = chunked},
};
}  // namespace

extern "C" unsigned detred_audit_plugin_abi_version(void) { return DETRED_AUDIT_PLUGIN_ABI_VERSION; }
extern "C" const detred_audit_algorithm* detred_audit_plugin_algorithms(size_t* count) {
  *count = 2;
  return algorithms;
}
