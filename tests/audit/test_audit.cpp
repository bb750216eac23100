// The audit runner's promise checks (verify/audit/audit.hpp): each broken promise is reported, and only broken
// promises are: planted faulty algorithms (an unstable "run_to_run" one, a configuration-dependent "gpu_to_gpu" one,
// a "cpu_gpu" one that differs from its twin, an "exact" one that is not) must each give a failure, which is what
// makes detred-audit exit with status 1; the real CPU algorithms must give none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "audit.hpp"
#include "detred/reduce.hpp"
#include "detred/verify/exact_sum.hpp"
#include "detred/verify/generators.hpp"
#include "permutation.hpp"
#include "registry.hpp"
#include "spread_plot.hpp"
#include "svg_plot.hpp"

namespace detred::audit {
namespace {

dataset ill_conditioned(std::uint64_t n = 2000, double condition = 1e12) {
  dataset data;
  data.source = "test";
  data.shape = {n};
  data.values =
      verify::generate<double>({.kind = verify::distribution::ill, .n = n, .seed = 7, .condition = condition});
  return data;
}

// An algorithm entry whose result is whatever `result` returns for (data, config, call number).
algorithm<double> planted(std::string name, determinism level,
                          std::function<double(std::span<const double>, std::size_t, int)> result,
                          std::size_t configs = 1) {
  algorithm<double> a;
  a.name = std::move(name);
  a.device = "cpu";
  a.method = "planted";
  a.accumulation = element_type::f64;
  a.guarantee = level;
  for (std::size_t c = 0; c < configs; ++c) a.configs.push_back("config " + std::to_string(c));
  auto calls = std::make_shared<int>(0);
  a.run = [result, calls](std::span<const double> x, std::size_t config) {
    return timed_sum{result(x, config, (*calls)++), 0.0};
  };
  a.bound = [](const verify::exact_sum&, const verify::exact_sum&) { return 1e300; };
  return a;
}

double sequential(std::span<const double> x) { return detred::sum(x.data(), x.size(), sum_method::sequential); }

// x moved `steps` doubles up: a different bit pattern for every step.
double next_up(double x, std::size_t steps) {
  for (std::size_t i = 0; i < steps; ++i) x = std::nextafter(x, std::numeric_limits<double>::infinity());
  return x;
}

const algorithm_report& result(const input_report& r, const std::string& name) {
  const auto it = std::find_if(r.results.begin(), r.results.end(), [&](const auto& a) { return a.name == name; });
  EXPECT_NE(it, r.results.end()) << name;
  return *it;
}

TEST(AlgorithmRegistry, HasEveryMethodAndTheWideAccumulations) {
  // detred's methods in their order, then the baseline without a promise (OpenMP's reduction clause).
  const auto f64 = make_registry<double>({});
  ASSERT_EQ(f64.size(), std::size(all_sum_methods) + 1);
  for (std::size_t i = 0; i < std::size(all_sum_methods); ++i) {
    EXPECT_EQ(f64[i].name, "cpu/" + std::string(to_string(all_sum_methods[i])));
    EXPECT_EQ(f64[i].guarantee, guarantee(all_sum_methods[i]));
  }
  EXPECT_EQ(f64.back().name, "cpu/openmp_reduction");
  EXPECT_EQ(f64.back().guarantee, determinism::not_guaranteed);
  const auto f16 = make_registry<half>({});
  EXPECT_EQ(f16[f16.size() - 2].name, "cpu/tree_neumaier@f64");
  EXPECT_EQ(f16[f16.size() - 2].accumulation, element_type::f64);
  EXPECT_EQ(f16.front().accumulation, element_type::f32);
  registry_options only;
  only.selection = {"tree", "cpu/kahan"};
  const auto some = make_registry<float>(only);
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0].name, "cpu/kahan");
  EXPECT_EQ(some[1].name, "cpu/tree");
}

// --permute's orders are permutations, the same for the same seed (on every platform: std::mt19937_64 is specified
// exactly and the shuffle is detred's own), and different for different seeds.
TEST(Permutation, IsASeededPermutation) {
  std::vector<int> x(1000);
  for (int i = 0; i < 1000; ++i) x[i] = i;
  std::mt19937_64 a(5), b(5), c(6);
  const auto pa = permuted(std::span<const int>(x), a);
  EXPECT_EQ(pa, permuted(std::span<const int>(x), b));
  EXPECT_NE(pa, permuted(std::span<const int>(x), c));
  EXPECT_NE(pa, x);
  auto sorted = pa;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, x);
  std::mt19937_64 d(1);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(uniform_below(d, 3), 3u);
}

TEST(AuditRunner, RealCpuAlgorithmsKeepEveryPromiseAndTheirBounds) {
  registry_options registry;
  registry.thread_counts = {1, 2, 3, 5};
  const auto report = audit_dataset(ill_conditioned(), registry, {.repeat = 3, .permute = 3, .configs = true});
  ASSERT_EQ(report.results.size(), std::size(all_sum_methods) + 1);  // and cpu/openmp_reduction
  for (const auto& a : report.results) {
    EXPECT_TRUE(a.failures.empty()) << a.name;
    if (a.name == "cpu/openmp_reduction") continue;  // a baseline: no promise of bits or of a bound
    EXPECT_EQ(a.repeat.distinct, 1u) << a.name;
    EXPECT_EQ(a.configs.distinct, 1u) << a.name;
    EXPECT_EQ(a.within_bound, true) << a.name;
  }
  EXPECT_EQ(result(report, "cpu/tree").configs.runs, 5u);  // the default and four thread counts
  EXPECT_EQ(result(report, "cpu/tree_neumaier").error.exact_match, true);
  EXPECT_GT(result(report, "cpu/sequential").permute.distinct, 1u);  // order matters; not a failure
  EXPECT_GT(report.condition_number, 1e11);
}

TEST(AuditRunner, FailsARunToRunAlgorithmWithTwoResults) {
  const dataset data = ill_conditioned();
  auto flaky = [](std::span<const double> x, std::size_t, int call) { return next_up(sequential(x), call % 2); };
  const std::vector<algorithm<double>> table = {planted("cpu/flaky", determinism::run_to_run, flaky),
                                                planted("cpu/atomic", determinism::not_guaranteed, flaky)};
  const auto report = audit_with<double>(data, table, {.repeat = 4});
  ASSERT_EQ(report.results[0].failures.size(), 1u);
  EXPECT_NE(report.results[0].failures[0].find("2 distinct results over 4 runs"), std::string::npos);
  EXPECT_TRUE(report.results[1].failures.empty());  // promises nothing, so breaks nothing
  EXPECT_TRUE(any_failure({report}));
}

TEST(AuditRunner, FailsAGpuToGpuAlgorithmThatDependsOnItsConfiguration) {
  const dataset data = ill_conditioned();
  auto by_config = [](std::span<const double> x, std::size_t config, int) { return next_up(sequential(x), config); };
  const std::vector<algorithm<double>> table = {planted("gpu/shaped", determinism::gpu_to_gpu, by_config, 3),
                                                planted("gpu/tuned", determinism::run_to_run, by_config, 3)};
  const auto report = audit_with<double>(data, table, {.repeat = 2, .configs = true});
  ASSERT_EQ(report.results[0].failures.size(), 1u);
  EXPECT_NE(report.results[0].failures[0].find("3 distinct results over 3 configurations"), std::string::npos);
  EXPECT_TRUE(report.results[1].failures.empty());  // run_to_run allows a configuration to change bits
  // Without --configs nothing is measured, so nothing fails.
  EXPECT_FALSE(any_failure({audit_with<double>(data, table, {.repeat = 2, .configs = false})}));
}

TEST(AuditRunner, FailsACpuGpuAlgorithmThatDiffersFromItsTwin) {
  const dataset data = ill_conditioned();
  auto tree = [](std::span<const double> x, std::size_t, int) { return detred::sum(x); };
  auto off = [](std::span<const double> x, std::size_t, int) { return std::nextafter(detred::sum(x), 0.0); };
  auto twin_of = [](algorithm<double> a) {
    a.twin = "cpu/tree";
    return a;
  };
  const auto good = audit_with<double>(
      data, {planted("cpu/tree", determinism::cpu_gpu, tree), twin_of(planted("gpu/tree", determinism::cpu_gpu, tree))},
      {.repeat = 1});
  EXPECT_EQ(good.results[1].matches_twin, true);
  EXPECT_FALSE(any_failure({good}));
  const auto bad = audit_with<double>(
      data, {planted("cpu/tree", determinism::cpu_gpu, tree), twin_of(planted("gpu/tree", determinism::cpu_gpu, off))},
      {.repeat = 1});
  EXPECT_EQ(bad.results[1].matches_twin, false);
  ASSERT_EQ(bad.results[1].failures.size(), 1u);
  EXPECT_NE(bad.results[1].failures[0].find("differs from cpu/tree"), std::string::npos);
}

TEST(AuditRunner, FailsAnExactAlgorithmThatIsNotCorrectlyRounded) {
  const dataset data = ill_conditioned();
  auto exact = [](std::span<const double> x, std::size_t, int) { return verify::exact_sum_of(x).rounded<double>(); };
  auto naive = [](std::span<const double> x, std::size_t, int) { return sequential(x); };
  const auto report = audit_with<double>(
      data, {planted("cpu/exact", determinism::exact, exact), planted("cpu/not_exact", determinism::exact, naive)},
      {.repeat = 1, .permute = 3});
  EXPECT_TRUE(report.results[0].failures.empty());
  EXPECT_EQ(report.results[0].permute.distinct, 1u);
  ASSERT_GE(report.results[1].failures.size(), 1u);
  EXPECT_NE(report.results[1].failures[0].find("correctly rounded"), std::string::npos);
}

}  // namespace
}  // namespace detred::audit

namespace {
// The plots' canvas fits its text (docs/AUDIT.md): with a row name of 90 characters and a long source name, the
// left margin holds every row label (at 7 px a character, anchored at its right end) and the width holds the title
// (9 px a character from the left margin); the legend of the sweep plot fits on the right.
double attribute(const std::string& svg, const std::string& pattern) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex(pattern))) << pattern;
  return m.empty() ? 0 : std::stod(m[1].str());
}

TEST(AuditPlots, CanvasFitsLongRowNamesAndTitles) {
  using namespace detred::audit;
  input_report r;
  r.source = std::string(120, 's');
  r.n = 4;
  r.condition_number = 10;
  algorithm_report a;
  a.name = "plugin/" + std::string(90, 'x');
  a.guarantee = detred::determinism::exact;
  a.distinct_ulps = {0};
  a.error.relative = 1e-10;
  r.results.push_back(a);
  std::ostringstream spread;
  write_spread_plot(spread, {r});
  const std::string label = a.name + " (exact)";
  const double label_end = attribute(spread.str(), "<text x=\"([0-9.]+)\"[^>]*text-anchor=\"end\">plugin/");
  EXPECT_GE(label_end - 7.0 * double(label.size()), 0.0) << "the row label is cut on the left";
  const double width = attribute(spread.str(), "<svg[^>]* width=\"([0-9.]+)\"");
  const double title_x = attribute(spread.str(), "<text x=\"([0-9.]+)\" y=\"22\"");
  EXPECT_GE(
      width,
      title_x +
          9.0 * double(("Every distinct result over runs and configurations (f64, n = 4, " + r.source + ")").size()))
      << "the title is cut on the right";
  std::ostringstream sweep;
  write_svg_plot(sweep, {r});
  const double sweep_width = attribute(sweep.str(), "<svg[^>]* width=\"([0-9.]+)\"");
  const double legend_x = attribute(sweep.str(), "<text x=\"([0-9.]+)\"[^>]*>plugin/");
  EXPECT_GE(sweep_width, legend_x + 7.0 * double(a.name.size())) << "the legend is cut on the right";
}
}  // namespace
