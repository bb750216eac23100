#include "audit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "detred/verify/error_metrics.hpp"
#include "detred/verify/exact_sum.hpp"
#include "permutation.hpp"

namespace detred::audit {

bool any_failure(const std::vector<input_report>& reports) {
  for (const auto& r : reports)
    for (const auto& a : r.results)
      if (!a.failures.empty()) return true;
  return false;
}

namespace {

verify::error_metrics error_of(const verify::exact_sum& exact, const sum_value& value) {
  return std::visit([&](auto v) { return verify::measure_error(exact, v); }, value);
}

// The error of `value` in ulps of the exact sum rounded to its type, signed: positive above the exact sum. (Results
// equal to the exact sum rounded to double count as above: the plot cannot show a smaller difference anyway.)
double signed_ulps(const verify::exact_sum& exact, const sum_value& value, double rounded_f64) {
  const double ulps = error_of(exact, value).ulps;
  const double v = std::visit([](auto x) { return double(x); }, value);
  return v < rounded_f64 ? -ulps : ulps;
}

bool is_finite_value(const sum_value& value) {
  return std::visit([](auto v) { return std::isfinite(v); }, value);
}

double median(std::vector<double> xs) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  const std::size_t m = xs.size() / 2;
  return xs.size() % 2 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}

// Runs `a` once, naming the algorithm and configuration in any error.
template <floating_input T>
timed_sum run_once(const algorithm<T>& a, std::span<const T> data, std::size_t config) {
  try {
    return a.run(data, config);
  } catch (const std::exception& e) {
    throw std::runtime_error(a.name + " (" + a.configs.at(config) + "): " + e.what());
  }
}

}  // namespace

template <floating_input T>
input_report audit_with(const dataset& source, const std::vector<algorithm<T>>& table, const audit_options& options,
                        const progress_callback& progress) {
  const std::span<const T> data(std::get<std::vector<T>>(source.values));
  input_report report;
  report.source = source.source;
  report.dtype = element_type_of<T>();
  report.shape = source.shape;
  report.n = data.size();

  const verify::exact_sum exact = verify::exact_sum_of(data);
  const verify::exact_sum magnitudes = verify::exact_sum_of_magnitudes(data);
  report.sum_of_magnitudes = magnitudes.rounded<double>();
  report.condition_number = verify::condition_number(exact, magnitudes);
  report.exact_decimal = exact.to_decimal(40);
  report.finite = exact.is_finite();
  report.rounded_f64 = exact.rounded<double>();
  if (!report.finite) {
    // What IEEE addition gives for the whole input (NaN, or the infinity present); no condition number.
    report.exact_decimal = std::isnan(report.rounded_f64) ? "nan" : report.rounded_f64 > 0 ? "inf" : "-inf";
    report.condition_number = std::numeric_limits<double>::quiet_NaN();
  }

  for (const auto& a : table)
    if (a.accumulation == element_type::f32) report.rounded_f32 = exact.rounded<float>();

  const unsigned repeat = std::max(1u, options.repeat);
  std::uint64_t total = 0;
  for (const auto& a : table) total += repeat + (options.configs ? a.configs.size() - 1 : 0) + options.permute;
  std::uint64_t done = 0;
  auto step = [&](const std::string& what) {
    ++done;
    if (progress) progress(done, total, what);
  };

  std::vector<std::set<std::uint64_t>> permute_bits(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const algorithm<T>& a = table[i];
    algorithm_report r;
    r.name = a.name;
    r.device = a.device;
    r.method = a.method;
    r.accumulation = a.accumulation;
    r.guarantee = a.guarantee;
    r.twin = a.twin;
    if (a.load) a.load(data, 0);

    std::set<std::uint64_t> repeat_bits;
    std::map<std::uint64_t, sum_value> distinct;  // every distinct result, for the spread plot
    std::vector<double> seconds;
    for (unsigned k = 0; k < repeat; ++k) {
      const timed_sum t = run_once(a, data, 0);
      if (k == 0) r.value = t.value;
      repeat_bits.insert(bits_of(t.value));
      distinct.emplace(bits_of(t.value), t.value);
      seconds.push_back(t.seconds);
      step(a.name + " run " + std::to_string(k + 1));
    }
    r.repeat = {repeat, repeat_bits.size()};
    r.median_seconds = median(seconds);
    const double bytes = double(data.size()) * sizeof(T);
    r.throughput_gbs = r.median_seconds > 0 ? bytes / r.median_seconds / 1e9 : 0;

    r.error = error_of(exact, r.value);
    r.bound = a.bound(exact, magnitudes);
    r.relative_bound = r.bound / std::fabs(report.rounded_f64);
    if (report.finite && is_finite_value(r.value) && std::isfinite(r.bound))
      r.within_bound = r.error.absolute <= r.bound;

    if (options.configs) {
      std::set<std::uint64_t> config_bits{bits_of(r.value)};
      for (std::size_t c = 1; c < a.configs.size(); ++c) {
        const sum_value v = run_once(a, data, c).value;
        config_bits.insert(bits_of(v));
        distinct.emplace(bits_of(v), v);
        step(a.name + " " + a.configs[c]);
      }
      r.configs = {a.configs.size(), config_bits.size()};
      r.config_labels = a.configs;
    }
    for (const auto& [bits, v] : distinct) r.distinct_ulps.push_back(signed_ulps(exact, v, report.rounded_f64));
    permute_bits[i].insert(bits_of(r.value));
    r.permute_max_abs_error = r.error.absolute;
    report.results.push_back(std::move(r));
  }

  // Random orders: each permutation is made once and given to every algorithm.
  std::mt19937_64 engine(options.permute_seed);
  for (unsigned p = 1; p <= options.permute; ++p) {
    const std::vector<T> order = permuted(data, engine);
    for (std::size_t i = 0; i < table.size(); ++i) {
      const algorithm<T>& a = table[i];
      if (a.load) a.load(order, p);
      const timed_sum t = run_once(a, std::span<const T>(order), 0);
      permute_bits[i].insert(bits_of(t.value));
      auto& r = report.results[i];
      r.permute_max_abs_error = std::max(r.permute_max_abs_error, error_of(exact, t.value).absolute);
      step(a.name + " order " + std::to_string(p));
    }
  }
  for (std::size_t i = 0; i < table.size(); ++i)
    report.results[i].permute = {options.permute + 1ull, permute_bits[i].size()};

  // The promises.
  for (auto& r : report.results) {
    if (r.guarantee >= determinism::run_to_run && r.repeat.distinct > 1)
      r.failures.push_back(std::to_string(r.repeat.distinct) + " distinct results over " +
                           std::to_string(r.repeat.runs) + " runs (promised: " + std::string(to_string(r.guarantee)) +
                           ")");
    if (r.guarantee >= determinism::gpu_to_gpu && r.configs.distinct > 1)
      r.failures.push_back(std::to_string(r.configs.distinct) + " distinct results over " +
                           std::to_string(r.configs.runs) +
                           " configurations (promised: " + std::string(to_string(r.guarantee)) + ")");
    if (!r.twin.empty()) {
      for (const auto& other : report.results)
        if (other.name == r.twin) r.matches_twin = bits_of(other.value) == bits_of(r.value);
      if (r.guarantee >= determinism::cpu_gpu && r.matches_twin == false)
        r.failures.push_back("differs from " + r.twin + " (promised: cpu_gpu)");
      if (r.guarantee >= determinism::cpu_gpu && !r.matches_twin)
        r.not_checked.push_back("the bits of " + r.twin + " (promised: cpu_gpu): " + r.twin +
                                " did not run on this input");
    }
    if (r.guarantee == determinism::exact) {
      if (!r.error.exact_match) r.failures.push_back("differs from the correctly rounded reference (promised: exact)");
      if (r.permute.distinct > 1)
        r.failures.push_back(std::to_string(r.permute.distinct) + " distinct results over " +
                             std::to_string(r.permute.runs) + " orders (promised: exact)");
    }
  }
  return report;
}

template input_report audit_with<half>(const dataset&, const std::vector<algorithm<half>>&, const audit_options&,
                                       const progress_callback&);
template input_report audit_with<bfloat16>(const dataset&, const std::vector<algorithm<bfloat16>>&,
                                           const audit_options&, const progress_callback&);
template input_report audit_with<float>(const dataset&, const std::vector<algorithm<float>>&, const audit_options&,
                                        const progress_callback&);
template input_report audit_with<double>(const dataset&, const std::vector<algorithm<double>>&, const audit_options&,
                                         const progress_callback&);

input_report audit_dataset(const dataset& data, const registry_options& registry, const audit_options& options,
                           const progress_callback& progress) {
  return std::visit(
      [&](const auto& values) {
        using T = typename std::decay_t<decltype(values)>::value_type;
        return audit_with<T>(data, make_registry<T>(registry), options, progress);
      },
      data.values);
}

}  // namespace detred::audit
