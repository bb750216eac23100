/* The C ABI through which detred-audit audits a user's own sums: `detred-audit --plugin libmine.so` (repeatable).
 *
 * A plugin is a shared library (a path; a bare file name means the current directory, not the library search path)
 * that exports two functions with C linkage:
 *
 *   unsigned detred_audit_plugin_abi_version(void);            returns DETRED_AUDIT_PLUGIN_ABI_VERSION
 *   const detred_audit_algorithm* detred_audit_plugin_algorithms(size_t* count);
 *                                                              its algorithms: *count entries, alive until unloaded
 *
 * Each algorithm is audited beside detred's own rows, under the name "plugin/<name>" ("plugin/<name>@f64" for a
 * double accumulation of 16- or 32-bit inputs), with the same rules (docs/AUDIT.md): the error against the exact
 * sum, the bound (when one is named), distinct results over runs, configurations and orders, and the exit status: a
 * plugin algorithm that breaks the guarantee it claims fails the run (exit 1), like a detred one. A plugin that
 * cannot be used (the file does not load, a symbol is missing, another ABI version, an invalid name, guarantee,
 * bound or configuration count, no sum function) ends the run with exit status 2 and one line saying why. A plugin
 * that crashes inside its own sum function takes the audit with it.
 *
 * Versioning: DETRED_AUDIT_PLUGIN_ABI_VERSION changes whenever this header's layout or rules change; a plugin built
 * against another version is refused (exit 2), never misread.
 */
#ifndef DETRED_AUDIT_PLUGIN_H
#define DETRED_AUDIT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define DETRED_AUDIT_PLUGIN_ABI_VERSION 1u

#ifdef __cplusplus
extern "C" {
#endif

/* One algorithm. Every sum function receives n values (binary16 and bfloat16 as their raw 16-bit patterns), the
 * configuration index (0 .. config_count - 1; 0 is the default) and `context`; it returns the sum in its
 * accumulation type. A null function means "this type pair is not supported"; at least one must be non-null. The
 * data pointer is host memory and may be null when n == 0. */
typedef struct detred_audit_algorithm {
  /* Stable name, 1 to 64 characters of [A-Za-z0-9_.-], unique within the plugin. */
  const char* name;
  /* What the plugin promises about the bits, in detred's words (include/detred/determinism.hpp):
   *   "not_guaranteed"  nothing (reported, never a failure)
   *   "run_to_run"      same bits over repeated runs of configuration 0
   *   "gpu_to_gpu"      also the same bits over every configuration
   *   "cpu_gpu"         also the same bits as the row named by `twin` (e.g. "cpu/tree")
   *   "exact"           the correctly rounded sum, in every order */
  const char* guarantee;
  /* The a-priori error bound claimed, as the name of the detred method whose bound applies (docs/ACCURACY.md):
   * "sequential", "pairwise", "kahan", "neumaier", "tree", "tree_neumaier"; NULL or "" for none. Reported as
   * detred's own bounds are (the `within bound` column). */
  const char* bound;
  /* For "cpu_gpu": the audit row whose bits this one must give; otherwise NULL. */
  const char* twin;
  /* The number of configurations (launch shapes, thread counts...), 1 to 1024, audited with --configs. */
  unsigned config_count;
  /* Opaque, passed back to each call. */
  void* context;
  float (*sum_f16_f32)(const uint16_t* x, size_t n, unsigned config, void* context);
  double (*sum_f16_f64)(const uint16_t* x, size_t n, unsigned config, void* context);
  float (*sum_bf16_f32)(const uint16_t* x, size_t n, unsigned config, void* context);
  double (*sum_bf16_f64)(const uint16_t* x, size_t n, unsigned config, void* context);
  float (*sum_f32_f32)(const float* x, size_t n, unsigned config, void* context);
  double (*sum_f32_f64)(const float* x, size_t n, unsigned config, void* context);
  double (*sum_f64_f64)(const double* x, size_t n, unsigned config, void* context);
} detred_audit_algorithm;

typedef unsigned (*detred_audit_plugin_abi_version_fn)(void);
typedef const detred_audit_algorithm* (*detred_audit_plugin_algorithms_fn)(size_t* count);

#ifdef __cplusplus
}
#endif

#endif /* DETRED_AUDIT_PLUGIN_H */
