#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include "gpu_rows_module.hpp"

namespace detred::audit {

namespace {

struct loaded_module {
  const gpu_rows_module* module = nullptr;
  std::string why;
};

// The directory of the file (program or shared library) this code was linked into.
std::filesystem::path own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const auto path = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) return path.parent_path();
  }
  std::error_code ec;
  const auto exe = std::filesystem::canonical("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : exe.parent_path();
}

loaded_module load() {
  loaded_module r;
  const std::filesystem::path dir = own_directory();
  std::string tried;
  for (const auto& candidate : {dir / gpu_rows_module_file, dir / ".." / "lib" / "detred" / gpu_rows_module_file}) {
    if (!std::filesystem::exists(candidate)) {
      tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
      continue;
    }
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      r.why = candidate.string() + " does not load: " + dlerror();
      return r;
    }
    using entry_fn = const gpu_rows_module* (*)();
    auto entry = reinterpret_cast<entry_fn>(dlsym(handle, "detred_audit_gpu_rows_module"));
    if (entry == nullptr) {
      r.why = candidate.string() + " has no detred_audit_gpu_rows_module";
      return r;
    }
    const gpu_rows_module* m = entry();
    if (m == nullptr || m->version != gpu_rows_module_version || m->algorithm_size != sizeof(algorithm<float>)) {
      r.why = candidate.string() + " was built for another detred-audit (version mismatch): rebuild it";
      return r;
    }
    r.module = m;  // never unloaded: its rows' functions live as long as the process
    return r;
  }
  r.why = "the GPU rows module " + std::string(gpu_rows_module_file) + " is not built (looked for " + tried +
          "; build the target detred-audit-gpu, which needs the CUDA toolkit)";
  return r;
}

}  // namespace

const gpu_rows_module* gpu_rows(std::string* why) {
  static const loaded_module loaded = load();
  if (loaded.module == nullptr && why != nullptr) *why = loaded.why;
  return loaded.module;
}

template <>
append_rows_fn<half> detred_rows_of<half>(const gpu_rows_module& m) {
  return m.detred_rows_f16;
}
template <>
append_rows_fn<bfloat16> detred_rows_of<bfloat16>(const gpu_rows_module& m) {
  return m.detred_rows_bf16;
}
template <>
append_rows_fn<float> detred_rows_of<float>(const gpu_rows_module& m) {
  return m.detred_rows_f32;
}
template <>
append_rows_fn<double> detred_rows_of<double>(const gpu_rows_module& m) {
  return m.detred_rows_f64;
}
template <>
append_rows_fn<half> baseline_rows_of<half>(const gpu_rows_module& m) {
  return m.baseline_rows_f16;
}
template <>
append_rows_fn<bfloat16> baseline_rows_of<bfloat16>(const gpu_rows_module& m) {
  return m.baseline_rows_bf16;
}
template <>
append_rows_fn<float> baseline_rows_of<float>(const gpu_rows_module& m) {
  return m.baseline_rows_f32;
}
template <>
append_rows_fn<double> baseline_rows_of<double>(const gpu_rows_module& m) {
  return m.baseline_rows_f64;
}

}  // namespace detred::audit
