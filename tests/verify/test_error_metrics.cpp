// Error metrics and a-priori bounds of detred::verify on cases computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "detred/order.hpp"
#include "detred/verify/error_bounds.hpp"
#include "detred/verify/error_metrics.hpp"
#include "detred/verify/exact_sum.hpp"

namespace {
using namespace detred;
using namespace detred::verify;

exact_sum sum_of(std::vector<double> v) { return exact_sum_of<double>(v); }

constexpr double inf = std::numeric_limits<double>::infinity();

TEST(ErrorMetrics, HandComputedErrors) {
  const exact_sum one = sum_of({0.5, 0.25, 0.25});
  error_metrics m = measure_error(one, 1 + 0x1p-52);
  EXPECT_EQ(m.absolute, 0x1p-52);
  EXPECT_EQ(m.relative, 0x1p-52);
  EXPECT_EQ(m.ulps, 1.0);
  EXPECT_FALSE(m.exact_match);
  // In float, 1 + 2^-52 is 1 + 2^-52 - 1 = 2^-52 away, i.e. 2^-29 float ulps at 1 (ulp 2^-23).
  m = measure_error(one, 1.0f);
  EXPECT_EQ(m.absolute, 0.0);
  EXPECT_TRUE(m.exact_match);
  // s = 1 + 2^-60 exactly: the correctly rounded double is 1, which is 2^-60 away, 2^-8 ulps, and an exact match.
  m = measure_error(sum_of({1, 0x1p-60}), 1.0);
  EXPECT_TRUE(m.exact_match);
  EXPECT_EQ(m.absolute, 0x1p-60);
  EXPECT_EQ(m.ulps, 0x1p-8);
  // Below 1 the ulp halves: 0.75 computed as 0.75 + 2^-53 is 1 ulp off.
  EXPECT_EQ(measure_error(sum_of({0.75}), 0.75 + 0x1p-53).ulps, 1.0);
  // Subnormal and zero results are measured in units of the smallest subnormal.
  EXPECT_EQ(measure_error(sum_of({0x1p-1074, -0x1p-1074}), 0x1p-1072).ulps, 4.0);
  EXPECT_EQ(measure_error(sum_of({0x1p-149}), 0x1p-148f).ulps, 1.0);
}

TEST(ErrorMetrics, ZeroSumsAndSpecialValues) {
  error_metrics m = measure_error(sum_of({1, -1}), 0.0);
  EXPECT_EQ(m.relative, 0.0);
  EXPECT_TRUE(m.exact_match);
  m = measure_error(sum_of({1, -1}), -0.0);  // the value is right, the sign of zero is not: not a bitwise match
  EXPECT_EQ(m.absolute, 0.0);
  EXPECT_FALSE(m.exact_match);
  m = measure_error(sum_of({1, -1}), 0x1p-60);
  EXPECT_EQ(m.relative, inf);
  EXPECT_EQ(m.absolute, 0x1p-60);
  // Special inputs: a match counts as error 0, anything else as +Inf.
  EXPECT_TRUE(measure_error(sum_of({inf, 1}), inf).exact_match);
  EXPECT_EQ(measure_error(sum_of({inf, 1}), inf).absolute, 0.0);
  EXPECT_EQ(measure_error(sum_of({inf, -inf}), std::numeric_limits<double>::quiet_NaN()).ulps, 0.0);
  EXPECT_EQ(measure_error(sum_of({inf, 1}), 1.0).ulps, inf);
  EXPECT_EQ(measure_error(sum_of({1}), inf).relative, inf);
  // A finite exact sum that overflows the accumulation type: Inf is the correct result.
  EXPECT_TRUE(measure_error(sum_of({1e308, 1e308}), inf).exact_match);
  EXPECT_TRUE(measure_error(sum_of({1e308}), std::numeric_limits<float>::infinity()).exact_match);
}

TEST(ErrorMetrics, ConditionNumber) {
  std::vector<double> x{1e16, 1, -1e16};
  EXPECT_EQ(condition_number(exact_sum_of<double>(x), exact_sum_of_magnitudes<double>(x)), 2e16 + 1);
  x = {1, 2, 3};
  EXPECT_EQ(condition_number(exact_sum_of<double>(x), exact_sum_of_magnitudes<double>(x)), 1.0);
  x = {1, -1};
  EXPECT_EQ(condition_number(exact_sum_of<double>(x), exact_sum_of_magnitudes<double>(x)), inf);
  x = {0.0, -0.0};
  EXPECT_EQ(condition_number(exact_sum_of<double>(x), exact_sum_of_magnitudes<double>(x)), 1.0);
  EXPECT_EQ(condition_number(exact_sum{}, exact_sum{}), 1.0);
}

double gamma(int k, double u) { return k * u / (1 - k * u); }

TEST(ErrorBounds, FormulasOfTheDocs) {
  const double uf = 0x1p-24, ud = 0x1p-53;
  const double S = 10, s = 2;
  // The double evaluation of the formula may round either way; the verify bound is never below the true value, and
  // within a few double ulps of it.
  auto near = [](double bound, double formula) {
    EXPECT_GE(bound, formula * (1 - 1e-15));
    EXPECT_LE(bound, formula * (1 + 1e-15));
  };
  near(error_bound<float>(sum_method::sequential, 1000, S, s), gamma(999, uf) * S);
  near(error_bound<float>(sum_method::pairwise, 1000, S, s), gamma(10, uf) * S);
  near(error_bound<float>(sum_method::pairwise, 1024, S, s), gamma(10, uf) * S);
  near(error_bound<float>(sum_method::pairwise, 1025, S, s), gamma(11, uf) * S);
  near(error_bound<float>(sum_method::tree, 1000, S, s), gamma(canonical_depth(1000), uf) * S);
  EXPECT_EQ(canonical_depth(1000), 9 + 6 - 1);
  near(error_bound<double>(sum_method::kahan, 1000, S, s), (2 * ud + 4 * 1000 * ud * ud) * S);
  near(error_bound<double>(sum_method::neumaier, 1000, S, s), ud * s + gamma(999, ud) * gamma(999, ud) * S);
  near(error_bound<double>(sum_method::tree_neumaier, 1000, S, s), ud * s + gamma(15, ud) * gamma(15, ud) * S);
  // n = 0 and n = 1: no rounding at all for the plain methods.
  EXPECT_EQ(error_bound<float>(sum_method::sequential, 1, S, s), 0.0);
  EXPECT_EQ(error_bound<float>(sum_method::tree, 1, S, s), 0.0);
  EXPECT_EQ(error_bound<float>(sum_method::pairwise, 0, 0, 0), 0.0);
  // k u >= 1: no bound.
  EXPECT_EQ(error_bound<float>(sum_method::sequential, (1u << 24) + 1, S, s), inf);
  EXPECT_LT(error_bound<float>(sum_method::tree, (1u << 24) + 1, S, s), inf);
}

TEST(ErrorBounds, NeverBelowTheFormula) {
  // The result is rounded up: compare with the same formula in long double (64-bit significand) for awkward S.
  for (double S : {0.1, 1.0 / 3, 1e300, 0x1.fffffffffffffp-1}) {
    const long double u = 0x1p-24L;
    const long double g = 999 * u / (1 - 999 * u);
    EXPECT_GE(static_cast<long double>(error_bound<float>(sum_method::sequential, 1000, S, 0)), g * S);
  }
}

TEST(ErrorBounds, ExactOverloadUsesTheExactSums) {
  std::vector<double> x{0x1p40, 1, -0x1p40, 0.5};
  const exact_sum s = exact_sum_of<double>(x);
  const exact_sum S = exact_sum_of_magnitudes<double>(x);
  for (sum_method method : all_sum_methods)
    EXPECT_EQ(error_bound<double>(method, s, S), error_bound<double>(method, 4, 0x1p41 + 1.5, 1.5))
        << to_string(method);
}

}  // namespace
