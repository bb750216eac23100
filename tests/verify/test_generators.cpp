// The input generators: deterministic for a seed, the distributions they promise, the condition numbers `ill` is
// asked for, and the special values `specials` must contain.
#include "detred/verify/generators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "detred/verify/error_metrics.hpp"
#include "detred/verify/exact_sum.hpp"

namespace {
using namespace detred;
using namespace detred::verify;

constexpr distribution all_distributions[] = {distribution::uniform,   distribution::normal, distribution::lognormal,
                                              distribution::same_sign, distribution::cancel, distribution::ill,
                                              distribution::specials};

template <class T>
std::vector<std::uint64_t> bit_patterns(const std::vector<T>& x) {
  std::vector<std::uint64_t> b;
  for (const T& v : x) b.push_back(static_cast<std::uint64_t>(bits_of(v)));
  return b;
}

// FNV-1a over the bit patterns: pins the generators' output, so that a change of any bit on any platform is seen.
template <class T>
std::uint64_t fingerprint(const std::vector<T>& x) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint64_t b : bit_patterns(x)) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

template <class T>
double as_double(T x) {
  if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>)
    return x.to_float();
  else
    return x;
}

template <class T>
double condition(const std::vector<T>& x) {
  return condition_number(exact_sum_of<T>(x), exact_sum_of_magnitudes<T>(x));
}

TEST(Generators, NamesRoundTrip) {
  for (distribution d : all_distributions) EXPECT_EQ(parse_distribution(to_string(d)), d);
  EXPECT_FALSE(parse_distribution("gaussian").has_value());
}

template <class T>
void check_deterministic() {
  for (distribution d : all_distributions) {
    const generator_options options{d, 1000, 12345, 1e20};
    const std::vector<T> a = generate<T>(options);
    ASSERT_EQ(a.size(), 1000u) << to_string(d);
    EXPECT_EQ(bit_patterns(a), bit_patterns(generate<T>(options))) << to_string(d);
    generator_options other = options;
    other.seed = 12346;
    EXPECT_NE(bit_patterns(a), bit_patterns(generate<T>(other))) << to_string(d);
    for (std::uint64_t n : {0, 1, 2, 3, 7}) EXPECT_EQ(generate<T>({d, n, 1, 1e10}).size(), n) << to_string(d);
  }
}

TEST(Generators, SameSeedSameBitsForEveryTypeAndDistribution) {
  check_deterministic<half>();
  check_deterministic<bfloat16>();
  check_deterministic<float>();
  check_deterministic<double>();
}

// The bits of a few generated arrays, recorded on x86-64 with GCC 12 (2026-11-22). The generators use only IEEE basic
// operations, frexp, ldexp and sqrt, so every IEEE 754 machine must reproduce them; a deliberate change of a
// generator updates these numbers (and changes every audit and benchmark input: say so in the commit).
TEST(Generators, OutputIsPinned) {
  EXPECT_EQ(fingerprint(generate<double>({distribution::normal, 4096, 1})), 0x5df433daf7357c46ull);
  EXPECT_EQ(fingerprint(generate<double>({distribution::lognormal, 4096, 2})), 0x370efa81c928c3d3ull);
  EXPECT_EQ(fingerprint(generate<float>({distribution::ill, 4096, 3, 1e20})), 0x40fe6a73e1542321ull);
  EXPECT_EQ(fingerprint(generate<half>({distribution::specials, 4096, 4})), 0x99179179e605453dull);
}

TEST(Generators, DistributionsHaveTheirShape) {
  const auto u = generate<double>({distribution::uniform, 100000, 5});
  EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](double v) { return v >= -1 && v < 1; }));
  const auto same = generate<double>({distribution::same_sign, 100000, 5});
  EXPECT_TRUE(std::all_of(same.begin(), same.end(), [](double v) { return v >= 0 && v < 1; }));
  EXPECT_EQ(condition(same), 1.0);
  // Normal: sample mean and variance (n = 10^5: standard errors 0.003 and 0.0045).
  const auto z = generate<double>({distribution::normal, 100000, 6});
  double mean = 0, square = 0;
  for (double v : z) mean += v;
  mean /= z.size();
  for (double v : z) square += (v - mean) * (v - mean);
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(square / z.size(), 1.0, 0.03);
  // Lognormal: magnitudes across many decades, both signs, all finite.
  const auto l = generate<double>({distribution::lognormal, 100000, 7});
  double lo = INFINITY, hi = 0;
  for (double v : l) {
    ASSERT_TRUE(std::isfinite(v));
    lo = std::min(lo, std::fabs(v));
    hi = std::max(hi, std::fabs(v));
  }
  EXPECT_GT(hi / lo, 1e300);
  EXPECT_TRUE(std::any_of(l.begin(), l.end(), [](double v) { return v < 0; }));
  const auto lh = generate<half>({distribution::lognormal, 100000, 7});
  EXPECT_TRUE(std::all_of(lh.begin(), lh.end(), [](half v) { return std::isfinite(v.to_float()); }));
  // Cancellation: the sum is much smaller than the sum of magnitudes.
  EXPECT_GT(condition(generate<double>({distribution::cancel, 100000, 8})), 1e5);
  EXPECT_GT(condition(generate<float>({distribution::cancel, 100000, 8})), 100.0);
}

template <class T>
void check_condition(std::uint64_t n, double requested) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto x = generate<T>({distribution::ill, n, seed, requested});
    const double achieved = condition(x);
    EXPECT_GT(achieved, requested / 2) << float_traits<T>::name << " n=" << n << " seed=" << seed;
    EXPECT_LT(achieved, requested * 2) << float_traits<T>::name << " n=" << n << " seed=" << seed;
    // No overflow in a plain left-to-right sum in the input's own accumulation type.
    double running = 0;
    for (const T& v : x) running += as_double(v);
    EXPECT_TRUE(std::isfinite(running));
  }
}

TEST(Generators, IllConditionedSumsHaveTheRequestedConditionNumber) {
  for (double requested : {10.0, 1e3, 1e8, 1e16, 1e24, 1e30}) {
    for (std::uint64_t n : {16, 1000, 100000}) {
      check_condition<double>(n, requested);
      check_condition<float>(n, requested);
      check_condition<bfloat16>(n, requested);
    }
  }
  // binary16's narrow range limits the condition number to about 2^38 n.
  for (double requested : {10.0, 1e3, 1e6}) check_condition<half>(1000, requested);
}

template <class T>
void check_specials() {
  const auto x = generate<T>({distribution::specials, 2000, 9});
  auto any = [&](auto predicate) {
    return std::any_of(x.begin(), x.end(), [&](T v) { return predicate(as_double(v)); });
  };
  EXPECT_TRUE(any([](double v) { return std::isnan(v); })) << float_traits<T>::name;
  EXPECT_TRUE(any([](double v) { return v == INFINITY; })) << float_traits<T>::name;
  EXPECT_TRUE(any([](double v) { return v == -INFINITY; })) << float_traits<T>::name;
  EXPECT_TRUE(any([](double v) { return v == 0 && !std::signbit(v); })) << float_traits<T>::name;
  EXPECT_TRUE(any([](double v) { return v == 0 && std::signbit(v); })) << float_traits<T>::name;
  const double min_normal = std::same_as<T, half> ? 0x1p-14 : (std::same_as<T, double> ? 0x1p-1022 : 0x1p-126);
  EXPECT_TRUE(any([&](double v) { return v != 0 && std::fabs(v) < min_normal; }))
      << float_traits<T>::name;  // subnormal
  EXPECT_TRUE(any([](double v) { return std::isfinite(v) && std::fabs(v) > 1e4; })) << float_traits<T>::name;  // +-MAX
  EXPECT_TRUE(any([](double v) { return std::isfinite(v) && std::fabs(v) < 1 && std::fabs(v) > 1e-3; }))
      << float_traits<T>::name;
}

TEST(Generators, SpecialsContainEveryKindOfSpecialValue) {
  check_specials<half>();
  check_specials<bfloat16>();
  check_specials<float>();
  check_specials<double>();
}

}  // namespace
