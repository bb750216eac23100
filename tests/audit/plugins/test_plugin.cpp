// Plugins for detred-audit --plugin's tests (plugins.cmake): one source, one shared library per defect.
//   PLUGIN_GOOD           a plain left-to-right float sum, claiming run_to_run: passes
//   PLUGIN_BROKEN         a sum that changes with each call, claiming run_to_run: the audit exits 1
//   PLUGIN_WRONG_ABI      reports ABI version 999
//   PLUGIN_NO_ALGORITHMS  lacks the symbol detred_audit_plugin_algorithms
//   PLUGIN_BAD_NAME       a name with a space
//   PLUGIN_BAD_GUARANTEE  guarantee "always"
//   PLUGIN_NULL_GUARANTEE no guarantee at all
//   PLUGIN_NO_VERSION     lacks the symbol detred_audit_plugin_abi_version
//   PLUGIN_EMPTY          declares no algorithm (count 0)
//   PLUGIN_LONG_NAME      a name of 65 characters
//   PLUGIN_BAD_BOUND      bound "quick", not a detred sum method
//   PLUGIN_NO_TWIN        claims cpu_gpu without a twin
//   PLUGIN_UNKNOWN_TWIN   claims cpu_gpu with the twin "no_such_row"
//   PLUGIN_ZERO_CONFIGS   config_count 0
//   PLUGIN_MANY_CONFIGS   config_count 1025
//   PLUGIN_NO_SUM         no sum function
//   PLUGIN_DUPLICATE      two algorithms of one name
//   PLUGIN_TWINS          cpu_gpu promises: off_twin (its twin cpu/tree's bits plus 0.5: broken), kept_twin (the
//                         left-to-right sum, twin cpu/sequential: kept), twin_absent (twin plugin/f32_only, which has
//                         no f64 function: not checked on f64 inputs) and f32_only
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
#elif defined(PLUGIN_NULL_GUARANTEE)
detred_audit_algorithm algorithms[] = {{.name = "mine", .config_count = 1, .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_EMPTY)
detred_audit_algorithm algorithms[] = {
    {.name = "unused", .guarantee = "run_to_run", .config_count = 1, .sum_f64_f64 = left_to_right_f64}};
#define PLUGIN_COUNT 0
#elif defined(PLUGIN_LONG_NAME)
detred_audit_algorithm algorithms[] = {{.name = "a_name_of_sixty_five_characters_is_one_more_than_the_abi_allows__",
                                        .guarantee = "run_to_run",
                                        .config_count = 1,
                                        .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_BAD_BOUND)
detred_audit_algorithm algorithms[] = {
    {.name = "mine", .guarantee = "run_to_run", .bound = "quick", .config_count = 1, .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_NO_TWIN)
detred_audit_algorithm algorithms[] = {
    {.name = "mine", .guarantee = "cpu_gpu", .config_count = 1, .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_UNKNOWN_TWIN)
detred_audit_algorithm algorithms[] = {{.name = "mine",
                                        .guarantee = "cpu_gpu",
                                        .twin = "no_such_row",
                                        .config_count = 1,
                                        .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_ZERO_CONFIGS)
detred_audit_algorithm algorithms[] = {
    {.name = "mine", .guarantee = "run_to_run", .config_count = 0, .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_MANY_CONFIGS)
detred_audit_algorithm algorithms[] = {
    {.name = "mine", .guarantee = "run_to_run", .config_count = 1025, .sum_f64_f64 = left_to_right_f64}};
#elif defined(PLUGIN_NO_SUM)
detred_audit_algorithm algorithms[] = {{.name = "mine", .guarantee = "run_to_run", .config_count = 1}};
#elif defined(PLUGIN_DUPLICATE)
detred_audit_algorithm algorithms[] = {
    {.name = "mine", .guarantee = "run_to_run", .config_count = 1, .sum_f64_f64 = left_to_right_f64},
    {.name = "mine", .guarantee = "run_to_run", .config_count = 1, .sum_f32_f32 = left_to_right}};
#elif defined(PLUGIN_TWINS)
double off_by_half(const double* x, size_t n, unsigned config, void* context) {
  return left_to_right_f64(x, n, config, context) + 0.5;
}
detred_audit_algorithm algorithms[] = {
    {.name = "off_twin", .guarantee = "cpu_gpu", .twin = "cpu/tree", .config_count = 1, .sum_f64_f64 = off_by_half},
    {.name = "kept_twin",
     .guarantee = "cpu_gpu",
     .twin = "cpu/sequential",
     .config_count = 1,
     .sum_f64_f64 = left_to_right_f64},
    {.name = "twin_absent",
     .guarantee = "cpu_gpu",
     .twin = "plugin/f32_only",
     .config_count = 1,
     .sum_f64_f64 = left_to_right_f64},
    {.name = "f32_only", .guarantee = "run_to_run", .config_count = 1, .sum_f32_f32 = left_to_right}};
#else
detred_audit_algorithm algorithms[] = {{.name = "left_to_right",
                                        .guarantee = "run_to_run",
                                        .bound = "sequential",
                                        .config_count = 2,
                                        .sum_f32_f32 = left_to_right,
                                        .sum_f64_f64 = left_to_right_f64}};
#endif
}  // namespace

#ifndef PLUGIN_COUNT
#define PLUGIN_COUNT (sizeof(algorithms) / sizeof(algorithms[0]))
#endif

#ifndef PLUGIN_NO_VERSION
extern "C" unsigned detred_audit_plugin_abi_version(void) {
#ifdef PLUGIN_WRONG_ABI
  return 999;
#else
  return DETRED_AUDIT_PLUGIN_ABI_VERSION;
#endif
}
#endif

#ifndef PLUGIN_NO_ALGORITHMS
extern "C" const detred_audit_algorithm* detred_audit_plugin_algorithms(size_t* count) {
  *count = PLUGIN_COUNT;
  return algorithms;
}
#endif
