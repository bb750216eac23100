// accumulators/*.hpp: TwoSum exactness, each accumulator's IEEE behaviour, and the pairwise accumulator as the
// streaming form of the canonical order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "detred/accumulators/accumulator.hpp"
#include "tests/support/reference.hpp"

namespace {
using namespace detred;
constexpr double inf = std::numeric_limits<double>::infinity();

template <class Acc>
double run(std::initializer_list<double> xs) {
  Acc acc;
  for (double x : xs) acc.add(x);
  return acc.result();
}

TEST(ErrorFree, TwoSumIsExactForAnyOrdering) {
  const auto r = two_sum(1.0, 0x1p-60);
  EXPECT_EQ(r.sum, 1.0);
  EXPECT_EQ(r.error, 0x1p-60);
  const auto q = two_sum(0x1p-60, 1.0);  // |a| < |b|: TwoSum needs no ordering
  EXPECT_EQ(q.sum, 1.0);
  EXPECT_EQ(q.error, 0x1p-60);
  const auto f = fast_two_sum(1.0, 0x1p-60);
  EXPECT_EQ(f.error, 0x1p-60);
}

TEST(Accumulators, EmptyIsNegativeZero) {
  EXPECT_EQ(test::bits(plain_accumulator<double>{}.result()), test::bits(-0.0));
  EXPECT_EQ(test::bits(kahan_accumulator<double>{}.result()), test::bits(-0.0));
  EXPECT_EQ(test::bits(neumaier_accumulator<double>{}.result()), test::bits(-0.0));
  EXPECT_EQ(test::bits(pairwise_accumulator<plain_accumulator<double>>{}.result()), test::bits(-0.0));
}

template <class Acc>
void expect_ieee_behaviour() {
  SCOPED_TRACE(typeid(Acc).name());
  EXPECT_EQ(test::bits(run<Acc>({-0.0, -0.0})), test::bits(-0.0));
  EXPECT_EQ(test::bits(run<Acc>({-0.0, 0.0})), test::bits(0.0));
  EXPECT_EQ(test::bits(run<Acc>({1.0, -1.0})), test::bits(0.0));
  EXPECT_EQ(run<Acc>({inf, 1.0, 2.0}), inf);
  EXPECT_EQ(run<Acc>({1.0, -inf, 2.0}), -inf);
  EXPECT_TRUE(std::isnan(run<Acc>({inf, -inf})));
  EXPECT_TRUE(std::isnan(run<Acc>({1.0, std::nan(""), 1.0})));
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(run<Acc>({max, max}), inf);  // finite overflow rounds to +Inf
  EXPECT_EQ(run<Acc>({-max, -max, 1.0}), -inf);
  EXPECT_EQ(run<Acc>({0x1p-1074, 0x1p-1074}), 0x1p-1073);  // subnormals kept
}

TEST(Accumulators, FollowIeeeForSpecialValues) {
  expect_ieee_behaviour<plain_accumulator<double>>();
  expect_ieee_behaviour<kahan_accumulator<double>>();
  expect_ieee_behaviour<neumaier_accumulator<double>>();
  expect_ieee_behaviour<pairwise_accumulator<plain_accumulator<double>>>();
  expect_ieee_behaviour<pairwise_accumulator<neumaier_accumulator<double>>>();
}

TEST(Accumulators, CompensationRecoversWhatPlainLoses) {
  // 1 + 2^-53 + 2^-53 ... : plain addition drops every small term, compensated sums keep them.
  EXPECT_EQ(run<plain_accumulator<double>>({1.0, 0x1p-53, 0x1p-53}), 1.0);
  EXPECT_EQ(run<kahan_accumulator<double>>({1.0, 0x1p-53, 0x1p-53}), 1.0 + 0x1p-52);
  EXPECT_EQ(run<neumaier_accumulator<double>>({1.0, 0x1p-53, 0x1p-53}), 1.0 + 0x1p-52);
  // Neumaier also handles a term larger than the running sum, which defeats Kahan.
  EXPECT_EQ(run<neumaier_accumulator<double>>({1.0, 0x1p100, 1.0, -0x1p100}), 2.0);
  EXPECT_EQ(run<kahan_accumulator<double>>({1.0, 0x1p100, 1.0, -0x1p100}), 0.0);
}

// Neumaier's error term as the paper writes it (Neumaier 1974): exact for finite sums, written without TwoSum.
template <class A>
A neumaier_error(A a, A b, A s) {
  return std::fabs(a) >= std::fabs(b) ? (a - s) + b : (b - s) + a;
}

// Sequential add against the paper's loop, written here independently: s += x, c += error.
TEST(Accumulators, NeumaierAddMatchesThePapersLoop) {
  std::vector<double> x = test::random_fixed_range<double>(1000, 40, 3, true);
  neumaier_accumulator<double> acc;
  double s = -0.0, c = -0.0;
  for (double v : x) {
    acc.add(v);
    const double t = s + v;
    c += neumaier_error(s, v, t);
    s = t;
  }
  EXPECT_EQ(test::bits(acc.sum), test::bits(s));
  EXPECT_EQ(test::bits(acc.compensation), test::bits(c));
  EXPECT_EQ(test::bits(acc.result()), test::bits(c == 0 ? s : s + c));
}

// A merge of two non-trivial accumulators against the documented formula: sum = s_l + s_r, compensation =
// (c_l + c_r) + e, the left operand's terms first. Catches a reassociated merge (c_l + (c_r + e)), which a merge with
// a single term (c_r = -0) cannot see.
TEST(Accumulators, NeumaierMergeOfTwoAccumulatorsFollowsTheFormula) {
  std::size_t differ_if_reassociated = 0;
  for (unsigned trial = 0; trial < 400; ++trial) {
    const std::vector<double> x = test::random_fixed_range<double>(64, 60, 100 + trial, true);
    neumaier_accumulator<double> left, right;
    for (std::size_t i = 0; i < 32; ++i) left.add(x[i]);
    for (std::size_t i = 32; i < 64; ++i) right.add(x[i]);
    const double s = left.sum + right.sum;
    const double e = neumaier_error(left.sum, right.sum, s);
    const double expected = (left.compensation + right.compensation) + e;
    if (test::bits(expected) != test::bits(left.compensation + (right.compensation + e))) ++differ_if_reassociated;
    neumaier_accumulator<double> merged = left;
    merged.merge(right);
    ASSERT_EQ(test::bits(merged.sum), test::bits(s)) << "trial " << trial;
    ASSERT_EQ(test::bits(merged.compensation), test::bits(expected)) << "trial " << trial;
  }
  EXPECT_GT(differ_if_reassociated, 0u) << "the inputs never tell the two associations apart";
}

// Accumulator states worth merging: single terms of every kind (zeros, subnormals, the largest finite values, Inf,
// NaN) and sums of a few terms drawn from those and from random magnitudes, overflowing ones included.
template <class Acc>
std::vector<Acc> merge_test_states(unsigned count, std::uint64_t seed) {
  using A = typename Acc::value_type;
  const A max = std::numeric_limits<A>::max(), tiny = std::numeric_limits<A>::denorm_min();
  const A inf_a = std::numeric_limits<A>::infinity();
  std::vector<A> pool = {A(0),
                         -A(0),
                         tiny,
                         -tiny,
                         max,
                         -max,
                         max / 2,
                         -max / 2,
                         inf_a,
                         -inf_a,
                         std::numeric_limits<A>::quiet_NaN(),
                         A(1),
                         -A(1),
                         std::numeric_limits<A>::epsilon()};
  const auto scaled = test::random_fixed_range<A>(256, std::numeric_limits<A>::max_exponent - 8, seed, true);
  pool.insert(pool.end(), scaled.begin(), scaled.end());
  std::vector<Acc> states;
  for (A x : pool) states.push_back(Acc::from_value(x));
  std::uint64_t state = seed;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return std::size_t(state >> 33) % pool.size();
  };
  while (states.size() < count) {
    Acc acc = Acc::from_value(pool[next()]);
    for (int k = 1 + int(next() % 6); k > 0; --k) acc.add(pool[next()]);
    states.push_back(acc);
  }
  return states;
}

template <class Acc>
void expect_commutative_merge() {
  SCOPED_TRACE(typeid(Acc).name());
  static_assert(Acc::commutative_merge);
  const auto same = [](auto a, auto b) { return (std::isnan(a) && std::isnan(b)) || test::bits(a) == test::bits(b); };
  const std::vector<Acc> states = merge_test_states<Acc>(600, 7);
  std::size_t nonzero_compensations = 0;
  for (const Acc& a : states) {
    for (const Acc& b : states) {
      Acc ab = a, ba = b;
      ab.merge(b);
      ba.merge(a);
      ASSERT_TRUE(same(ab.sum, ba.sum)) << a.result() << " " << b.result();
      if constexpr (requires { ab.compensation; }) {
        ASSERT_TRUE(same(ab.compensation, ba.compensation)) << a.sum << " " << b.sum;
        nonzero_compensations += ab.compensation != 0;
      }
    }
  }
  if constexpr (requires { states[0].compensation; }) EXPECT_GT(nonzero_compensations, states.size());
}

// Next to the largest finite value, with the smaller magnitude on the left: TwoSum's s - a overflows there (its error
// NaN, so the result NaN); the magnitude-ordered error term keeps the correctly rounded sum.
TEST(Accumulators, NeumaierStaysFiniteNextToTheLargestValue) {
  const float max = std::numeric_limits<float>::max(), b = 0x1.ff6edep126f;
  for (const auto& [left, right] : {std::pair{b, -max}, std::pair{-max, b}, std::pair{-b, max}}) {
    neumaier_accumulator<float> acc = neumaier_accumulator<float>::from_value(left);
    acc.merge(neumaier_accumulator<float>::from_value(right));
    EXPECT_EQ(acc.result(), float(double(left) + double(right))) << left << " + " << right;
  }
}

// neumaier.hpp's merge has no finiteness test: a non-finite sum makes every sum built on it non-finite, and result()
// then ignores the compensation. Checked against a merge that resets the compensation to -0 whenever its sum is Inf or
// NaN, on running sums and on pairwise trees of terms drawn from merge_test_states' pool (Inf, NaN, the largest
// values, overflowing sums, zeros, subnormals).
template <class A>
struct neumaier_with_reset {
  A sum = -A(0), compensation = -A(0);
  void merge(const neumaier_with_reset& right) {
    const A s = sum + right.sum;
    compensation = std::isfinite(s) ? (compensation + right.compensation) + neumaier_error(sum, right.sum, s) : -A(0);
    sum = s;
  }
  A result() const { return !std::isfinite(sum) || compensation == A(0) ? sum : sum + compensation; }
};

template <class A>
void expect_no_reset_needed() {
  SCOPED_TRACE(typeid(A).name());
  const auto same = [](A a, A b) { return (std::isnan(a) && std::isnan(b)) || test::bits(a) == test::bits(b); };
  std::vector<A> pool;
  for (const auto& s : merge_test_states<neumaier_accumulator<A>>(64, 11)) pool.push_back(s.sum);
  std::uint64_t state = 5;
  const auto next = [&](std::size_t m) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return std::size_t(state >> 33) % m;
  };
  const std::function<std::pair<neumaier_accumulator<A>, neumaier_with_reset<A>>(const std::vector<A>&, std::size_t,
                                                                                 std::size_t)>
      tree = [&](const std::vector<A>& x, std::size_t first, std::size_t count) {
        if (count == 1)
          return std::pair{neumaier_accumulator<A>::from_value(x[first]), neumaier_with_reset<A>{x[first]}};
        auto [l, lr] = tree(x, first, count / 2);
        const auto [r, rr] = tree(x, first + count / 2, count - count / 2);
        l.merge(r), lr.merge(rr);
        return std::pair{l, lr};
      };
  std::size_t non_finite = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<A> x(1 + next(24));
    for (A& v : x) v = pool[next(pool.size())];
    neumaier_accumulator<A> running;
    neumaier_with_reset<A> running_reset;
    for (A v : x) running.add(v), running_reset.merge({v});
    ASSERT_TRUE(same(running.result(), running_reset.result())) << "running sum, trial " << trial;
    const auto [t, tr] = tree(x, 0, x.size());
    ASSERT_TRUE(same(t.result(), tr.result())) << "tree, trial " << trial;
    non_finite += !std::isfinite(t.result());
  }
  EXPECT_GT(non_finite, 1000u) << "too few non-finite sums to tell the merges apart";
}

TEST(Accumulators, NeumaierResultNeedsNoCompensationReset) {
  expect_no_reset_needed<float>();
  expect_no_reset_needed<double>();
}

// The accumulators that declare commutative_merge (which lets the GPU's warp exchanges merge in either order,
// detail/registers.cuh) give the same bits in both orders, for every pair of states.
TEST(Accumulators, MergesDeclaredCommutativeAreCommutativeBitForBit) {
  expect_commutative_merge<plain_accumulator<float>>();
  expect_commutative_merge<plain_accumulator<double>>();
  expect_commutative_merge<neumaier_accumulator<float>>();
  expect_commutative_merge<neumaier_accumulator<double>>();
}

TEST(PairwiseAccumulator, IsTheCanonicalOrderForEveryLength) {
  std::vector<float> x = test::random_fixed_range<float>(300, 20, 5, true);
  const std::function<float(float, float)> add = [](float a, float b) { return a + b; };
  for (std::size_t n = 0; n <= x.size(); ++n) {
    pairwise_accumulator<plain_accumulator<float>> acc;
    for (std::size_t i = 0; i < n; ++i) acc.add(x[i]);
    ASSERT_EQ(test::bits(acc.result()), test::bits(test::canonical_reference<float>(x, n, add, -0.0f))) << "n=" << n;
  }
}

TEST(PairwiseAccumulator, SubtreesAndSingleTermsGiveTheSameBits) {
  std::vector<double> x = test::random_fixed_range<double>(1000, 30, 9, true);
  pairwise_accumulator<plain_accumulator<double>> single, blocks;
  for (double v : x) single.add(v);
  // 512 + 256 + 128 + 64 + 32 + 8 = 1000: push each aligned block's root.
  std::size_t i = 0;
  for (int level : {9, 8, 7, 6, 5, 3}) {
    pairwise_accumulator<plain_accumulator<double>> block;
    for (std::size_t k = 0; k < (std::size_t{1} << level); ++k) block.add(x[i + k]);
    blocks.add_subtree(block.root(), level);
    i += std::size_t{1} << level;
  }
  EXPECT_EQ(blocks.count(), 1000u);
  EXPECT_EQ(test::bits(single.result()), test::bits(blocks.result()));
}

}  // namespace
