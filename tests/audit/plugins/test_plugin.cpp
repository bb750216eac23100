// Plugins for detred-audit --plugin's tests (plugins.cmake): one source, one shared library per defect.
//   PLUGIN_GOOD           a plain left-to-right float sum, claiming run_to_run: passes
//   PLUGIN_BROKEN         a sum that changes with each call, claiming run_to_run: the audit exits 1
//   PLUGIN_WRONG_ABI      reports ABI version 999
//   PLUGIN_NO_ALGORITHMS  lacks the symbol detred_audit_plugin_algorithms
//   PLUGIN_BAD_NAME       a name with a space
//   PLUGIN_BAD_GUARANTEE  guarantee "always"
#include <detred/audit_plugin.h>

namespace {
float left_to_right(const float* x, size_t n, unsigned, void*) {
  float s = -0.0f;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
double left_to_right_f64(const double* x, size_t n, unsigned, void*) {
  double s = -0.0;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
unsigned calls = 0;
double drifting(const double* x, size_t n, unsigned config, void* context) {
  return left_to_right_f64(x, n, config, context) + static_cast<double>(++calls) * 1e-3;
}

#if defined(PLUGIN_BROKEN)
detred_audit_algorithm algorithms[] = {
    {.name = "drifting", .guarantee = "run_to_run", .config_count = 1, .sum_f64_f64 = drifting}};
#elif defined(PLUGIN_BAD_NAME)
detred_audit_algorithm algorithms[] = {
    {.name = "my sum", .guarantee = "run_to_run", .config_count = 1, .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_BAD_GUARANTEE)
detred_audit_algorithm algorithms[] = {
    {.name = "mine", .guarantee = "always", .config_count = 1, .sum_f64_f64 = left_to_right_f64}};
#else
detred_audit_algorithm algorithms[] = {{.name = "left_to_right",
                                        .guarantee = "run_to_run",
                                        .bound = "sequential",
                                        .config_count = 2,
                                        .sum_f32_f32 = left_to_right,
                                        .sum_f64_f64 = left_to_right_f64}};
#endif
}  // namespace

extern "C" unsigned detred_audit_plugin_abi_version(void) {
#ifdef PLUGIN_WRONG_ABI
  return 999;
#else
  return DETRED_AUDIT_PLUGIN_ABI_VERSION;
#endif
}

#ifndef PLUGIN_NO_ALGORITHMS
extern "C" const detred_audit_algorithm* detred_audit_plugin_algorithms(size_t* count) {
  *count = sizeof(algorithms) / sizeof(algorithms[0]);
  return algorithms;
}
#endif
