#include "plugins.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>

#include "detred/audit_plugin.h"
#include "detred/verify/error_bounds.hpp"

namespace detred::audit {

namespace {

struct loaded_algorithm {
  std::string library;
  detred_audit_algorithm entry;
  determinism guarantee;
  std::optional<sum_method> bound;
  std::string twin;
};

std::vector<loaded_algorithm>& loaded() {
  static std::vector<loaded_algorithm> algorithms;
  return algorithms;
}

bool valid_name(const char* name) {
  if (name == nullptr) return false;
  const std::size_t length = std::strlen(name);
  if (length == 0 || length > 64) return false;
  return std::all_of(name, name + length, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

std::optional<determinism> parse_guarantee(const char* text) {
  if (text == nullptr) return std::nullopt;
  for (determinism level : {determinism::not_guaranteed, determinism::run_to_run, determinism::gpu_to_gpu,
                            determinism::cpu_gpu, determinism::exact})
    if (to_string(level) == text) return level;
  return std::nullopt;
}

std::optional<sum_method> parse_method(const char* text) {
  for (sum_method m : all_sum_methods)
    if (to_string(m) == text) return m;
  return std::nullopt;
}

bool has_sum_function(const detred_audit_algorithm& a) {
  return a.sum_f16_f32 || a.sum_f16_f64 || a.sum_bf16_f32 || a.sum_bf16_f64 || a.sum_f32_f32 || a.sum_f32_f64 ||
         a.sum_f64_f64;
}

void load_one(const std::string& path) {
  const std::string where = "--plugin " + path + ": ";
  void* handle = dlopen(path.find('/') == std::string::npos ? ("./" + path).c_str() : path.c_str(), RTLD_NOW);
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string line = why ? why : "cannot load";
    std::replace(line.begin(), line.end(), '\n', ' ');
    throw plugin_error(where + "cannot load the library (" + line + ")");
  }
  auto version = reinterpret_cast<detred_audit_plugin_abi_version_fn>(dlsym(handle, "detred_audit_plugin_abi_version"));
  if (version == nullptr) throw plugin_error(where + "missing symbol detred_audit_plugin_abi_version");
  auto algorithms =
      reinterpret_cast<detred_audit_plugin_algorithms_fn>(dlsym(handle, "detred_audit_plugin_algorithms"));
  if (algorithms == nullptr) throw plugin_error(where + "missing symbol detred_audit_plugin_algorithms");
  const unsigned abi = version();
  if (abi != DETRED_AUDIT_PLUGIN_ABI_VERSION)
    throw plugin_error(where + "ABI version " + std::to_string(abi) + ", this detred-audit reads version " +
                       std::to_string(DETRED_AUDIT_PLUGIN_ABI_VERSION));
  std::size_t count = 0;
  const detred_audit_algorithm* table = algorithms(&count);
  if (table == nullptr || count == 0) throw plugin_error(where + "declares no algorithm");
  for (std::size_t i = 0; i < count; ++i) {
    const detred_audit_algorithm& a = table[i];
    const std::string which = where + "algorithm " + std::to_string(i) + ": ";
    if (!valid_name(a.name)) throw plugin_error(which + "invalid name (1 to 64 characters of [A-Za-z0-9_.-])");
    const std::string name = a.name;
    const auto guarantee = parse_guarantee(a.guarantee);
    if (!guarantee)
      throw plugin_error(which + name + ": invalid guarantee '" + (a.guarantee ? a.guarantee : "(null)") +
                         "' (not_guaranteed, run_to_run, gpu_to_gpu, cpu_gpu, exact)");
    std::optional<sum_method> bound;
    if (a.bound != nullptr && a.bound[0] != '\0') {
      bound = parse_method(a.bound);
      if (!bound) throw plugin_error(which + name + ": invalid bound '" + a.bound + "' (a detred sum method's name)");
    }
    const std::string twin = a.twin ? a.twin : "";
    if (*guarantee == determinism::cpu_gpu && twin.empty())
      throw plugin_error(which + name + ": guarantee cpu_gpu needs a twin (the row whose bits it must give)");
    if (a.config_count < 1 || a.config_count > 1024)
      throw plugin_error(which + name + ": config_count " + std::to_string(a.config_count) + " (1 to 1024)");
    if (!has_sum_function(a)) throw plugin_error(which + name + ": no sum function");
    for (const auto& other : loaded())
      if (other.entry.name == name) throw plugin_error(which + name + ": name already used by " + other.library);
    loaded().push_back({path, a, *guarantee, bound, twin});
  }
}

// Calls one of the plugin's functions, timing it; `raw` is T's storage (16-bit types as their bit patterns).
template <class A, class Raw, floating_input T>
algorithm<T> plugin_row(const loaded_algorithm& p, A (*sum)(const Raw*, std::size_t, unsigned, void*),
                        const std::string& suffix) {
  static_assert(sizeof(Raw) == sizeof(T));
  algorithm<T> row;
  row.name = "plugin/" + std::string(p.entry.name) + suffix;
  row.device = "plugin";
  row.method = p.entry.name;
  row.accumulation = std::is_same_v<A, float> ? element_type::f32 : element_type::f64;
  row.guarantee = p.guarantee;
  row.twin = p.twin;
  for (unsigned c = 0; c < p.entry.config_count; ++c) row.configs.push_back("config=" + std::to_string(c));
  void* context = p.entry.context;
  row.run = [sum, context](std::span<const T> data, std::size_t config) {
    const auto start = std::chrono::steady_clock::now();
    const A value = sum(reinterpret_cast<const Raw*>(data.data()), data.size(), static_cast<unsigned>(config), context);
    const auto stop = std::chrono::steady_clock::now();
    return timed_sum{value, std::chrono::duration<double>(stop - start).count()};
  };
  const std::optional<sum_method> bound = p.bound;
  row.bound = [bound](const verify::exact_sum& s, const verify::exact_sum& magnitudes) {
    return bound ? verify::error_bound<A>(*bound, s, magnitudes) : std::numeric_limits<double>::infinity();
  };
  return row;
}

}  // namespace

void load_plugins(const std::vector<std::string>& paths) {
  for (const auto& path : paths) load_one(path);
}

void check_plugin_twins(const std::vector<std::string>& known) {
  for (const auto& p : loaded())
    if (!p.twin.empty() && std::find(known.begin(), known.end(), p.twin) == known.end())
      throw plugin_error("--plugin " + p.library + ": " + p.entry.name + ": twin '" + p.twin +
                         "' names no algorithm of this detred-audit (--list-algorithms shows them)");
}

template <floating_input T>
void append_plugin_algorithms(std::vector<algorithm<T>>& table) {
  for (const auto& p : loaded()) {
    const detred_audit_algorithm& e = p.entry;
    if constexpr (std::is_same_v<T, half>) {
      if (e.sum_f16_f32) table.push_back(plugin_row<float, std::uint16_t, T>(p, e.sum_f16_f32, ""));
      if (e.sum_f16_f64) table.push_back(plugin_row<double, std::uint16_t, T>(p, e.sum_f16_f64, "@f64"));
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      if (e.sum_bf16_f32) table.push_back(plugin_row<float, std::uint16_t, T>(p, e.sum_bf16_f32, ""));
      if (e.sum_bf16_f64) table.push_back(plugin_row<double, std::uint16_t, T>(p, e.sum_bf16_f64, "@f64"));
    } else if constexpr (std::is_same_v<T, float>) {
      if (e.sum_f32_f32) table.push_back(plugin_row<float, float, T>(p, e.sum_f32_f32, ""));
      if (e.sum_f32_f64) table.push_back(plugin_row<double, float, T>(p, e.sum_f32_f64, "@f64"));
    } else {
      if (e.sum_f64_f64) table.push_back(plugin_row<double, double, T>(p, e.sum_f64_f64, ""));
    }
  }
}

std::vector<std::string> plugin_algorithm_names() {
  std::vector<std::string> names;
  auto add = [&]<floating_input T>() {
    std::vector<algorithm<T>> rows;
    append_plugin_algorithms(rows);
    for (const auto& row : rows)
      if (std::find(names.begin(), names.end(), row.name) == names.end()) names.push_back(row.name);
  };
  add.template operator()<float>();
  add.template operator()<double>();
  add.template operator()<half>();
  add.template operator()<bfloat16>();
  return names;
}

template void append_plugin_algorithms<half>(std::vector<algorithm<half>>&);
template void append_plugin_algorithms<bfloat16>(std::vector<algorithm<bfloat16>>&);
template void append_plugin_algorithms<float>(std::vector<algorithm<float>>&);
template void append_plugin_algorithms<double>(std::vector<algorithm<double>>&);

}  // namespace detred::audit
