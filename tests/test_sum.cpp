// reduce.hpp, sum(): every method on every supported (input, accumulation) pair, special values, reproducibility
// across thread counts, and every documented error bound (docs/ACCURACY.md) against an exact reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <vector>

#include "detred/accumulators/accumulator.hpp"
#include "detred/reduce.hpp"
#include "tests/support/reference.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;
using test::bits;

template <class A>
const std::function<A(A, A)> plus = [](A a, A b) { return a + b; };

// ---- The canonical order, bit for bit, for every thread count ----------------------------------------------------

template <class T>
void expect_tree_is_canonical(std::size_t n, std::uint64_t seed) {
  using A = default_accumulation_t<T>;
  std::vector<double> raw = test::random_fixed_range<double>(n, 30, seed, true);
  std::vector<T> x(n);
  std::vector<A> widened(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] =
        (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) ? test::make<T>(raw[i] * 1e-6) : test::make<T>(raw[i]);
    widened[i] = widen<A>(x[i]);
  }
  const A expected = test::canonical_reference<A>(widened, n, plus<A>, negative_zero<A>());
  for (unsigned threads : {1u, 2u, 3u, 4u, 7u, 16u}) {
    ASSERT_EQ(bits(sum(x, sum_method::tree, {.threads = threads})), bits(expected))
        << "n=" << n << " threads=" << threads;
  }
}

TEST(TreeSum, MatchesTheDefinitionForEveryThreadCount) {
  const std::size_t chunk = std::size_t{1} << 16;
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 1000, 4095, 4096, 4097};
  for (std::size_t n : {chunk - 1, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk, 3 * chunk + 12345, 9 * chunk + 8})
    sizes.push_back(n);
  std::uint64_t seed = 1;
  for (std::size_t n : sizes) {
    expect_tree_is_canonical<float>(n, seed++);
    expect_tree_is_canonical<double>(n, seed++);
  }
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{4097}, 3 * chunk + 77}) {
    expect_tree_is_canonical<half>(n, seed++);
    expect_tree_is_canonical<bfloat16>(n, seed++);
  }
}

TEST(TreeSum, EnvironmentThreadCountChangesNoBit) {
  std::vector<float> x = test::random_fixed_range<float>(5 * (std::size_t{1} << 16) + 3, 20, 42, true);
  const float reference = sum(x, sum_method::tree, {.threads = 1});
  for (const char* threads : {"1", "2", "5", "64"}) {
    ::setenv("DETRED_NUM_THREADS", threads, 1);
    EXPECT_EQ(bits(sum(x)), bits(reference)) << threads;
  }
  ::setenv("DETRED_NUM_THREADS", "zero", 1);
  EXPECT_THROW(sum(x), detred::invalid_argument);
  ::unsetenv("DETRED_NUM_THREADS");
}

TEST(TreeNeumaier, MatchesThePairwiseAccumulatorForEveryThreadCount) {
  for (std::size_t n : {std::size_t{1}, std::size_t{100}, std::size_t{70000}, std::size_t{300001}}) {
    std::vector<double> x = test::random_fixed_range<double>(n, 200, n, true);
    pairwise_accumulator<neumaier_accumulator<double>> reference;
    for (double v : x) reference.add(v);
    for (unsigned threads : {1u, 2u, 5u})
      ASSERT_EQ(bits(sum(x, sum_method::tree_neumaier, {.threads = threads})), bits(reference.result())) << n;
  }
}

// ---- The single-threaded methods compute exactly their documented order ------------------------------------------

double pairwise_reference(const std::vector<double>& x, std::size_t begin, std::size_t n) {
  if (n == 1) return x[begin];
  return pairwise_reference(x, begin, n / 2) + pairwise_reference(x, begin + n / 2, n - n / 2);
}

TEST(SingleThreadedMethods, ComputeTheirDocumentedOrder) {
  for (std::size_t n : {1u, 2u, 3u, 5u, 64u, 1000u, 1023u}) {
    std::vector<double> x = test::random_fixed_range<double>(n, 40, 100 + n, true);
    double seq = -0.0;
    kahan_accumulator<double> kahan;
    neumaier_accumulator<double> neumaier;
    for (double v : x) {
      seq += v;
      kahan.add(v);
      neumaier.add(v);
    }
    EXPECT_EQ(bits(sum(x, sum_method::sequential)), bits(seq));
    EXPECT_EQ(bits(sum(x, sum_method::pairwise)), bits(pairwise_reference(x, 0, n)));
    EXPECT_EQ(bits(sum(x, sum_method::kahan)), bits(kahan.result()));
    EXPECT_EQ(bits(sum(x, sum_method::neumaier)), bits(neumaier.result()));
  }
}

TEST(SingleThreadedMethods, PairwiseEqualsTreeForPowersOfTwo) {
  for (int k = 0; k <= 18; ++k) {
    std::vector<float> x = test::random_fixed_range<float>(std::size_t{1} << k, 20, 500 + k, true);
    EXPECT_EQ(bits(sum(x, sum_method::pairwise)), bits(sum(x, sum_method::tree))) << k;
  }
}

// ---- Special values, for every method and type pair -------------------------------------------------------------

template <class A, class T>
void expect_special_values(sum_method m) {
  SCOPED_TRACE(std::string(to_string(m)) + " " + float_traits<T>::name + "->" + float_traits<A>::name);
  auto make = [](std::initializer_list<double> v) {
    std::vector<T> x;
    for (double d : v) x.push_back(test::make<T>(d));
    return x;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<T> empty;
  EXPECT_EQ(bits(sum<A>(empty, m)), bits(negative_zero<A>()));
  EXPECT_EQ(bits(sum<A>(make({-0.0}), m)), bits(negative_zero<A>()));
  EXPECT_EQ(bits(sum<A>(make({-0.0, -0.0, -0.0}), m)), bits(negative_zero<A>()));
  EXPECT_EQ(bits(sum<A>(make({-0.0, 0.0, -0.0}), m)), bits(A(0)));
  EXPECT_EQ(bits(sum<A>(make({1.0, -1.0}), m)), bits(A(0)));
  EXPECT_EQ(sum<A>(make({1.0, inf, 2.0}), m), std::numeric_limits<A>::infinity());
  EXPECT_EQ(sum<A>(make({-inf, 1.0, -inf}), m), -std::numeric_limits<A>::infinity());
  EXPECT_EQ(bits(sum<A>(make({inf, 1.0, -inf}), m)), bits(canonical_nan<A>()));
  EXPECT_EQ(bits(sum<A>(make({1.0, nan, 2.0, 3.0, 4.0}), m)), bits(canonical_nan<A>()));
  std::vector<T> payload = make({1.0, 2.0});
  if constexpr (std::is_same_v<T, float>) {
    payload[1] = std::bit_cast<float>(0xffc0beefu);  // a negative NaN with a payload
    EXPECT_EQ(bits(sum<A>(payload, m)), bits(canonical_nan<A>()));
  }
  if constexpr (std::is_same_v<T, A>) {
    const A max = std::numeric_limits<A>::max();
    const A tiny = std::numeric_limits<A>::denorm_min();
    EXPECT_EQ(sum<A>(std::vector<T>{max, max}, m), std::numeric_limits<A>::infinity());
    EXPECT_EQ(sum<A>(std::vector<T>{-max, -max}, m), -std::numeric_limits<A>::infinity());
    EXPECT_EQ(sum<A>(std::vector<T>{tiny, tiny, tiny}, m), 3 * tiny);
    EXPECT_EQ(sum<A>(std::vector<T>{tiny, -tiny}, m), A(0));
  }
}

TEST(Sum, SpecialValuesForEveryMethodAndTypePair) {
  for (sum_method m : all_sum_methods) {
    test::for_each_type_pair([m]<class A, class T>() { expect_special_values<A, T>(m); });
  }
}

TEST(Sum, MixedPrecisionWidensEveryInputExactly) {
  std::vector<half> h;
  std::vector<float> f;
  for (int i = 0; i < 70000; ++i) {
    h.push_back(half::from_bits(std::uint16_t((i * 7919) % 0x7c00)));  // finite halves, subnormals included
    f.push_back(h.back().to_float());
  }
  for (sum_method m : all_sum_methods) {
    EXPECT_EQ(bits(sum<float>(h, m)), bits(sum<float>(f, m))) << to_string(m);
    EXPECT_EQ(bits(sum<double>(h, m)), bits(sum<double>(f, m))) << to_string(m);
  }
  // Accumulating in float keeps what binary16 arithmetic would lose.
  std::vector<half> many(4096, half::from_float(1.0f));
  EXPECT_EQ(sum(many), 4096.0f);
}

TEST(Sum, InvalidArgumentsThrow) {
  EXPECT_THROW(sum(static_cast<const float*>(nullptr), 3), detred::invalid_argument);
  EXPECT_EQ(bits(sum(static_cast<const float*>(nullptr), 0)), bits(-0.0f));
  EXPECT_THROW(sum(std::vector<float>{1}, static_cast<sum_method>(99)), detred::invalid_argument);
}

// ---- Error bounds (docs/ACCURACY.md) against the exact fixed-point reference --------------------------------------

template <class A>
double gamma(double k) {
  const double u = std::ldexp(1.0, -std::numeric_limits<A>::digits);
  return k * u / (1 - k * u);
}

template <class A>
void expect_bounds(std::size_t n, int spread, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " " + float_traits<A>::name);
  std::vector<A> x = test::random_fixed_range<A>(n, spread, seed, true);
  const int scale = spread + std::numeric_limits<A>::digits - 1;
  const A exact = test::exact_fixed_point_sum<A>(x, scale);  // the correctly rounded sum
  // The exact sum itself, to within u|exact|: the rounding of `exact` is charged to the bound below.
  const double S = test::abs_sum(x);
  const double u = std::ldexp(1.0, -std::numeric_limits<A>::digits);
  const double s = static_cast<double>(exact);
  const double slack = u * std::fabs(s) * 1.0000001;  // |exact - s| <= u|s|: the reference's own rounding
  auto err = [&](sum_method m) { return std::fabs(static_cast<double>(sum<A>(x, m)) - s); };
  const double h = canonical_depth(n);
  EXPECT_LE(err(sum_method::sequential), gamma<A>(double(n - 1)) * S + slack);
  EXPECT_LE(err(sum_method::pairwise), gamma<A>(std::ceil(std::log2(double(n)))) * S + slack);
  EXPECT_LE(err(sum_method::tree), gamma<A>(h) * S + slack);
  EXPECT_LE(err(sum_method::kahan), (2 * u + 4 * double(n) * u * u) * S + slack);
  EXPECT_LE(err(sum_method::neumaier), u * std::fabs(s) + std::pow(gamma<A>(double(n - 1)), 2) * S + slack);
  EXPECT_LE(err(sum_method::tree_neumaier), u * std::fabs(s) + std::pow(gamma<A>(h + 1), 2) * S + slack);
}

TEST(AccuracyBounds, EveryMethodWithinItsDocumentedBound) {
  std::uint64_t seed = 1000;
  for (std::size_t n : {2u, 3u, 10u, 100u, 1000u, 4097u, 70000u}) {
    expect_bounds<float>(n, 20, seed++);
    expect_bounds<float>(n, 2, seed++);  // narrow range: heavy cancellation, large relative error
  }
  for (std::size_t n : {2u, 3u, 10u, 100u, 1000u}) {
    expect_bounds<double>(n, 30, seed++);
    expect_bounds<double>(n, 1, seed++);
  }
}

}  // namespace

namespace {
// sum<float> of doubles must not compile; sum<double> of floats must.
template <class Acc, class R>
concept summable_as = requires(const R& r) {
  detred::sum<Acc>(r);
};
static_assert(summable_as<double, std::vector<float>>);
static_assert(summable_as<float, std::vector<detred::half>>);
static_assert(!summable_as<float, std::vector<double>>);
}  // namespace
