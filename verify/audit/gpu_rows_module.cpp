// The GPU rows module's entry point (gpu_rows_module.hpp): detred::cuda's sums and the GPU baselines, for each input
// type, behind the one exported symbol detred-audit looks up.
#include "gpu_rows_module.hpp"

#include "baseline_algorithms.hpp"
#include "gpu_algorithms.hpp"

namespace detred::audit {
namespace {

template <floating_input T>
void detred_rows(std::vector<algorithm<T>>& table) {
  auto rows = gpu_algorithms<T>(make_gpu_session());
  table.insert(table.end(), rows.begin(), rows.end());
}

template <floating_input T>
void baseline_rows(std::vector<algorithm<T>>& table) {
  append_gpu_baseline_algorithms<T>(table);
}

const gpu_rows_module the_module{
    gpu_rows_module_version, sizeof(algorithm<float>), &cuda_device_count,    &cuda_device_description,
    &detred_rows<half>,      &detred_rows<bfloat16>,   &detred_rows<float>,   &detred_rows<double>,
    &baseline_rows<half>,    &baseline_rows<bfloat16>, &baseline_rows<float>, &baseline_rows<double>,
};

}  // namespace
}  // namespace detred::audit

extern "C" __attribute__((visibility("default"))) const detred::audit::gpu_rows_module* detred_audit_gpu_rows_module() {
  return &detred::audit::the_module;
}
