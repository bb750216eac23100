#include "algorithms.hpp"

#include <bit>
#include <chrono>
#include <limits>

#include "detred/reduce.hpp"
#include "detred/verify/error_bounds.hpp"

namespace detred::audit {

std::uint64_t bits_of(const sum_value& value) {
  return std::visit(
      [](auto v) -> std::uint64_t {
        if constexpr (std::is_same_v<decltype(v), float>)
          return std::bit_cast<std::uint32_t>(v);
        else
          return std::bit_cast<std::uint64_t>(v);
      },
      value);
}

namespace {

// The canonical-order methods are the multi-threaded ones: their thread count is a configuration.
bool is_multithreaded(sum_method method) {
  return method == sum_method::tree || method == sum_method::tree_neumaier || method == sum_method::exact;
}

template <class A>
constexpr element_type accumulation_type() {
  return std::is_same_v<A, float> ? element_type::f32 : element_type::f64;
}

// The CPU entry for `method` accumulated in A; `suffix` is "" for the input's default accumulation, else "@f64".
template <class A, floating_input T>
algorithm<T> cpu_entry(sum_method method, const std::string& suffix, const std::vector<unsigned>& thread_counts) {
  algorithm<T> entry;
  entry.name = "cpu/" + std::string(to_string(method)) + suffix;
  entry.device = "cpu";
  entry.method = std::string(to_string(method));
  entry.accumulation = accumulation_type<A>();
  entry.guarantee = guarantee(method);
  std::vector<unsigned> threads{0};
  if (is_multithreaded(method)) {
    entry.configs.push_back("threads=auto");
    for (unsigned t : thread_counts) {
      entry.configs.push_back("threads=" + std::to_string(t));
      threads.push_back(t);
    }
  } else {
    entry.configs.push_back("one thread");
  }
  entry.run = [method, threads](std::span<const T> data, std::size_t config) {
    const cpu_options options{.threads = threads.at(config)};
    const auto start = std::chrono::steady_clock::now();
    const A value = detred::sum<A>(data.data(), data.size(), method, options);
    const auto stop = std::chrono::steady_clock::now();
    return timed_sum{value, std::chrono::duration<double>(stop - start).count()};
  };
  entry.bound = [method](const verify::exact_sum& s, const verify::exact_sum& magnitudes) {
    return verify::error_bound<A>(method, s, magnitudes);
  };
  return entry;
}

}  // namespace

template <floating_input T>
std::vector<algorithm<T>> cpu_algorithms(const std::vector<unsigned>& thread_counts) {
  using default_acc = default_accumulation_t<T>;
  std::vector<algorithm<T>> table;
  for (sum_method method : all_sum_methods) table.push_back(cpu_entry<default_acc, T>(method, "", thread_counts));
  if constexpr (!std::is_same_v<default_acc, double>) {
    for (sum_method method : {sum_method::tree, sum_method::tree_neumaier})
      table.push_back(cpu_entry<double, T>(method, "@f64", thread_counts));
  }
  return table;
}

template std::vector<algorithm<half>> cpu_algorithms<half>(const std::vector<unsigned>&);
template std::vector<algorithm<bfloat16>> cpu_algorithms<bfloat16>(const std::vector<unsigned>&);
template std::vector<algorithm<float>> cpu_algorithms<float>(const std::vector<unsigned>&);
template std::vector<algorithm<double>> cpu_algorithms<double>(const std::vector<unsigned>&);

namespace {
// Shell-style match of the whole text: '*' any run of characters (also none), '?' one character.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}
}  // namespace

bool selects(std::string_view name, std::string_view algorithm_name) {
  if (glob_match(name, algorithm_name)) return true;
  const std::size_t slash = algorithm_name.find('/');
  return slash != std::string_view::npos && glob_match(name, algorithm_name.substr(slash + 1));
}

}  // namespace detred::audit
