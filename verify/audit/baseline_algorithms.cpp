#include "baseline_algorithms.hpp"

#include <chrono>
#include <memory>
#include <string>

#include "detred/baselines/cpu.hpp"
#include "detred/verify/error_bounds.hpp"
#include "gpu_rows_module.hpp"

namespace detred::audit {

namespace {

using baseline_detail::accumulation_of;
using baseline_detail::any_order_bound;

template <floating_input T>
algorithm<T> openmp_entry(const std::vector<unsigned>& thread_counts) {
  using A = default_accumulation_t<T>;
  algorithm<T> entry;
  entry.name = "cpu/openmp_reduction";
  entry.device = "cpu";
  entry.method = "openmp_reduction";
  entry.accumulation = accumulation_of<A>();
  entry.guarantee = determinism::not_guaranteed;
  std::vector<unsigned> threads{0};
  entry.configs.push_back("threads=auto");
  std::vector<unsigned> more = thread_counts;
  if (more.empty()) more = {1, 2, 3, 4};
  for (unsigned t : more) {
    entry.configs.push_back("threads=" + std::to_string(t));
    threads.push_back(t);
  }
  entry.run = [threads](std::span<const T> data, std::size_t config) {
    const auto start = std::chrono::steady_clock::now();
    const A value = baselines::openmp_reduction_sum<A, T>(data, threads.at(config));
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    return timed_sum{value, elapsed.count()};
  };
  entry.bound = any_order_bound<A>();
  return entry;
}

}  // namespace

template <floating_input T>
void append_baseline_algorithms(std::vector<algorithm<T>>& table, const registry_options& options) {
  if (options.cpu) table.push_back(openmp_entry<T>(options.thread_counts));
  if (options.gpu)
    if (const gpu_rows_module* m = gpu_rows()) baseline_rows_of<T> (*m)(table);  // the GPU baselines (the module's)
}

template void append_baseline_algorithms<half>(std::vector<algorithm<half>>&, const registry_options&);
template void append_baseline_algorithms<bfloat16>(std::vector<algorithm<bfloat16>>&, const registry_options&);
template void append_baseline_algorithms<float>(std::vector<algorithm<float>>&, const registry_options&);
template void append_baseline_algorithms<double>(std::vector<algorithm<double>>&, const registry_options&);

}  // namespace detred::audit
