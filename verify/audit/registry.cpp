#include "registry.hpp"

#include <algorithm>

#include "baseline_algorithms.hpp"
#include "gpu_rows_module.hpp"
#include "plugins.hpp"

namespace detred::audit {

bool has_gpu_backend(std::string* why) { return gpu_rows(why) != nullptr; }

int gpu_device_count() {
  const gpu_rows_module* m = gpu_rows();
  return m ? m->device_count() : 0;
}

std::string gpu_description() {
  const gpu_rows_module* m = gpu_rows();
  return m ? m->description() : std::string{};
}

// The rows asked for (device and --algorithms), plus the twin of every such row that has one: a cpu_gpu promise is
// checked against its twin's bits, so the twin runs whenever its row does, whatever the selection or --device (the CPU
// rows are built even for --device gpu, as twins only).
template <floating_input T>
std::vector<algorithm<T>> make_registry(const registry_options& options) {
  std::vector<algorithm<T>> table = cpu_algorithms<T>(options.thread_counts);
  if (options.gpu)
    if (const gpu_rows_module* m = gpu_rows()) detred_rows_of<T> (*m)(table);  // gpu/tree, gpu/exact, ...
  registry_options baselines = options;
  baselines.cpu = true;
  append_baseline_algorithms(table, baselines);  // detred::baselines: the rows without detred's promises
  append_plugin_algorithms(table);               // --plugin (plugins.hpp); nothing when none was loaded
  std::vector<bool> keep(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const algorithm<T>& a = table[i];
    keep[i] =
        (options.cpu || a.device != "cpu") &&
        (options.selection.empty() || std::any_of(options.selection.begin(), options.selection.end(),
                                                  [&](const std::string& name) { return selects(name, a.name); }));
  }
  for (std::size_t i = 0; i < table.size(); ++i)
    if (keep[i] && !table[i].twin.empty())
      for (std::size_t j = 0; j < table.size(); ++j) keep[j] = keep[j] || table[j].name == table[i].twin;
  std::vector<algorithm<T>> kept;
  for (std::size_t i = 0; i < table.size(); ++i)
    if (keep[i]) kept.push_back(std::move(table[i]));
  return kept;
}

template std::vector<algorithm<half>> make_registry<half>(const registry_options&);
template std::vector<algorithm<bfloat16>> make_registry<bfloat16>(const registry_options&);
template std::vector<algorithm<float>> make_registry<float>(const registry_options&);
template std::vector<algorithm<double>> make_registry<double>(const registry_options&);

std::vector<std::string> all_algorithm_names() {
  // f32 inputs have every entry: the default accumulation and the @f64 ones.
  std::vector<std::string> names;
  registry_options options;
  options.gpu = has_gpu_backend();
  for (const auto& a : make_registry<float>(options)) names.push_back(a.name);
  for (const auto& name : plugin_algorithm_names())  // plugin rows of other input types (f64 only, 16-bit only)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

}  // namespace detred::audit
