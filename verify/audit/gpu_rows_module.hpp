// The audit's GPU rows live in a module of their own, libdetred-audit-gpu.so, loaded at run time when an audit asks for
// a GPU (--device gpu or all): detred::cuda's sums (gpu_algorithms.hpp) and the GPU baselines
// (gpu_baseline_algorithms.hpp). detred-audit itself links no CUDA code, so the tool a user builds first (the README's
// first command) compiles no kernel, and one audit binary serves machines with and without a GPU.
//
// The module and the tool are built together by the same compiler from the same sources, so they share C++ types;
// gpu_rows_module_version changes with this struct or with algorithm<T>'s layout, and a module of another version is
// refused, never misread.
#pragma once

#include <string>
#include <vector>

#include "algorithms.hpp"
#include "registry.hpp"

namespace detred::audit {

inline constexpr unsigned gpu_rows_module_version = 1;

// The file name of the module, looked for beside the program or library that holds the loader, then in
// ../lib/detred/ from there (the install layout).
inline constexpr const char* gpu_rows_module_file = "libdetred-audit-gpu.so";

template <floating_input T>
using append_rows_fn = void (*)(std::vector<algorithm<T>>& table);

struct gpu_rows_module {
  unsigned version;              // gpu_rows_module_version
  std::size_t algorithm_size;    // sizeof(algorithm<float>) where the module was built
  int (*device_count)();         // usable CUDA devices (0: none, or no driver)
  std::string (*description)();  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"
  // detred's own GPU rows (gpu/tree, gpu/exact, ...), then the GPU baselines (gpu/ladder/..., gpu/atomic_...).
  append_rows_fn<half> detred_rows_f16;
  append_rows_fn<bfloat16> detred_rows_bf16;
  append_rows_fn<float> detred_rows_f32;
  append_rows_fn<double> detred_rows_f64;
  append_rows_fn<half> baseline_rows_f16;
  append_rows_fn<bfloat16> baseline_rows_bf16;
  append_rows_fn<float> baseline_rows_f32;
  append_rows_fn<double> baseline_rows_f64;
};

// The loader's side (gpu_rows_loader.cpp, in the tool): the module, loaded once; nullptr when it is absent or
// unusable, with the reason in *why.
const gpu_rows_module* gpu_rows(std::string* why = nullptr);

// The appenders for one input type.
template <floating_input T>
append_rows_fn<T> detred_rows_of(const gpu_rows_module& m);
template <floating_input T>
append_rows_fn<T> baseline_rows_of(const gpu_rows_module& m);

}  // namespace detred::audit

// The module's one exported symbol.
extern "C" const detred::audit::gpu_rows_module* detred_audit_gpu_rows_module();
