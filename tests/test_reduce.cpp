// reduce.hpp: product, min, max, argmin, argmax and the generic (non-commutative) reduce.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "detred/reduce.hpp"
#include "tests/support/reference.hpp"
#include "tests/support/signed_zeros.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;
using test::bits;
using test::make;
constexpr float inf = std::numeric_limits<float>::infinity();
const float nan = std::numeric_limits<float>::quiet_NaN();

// ---- Generic reduce keeps operand order ---------------------------------------------------------------------------

using matrix = std::array<std::int64_t, 4>;  // 2x2, row-major; products wrap modulo 2^64 (still associative)
matrix multiply(const matrix& a, const matrix& b) {
  auto m = [](std::int64_t x, std::int64_t y) { return std::int64_t(std::uint64_t(x) * std::uint64_t(y)); };
  auto p = [](std::int64_t x, std::int64_t y) { return std::int64_t(std::uint64_t(x) + std::uint64_t(y)); };
  return {p(m(a[0], b[0]), m(a[1], b[2])), p(m(a[0], b[1]), m(a[1], b[3])), p(m(a[2], b[0]), m(a[3], b[2])),
          p(m(a[2], b[1]), m(a[3], b[3]))};
}

// Unimodular factors (determinant +-1: shears and a swap) so that the product never collapses to the zero matrix
// modulo 2^64, as random small-integer matrices do after about a hundred factors; then a swapped operand order and a
// skipped chunk both change the result (asserted), so the test can see them.
TEST(GenericReduce, MatrixProductKeepsOperandOrderForEveryThreadCount) {
  const std::size_t chunk = std::size_t{1} << 16;
  const std::size_t n = 8 * chunk + 12345;  // enough chunks for every thread count below to run in parallel
  std::vector<matrix> x(n);
  std::mt19937_64 rng(1);
  for (auto& m : x) {
    const std::int64_t a = std::int64_t(rng() % 7) - 3;
    switch (rng() % 3) {
      case 0:
        m = {1, a, 0, 1};
        break;
      case 1:
        m = {1, 0, a, 1};
        break;
      default:
        m = {0, 1, 1, 0};
    }
  }
  matrix expected = {1, 0, 0, 1}, reversed = {1, 0, 0, 1}, skipped = {1, 0, 0, 1};
  for (std::size_t i = 0; i < n; ++i) {
    expected = multiply(expected, x[i]);  // left to right: exact in modular arithmetic
    reversed = multiply(x[i], reversed);
    if (i / chunk != 3) skipped = multiply(skipped, x[i]);
  }
  const auto det =
      std::uint64_t(expected[0]) * std::uint64_t(expected[3]) - std::uint64_t(expected[1]) * std::uint64_t(expected[2]);
  EXPECT_TRUE(det == 1 || det == ~std::uint64_t{0}) << "the product must stay unimodular";
  EXPECT_NE(expected, reversed);
  EXPECT_NE(expected, skipped);
  for (unsigned threads : {1u, 2u, 3u, 4u, 8u}) {
    EXPECT_EQ(reduce(x, matrix{1, 0, 0, 1}, multiply, {.threads = threads}), expected) << threads;
  }
}

// An operator that throws on a helper thread (not the caller): the reduce must rethrow it, never return a value
// computed without that chunk. Which thread runs which chunk is dynamic, so calls repeat until a helper took part.
TEST(GenericReduce, ExceptionFromAWorkerThreadIsRethrown) {
  const std::size_t n = 8 * (std::size_t{1} << 16);
  const std::vector<double> x(n, 1.0);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> helper_ran{false};
  auto op = [&](double a, double b) {
    if (std::this_thread::get_id() != caller) {
      helper_ran = true;
      throw std::runtime_error("operator failed on a worker");
    }
    return a + b;
  };
  unsigned calls_with_helpers = 0;
  for (int attempt = 0; attempt < 400 && calls_with_helpers < 3; ++attempt) {
    helper_ran = false;
    bool threw = false;
    double value = 0;
    try {
      value = reduce(x, -0.0, op, {.threads = 2});
    } catch (const std::runtime_error&) {
      threw = true;
    }
    if (helper_ran) {
      ++calls_with_helpers;
      EXPECT_TRUE(threw) << "a worker's exception was lost; the reduce returned " << value;
    } else {
      EXPECT_FALSE(threw);
      EXPECT_EQ(value, double(n));
    }
  }
  if (calls_with_helpers == 0) GTEST_SKIP() << "no helper thread took part in 400 calls (a busy machine)";
  // Every thread throwing: the exception still comes out (from whichever chunk is first).
  auto always = [](double, double) -> double { throw std::runtime_error("always"); };
  EXPECT_THROW(reduce(x, -0.0, always, {.threads = 4}), std::runtime_error);
}

TEST(GenericReduce, StringConcatenationIsInOrderAndEmptyGivesIdentity) {
  std::vector<std::string> words;
  std::string expected;
  for (int i = 0; i < 5 * 65536 + 7; ++i) {  // five chunks: two threads run in parallel
    words.push_back(std::to_string(i % 10));
    expected += words.back();
  }
  auto concat = [](const std::string& a, const std::string& b) { return a + b; };
  EXPECT_EQ(reduce(words, std::string(), concat, {.threads = 4}), expected);
  EXPECT_EQ(reduce(std::vector<std::string>{}, std::string("identity"), concat), "identity");
  EXPECT_EQ(reduce(std::vector<std::string>{"only"}, std::string("identity"), concat), "only");
}

TEST(GenericReduce, FloatingOperatorFollowsTheCanonicalTree) {
  // Six chunks and more: every thread count below runs in parallel (two chunks per thread at least).
  std::vector<double> x = test::random_fixed_range<double>(6 * 65536 + 4321, 50, 3, true);
  const std::function<double(double, double)> op = [](double a, double b) { return a * 0.5 + b; };  // non-commutative
  const double expected = test::canonical_reference<double>(x, x.size(), op, 0.0);
  for (unsigned threads : {1u, 2u, 3u}) EXPECT_EQ(bits(reduce(x, 0.0, op, {.threads = threads})), bits(expected));
}

TEST(GenericReduce, RejectsNullData) {
  auto plus = [](int a, int b) { return a + b; };
  EXPECT_THROW(reduce(static_cast<const int*>(nullptr), 2, 0, plus), detred::invalid_argument);
}

// ---- Product ------------------------------------------------------------------------------------------------------

TEST(Product, CanonicalOrderSpecialValuesAndEmpty) {
  std::vector<double> x(8 * 65536 + 77);  // eight chunks: four threads run in parallel
  std::mt19937_64 rng(8);
  for (double& v : x) v = 1.0 + (double(rng() % 2001) - 1000.0) * 1e-6;  // near 1: the product stays finite
  const std::function<double(double, double)> times = [](double a, double b) { return a * b; };
  const double expected = test::canonical_reference<double>(x, x.size(), times, 1.0);
  for (unsigned threads : {1u, 4u}) EXPECT_EQ(bits(product(x, {.threads = threads})), bits(expected));
  EXPECT_EQ(product(std::vector<float>{}), 1.0f);
  EXPECT_EQ(product(std::vector<float>{2, 3, 4}), 24.0f);
  EXPECT_EQ(bits(product(std::vector<float>{inf, 0})), bits(canonical_nan<float>()));
  EXPECT_EQ(bits(product(std::vector<float>{-1, 0})), bits(-0.0f));
  EXPECT_EQ(product(std::vector<float>{1e30f, 1e30f}), inf);
  EXPECT_EQ(product<double>(std::vector<float>{1e30f, 1e30f}), double(1e30f) * double(1e30f));  // no overflow in double
  EXPECT_EQ(product(std::vector<half>{half::from_float(2), half::from_float(0.5f), half::from_float(3)}), 3.0f);
  EXPECT_EQ(bits(product(std::vector<float>{1, nan})), bits(canonical_nan<float>()));
}

TEST(Product, WithinGammaNMinusOneOfTheExactProduct) {
  // Factors 1 + k 2^-12 with |k| < 2^12: 13-bit significands, so the exact product of up to 9 of them is an integer
  // below 2^117 times 2^-108, computed exactly in 128-bit arithmetic.
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = 2 + trial % 8;
    std::vector<float> x(n);
    test::int128 exact = 1;
    for (float& v : x) {
      const int k = int(rng() % 8191) - 4095;
      v = 1.0f + float(k) * 0x1p-12f;
      exact *= (4096 + k);
    }
    const double p = std::ldexp(static_cast<double>(exact), -12 * int(n));  // within 2^-53 relative of the exact p
    const double u = 0x1p-24, gamma = (n - 1) * u / (1 - (n - 1) * u);
    EXPECT_LE(std::fabs(double(product(x)) - p), (gamma + 0x1p-52) * std::fabs(p)) << "n=" << n;
  }
  // A case where the tree's depth (h = 2) would not be enough: relative error 2.66u > gamma_2 (docs/ACCURACY.md).
  const std::vector<float> hard = {1.419934630393982f, 1.4517580270767212f, 1.2114007472991943f, 1.706494688987732f};
  test::int128 significands = 1;  // each factor is in [1, 2): x * 2^23 is its 24-bit integer significand
  for (float v : hard) significands *= static_cast<test::int128>(std::ldexp(v, 23));
  const long double p = std::ldexp(static_cast<long double>(significands), -92);  // 2^-64 relative: ample here
  const long double u = 0x1p-24L, gamma3 = 3 * u / (1 - 3 * u);
  EXPECT_LE(std::fabs(static_cast<long double>(product(hard)) - p), (gamma3 + 0x1p-60L) * p);
  EXPECT_GT(std::fabs(static_cast<long double>(product(hard)) - p), 2.6L * u * p);  // the case is as hard as claimed
}

template <class A, class T>
void expect_product_rules() {
  SCOPED_TRACE(std::string(float_traits<T>::name) + "->" + float_traits<A>::name);
  const double inf = std::numeric_limits<double>::infinity();
  auto p = [](std::initializer_list<double> v) {
    std::vector<T> x;
    for (double d : v) x.push_back(make<T>(d));
    return product<A>(x);
  };
  EXPECT_EQ(bits(p({})), bits(A(1)));
  EXPECT_EQ(p({2, -3, 0.5}), A(-3));
  EXPECT_EQ(bits(p({-2, 0})), bits(-A(0)));
  EXPECT_EQ(p({inf, -2}), -std::numeric_limits<A>::infinity());
  EXPECT_EQ(bits(p({inf, 0})), bits(canonical_nan<A>()));
  EXPECT_EQ(bits(p({1, std::numeric_limits<double>::quiet_NaN()})), bits(canonical_nan<A>()));
}

TEST(Product, RulesForEveryTypePair) {
  test::for_each_type_pair([]<class A, class T>() { expect_product_rules<A, T>(); });
}

template <class T>
void expect_extrema_rules() {
  SCOPED_TRACE(float_traits<T>::name);
  const std::vector<T> x = {make<T>(3), make<T>(-0.0), make<T>(0.0), make<T>(-2), make<T>(-2), make<T>(7)};
  EXPECT_EQ(bits(min(x)), bits(make<T>(-2)));
  EXPECT_EQ(bits(max(x)), bits(make<T>(7)));
  EXPECT_EQ(argmin(x), 3u);
  EXPECT_EQ(argmax(x), 5u);
  const std::vector<T> zeros = {make<T>(0.0), make<T>(-0.0)};
  EXPECT_EQ(bits(min(zeros)), bits(make<T>(-0.0)));
  EXPECT_EQ(bits(max(zeros)), bits(make<T>(0.0)));
  EXPECT_EQ(argmin(zeros), 1u);
  EXPECT_EQ(argmax(zeros), 0u);
  std::vector<T> with_nan = x;
  with_nan[4] = make<T>(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(bits(min(with_nan)), bits(canonical_nan<T>()));
  EXPECT_EQ(bits(max(with_nan)), bits(canonical_nan<T>()));
  EXPECT_EQ(argmin(with_nan), 4u);
  EXPECT_EQ(argmax(with_nan), 4u);
}

TEST(Extrema, RulesForEveryType) {
  expect_extrema_rules<half>();
  expect_extrema_rules<bfloat16>();
  expect_extrema_rules<float>();
  expect_extrema_rules<double>();
}

// ---- min, max, argmin, argmax ------------------------------------------------------------------------------------

TEST(Extrema, IeeeMinimumMaximumWithSignedZerosAndNan) {
  EXPECT_EQ(min(std::vector<float>{3, -2, 5}), -2.0f);
  EXPECT_EQ(max(std::vector<float>{3, -2, 5}), 5.0f);
  EXPECT_EQ(bits(min(std::vector<float>{0.0f, -0.0f, 1.0f})), bits(-0.0f));
  EXPECT_EQ(bits(min(std::vector<float>{-0.0f, 0.0f})), bits(-0.0f));
  EXPECT_EQ(bits(max(std::vector<float>{-0.0f, 0.0f})), bits(0.0f));
  EXPECT_EQ(bits(max(std::vector<float>{0.0f, -0.0f})), bits(0.0f));
  EXPECT_EQ(bits(min(std::vector<float>{1, nan, -5})), bits(canonical_nan<float>()));
  EXPECT_EQ(bits(max(std::vector<double>{1, std::nan(""), -5})), bits(canonical_nan<double>()));
  EXPECT_EQ(min(std::vector<float>{}), inf);
  EXPECT_EQ(max(std::vector<float>{}), -inf);
  EXPECT_EQ(min(std::vector<float>{inf, -inf}), -inf);
  EXPECT_EQ(min(std::vector<double>{0x1p-1074, 0x1p-1073}), 0x1p-1074);  // subnormals compare exactly
  EXPECT_EQ(min(std::vector<half>{half::from_float(2), half::from_float(-3)}).bits, half::from_float(-3).bits);
  EXPECT_EQ(max(std::vector<bfloat16>{bfloat16::from_float(2), bfloat16::from_float(-3)}).bits,
            bfloat16::from_float(2).bits);
  EXPECT_EQ(min(std::vector<half>{}).bits, 0x7c00u);
  EXPECT_EQ(max(std::vector<bfloat16>{}).bits, 0xff80u);
}

TEST(Extrema, ArgminArgmaxLowestIndexAndNanRules) {
  EXPECT_EQ(argmin(std::vector<float>{3, 1, 2, 1}), 1u);
  EXPECT_EQ(argmax(std::vector<float>{3, 1, 3, 1}), 0u);
  EXPECT_EQ(argmin(std::vector<float>{0.0f, -0.0f, -0.0f}), 1u);
  EXPECT_EQ(argmax(std::vector<float>{-0.0f, 0.0f, 0.0f}), 1u);
  EXPECT_EQ(argmin(std::vector<float>{-0.0f, 0.0f}), 0u);
  EXPECT_EQ(argmin(std::vector<float>{1, nan, -5, nan}), 1u);
  EXPECT_EQ(argmax(std::vector<float>{1, 2, nan}), 2u);
  EXPECT_EQ(argmin(std::vector<float>{}), 0u);
  EXPECT_EQ(argmax(std::vector<double>{-std::numeric_limits<double>::infinity()}), 0u);
  EXPECT_EQ(argmin(std::vector<half>{half::from_float(2), half::from_float(-3), half::from_float(-3)}), 1u);
  EXPECT_EQ(argmax(std::vector<bfloat16>{bfloat16::from_float(2), bfloat16::from_float(7)}), 1u);
  // x[argmin(x)] is min(x), bit for bit.
  std::vector<double> x = test::random_fixed_range<double>(10000, 5, 4, true);
  x[777] = x[4242] = -1e300;
  EXPECT_EQ(argmin(x), 777u);
  EXPECT_EQ(bits(x[argmin(x)]), bits(min(x)));
  EXPECT_EQ(bits(x[argmax(x)]), bits(max(x)));
  EXPECT_THROW(argmin(static_cast<const float*>(nullptr), 1), detred::invalid_argument);
  EXPECT_THROW(max(static_cast<const float*>(nullptr), 1), detred::invalid_argument);
}

// Ties of zeros of both signs (reduce.hpp: "-0 is less than +0"; argmin/argmax: the lowest index of the best): every
// extremum against the direct reading of the rule in tests/support/signed_zeros.hpp, for every floating type. A max
// that returns the first zero it meets (-0 of {-1, -0, +0}) fails here.
template <class T>
void expect_zero_ties_resolved() {
  for (const auto& c : test::zero_tie_cases<T>()) {
    const std::size_t lo = test::reference_argmin(c.x), hi = test::reference_argmax(c.x);
    EXPECT_EQ(bits_of(detred::min(c.x.data(), c.x.size())), bits_of(c.x[lo])) << "min " << c.name;
    EXPECT_EQ(bits_of(detred::max(c.x.data(), c.x.size())), bits_of(c.x[hi])) << "max " << c.name;
    EXPECT_EQ(detred::argmin(c.x.data(), c.x.size()), lo) << "argmin " << c.name;
    EXPECT_EQ(detred::argmax(c.x.data(), c.x.size()), hi) << "argmax " << c.name;
  }
}

TEST(Extrema, ZeroTiesOfBothSignsInEveryExtremum) {
  expect_zero_ties_resolved<float>();
  expect_zero_ties_resolved<double>();
  expect_zero_ties_resolved<half>();
  expect_zero_ties_resolved<bfloat16>();
}

TEST(Extrema, Int32AndInt64PlainOrderLowestIndexAndEmpty) {
  const std::vector<std::int32_t> a{5, -7, 3, -7, 9, 9};
  EXPECT_EQ(min(a), -7);
  EXPECT_EQ(max(a), 9);
  EXPECT_EQ(argmin(a), 1u);
  EXPECT_EQ(argmax(a), 4u);
  const std::vector<std::int64_t> b{std::numeric_limits<std::int64_t>::max(), 0,
                                    std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::min()};
  EXPECT_EQ(min(b), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(argmin(b), 2u);
  EXPECT_EQ(argmax(b), 0u);
  EXPECT_EQ(min(std::vector<std::int32_t>{}), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(max(std::vector<std::int64_t>{}), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(argmax(std::vector<std::int32_t>{}), 0u);
}

}  // namespace
