// CPU dot, nrm2, asum and the generic transform_reduce (blas.hpp): thread-count invariance, agreement with
// high-precision references within the stated bounds, no overflow in nrm2 for large values, the empty and NaN rules.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "detred/blas.hpp"
#include "detred/order.hpp"

namespace {
using namespace detred;

std::vector<float> random_floats(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = d(rng) * scale;
  return x;
}

double gamma(int k, double u) { return k * u / (1 - k * u); }

TEST(Blas, SameBitsForEveryThreadCount) {
  const auto x = random_floats(1'000'003, 1), y = random_floats(1'000'003, 2);
  const float d1 = dot(x.data(), y.data(), x.size(), {.threads = 1});
  const float n1 = nrm2(x.data(), x.size(), {.threads = 1});
  const float a1 = asum(x.data(), x.size(), {.threads = 1});
  for (int t : {2, 3, 8}) {
    EXPECT_EQ(bits_of(dot(x.data(), y.data(), x.size(), {.threads = t})), bits_of(d1));
    EXPECT_EQ(bits_of(nrm2(x.data(), x.size(), {.threads = t})), bits_of(n1));
    EXPECT_EQ(bits_of(asum(x.data(), x.size(), {.threads = t})), bits_of(a1));
  }
}

TEST(Blas, WithinBoundsOfLongDoubleReferences) {
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{70001}}) {
    const auto x = random_floats(n, unsigned(n)), y = random_floats(n, unsigned(n) + 1);
    long double dot_ref = 0, abs_ref = 0, sq = 0;
    for (std::size_t i = 0; i < n; ++i) {
      dot_ref += (long double)x[i] * y[i];
      abs_ref += std::fabs((long double)x[i] * y[i]);
      sq += (long double)x[i] * x[i];
    }
    const double u = 0x1p-24;
    const int h = canonical_depth(n);
    EXPECT_LE(std::fabs((long double)dot(x.data(), y.data(), n) - dot_ref), gamma(h + 1, u) * abs_ref * 1.0000001);
    long double asum_ref = 0;
    for (float v : x) asum_ref += std::fabs(v);
    EXPECT_LE(std::fabs((long double)asum(x.data(), n) - asum_ref), gamma(h, u) * asum_ref * 1.0000001);
    // nrm2: a scaled sum of squares, each merge a few roundings: a loose relative bound, 4 (h + 2) u.
    EXPECT_LE(std::fabs((long double)nrm2(x.data(), n) - std::sqrt(sq)), 4.0 * (h + 2) * u * std::sqrt(sq));
  }
}

TEST(Blas, Nrm2DoesNotOverflowOrUnderflow) {
  const std::vector<float> big(1000, 1e30f), tiny(1000, 1e-30f);
  EXPECT_NEAR(nrm2(big.data(), big.size()) / (1e30 * std::sqrt(1000.0)), 1.0, 1e-5);
  EXPECT_NEAR(nrm2(tiny.data(), tiny.size()) / (1e-30 * std::sqrt(1000.0)), 1.0, 1e-5);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> with_inf{1.0f, -inf, 2.0f}, with_nan{inf, nan, 1.0f};
  EXPECT_EQ(nrm2(with_inf.data(), 3), inf);
  EXPECT_EQ(bits_of(nrm2(with_nan.data(), 3)), bits_of(canonical_nan<float>()));
}

TEST(Blas, EmptyInputs) {
  const float* none = nullptr;
  EXPECT_EQ(bits_of(dot(none, none, 0)), bits_of(-0.0f));
  EXPECT_EQ(bits_of(nrm2(none, 0)), bits_of(0.0f));
  EXPECT_EQ(bits_of(asum(none, 0)), bits_of(0.0f));
  EXPECT_THROW(dot(none, none, 3), invalid_argument);
}

TEST(Blas, TransformReduceIndexedMapIsArgmax) {
  const auto x = random_floats(100'000, 9);
  struct node {
    float v;
    std::uint64_t i;
  };
  const node r = transform_reduce(
      x.data(), x.size(), node{0, 0}, [](node l, node r) { return r.v > l.v ? r : l; },
      [](float v, std::uint64_t i) {
        return node{v, i};
      });
  EXPECT_EQ(r.i, argmax(x));
}

}  // namespace
