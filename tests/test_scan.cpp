// scan.hpp: every prefix of a canonical scan equals the canonical reduce of that prefix, bit for bit, for every
// thread count; operands keep their order; in-place works; bad buffers are rejected.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "detred/reduce.hpp"
#include "detred/scan.hpp"
#include "tests/support/reference.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;
using test::bits;

TEST(SumScan, EveryPrefixEqualsTheTreeSumOfThatPrefix) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{13}, std::size_t{1000}}) {
    std::vector<float> x = test::random_fixed_range<float>(n, 20, n, true);
    std::vector<float> inclusive(n), exclusive(n);
    inclusive_sum_scan(x, inclusive);
    exclusive_sum_scan(x, exclusive);
    for (std::size_t i = 0; i < n; ++i) {
      const std::vector<float> prefix(x.begin(), x.begin() + std::ptrdiff_t(i + 1));
      ASSERT_EQ(bits(inclusive[i]), bits(sum(prefix, sum_method::tree))) << "n=" << n << " i=" << i;
      ASSERT_EQ(bits(exclusive[i]), bits(sum(x.data(), i, sum_method::tree))) << "n=" << n << " i=" << i;
    }
  }
}

TEST(SumScan, ChunkedParallelScanMatchesTheSequentialOneForEveryThreadCount) {
  const std::size_t chunk = std::size_t{1} << 16;
  for (std::size_t n : {chunk, chunk + 1, 4 * chunk, 7 * chunk + 999}) {
    std::vector<double> x = test::random_fixed_range<double>(n, 40, n, true);
    std::vector<double> one(n), many(n), ex_one(n), ex_many(n);
    inclusive_sum_scan(x, one, {.threads = 1});
    exclusive_sum_scan(x, ex_one, {.threads = 1});
    for (unsigned threads : {2u, 3u, 8u}) {
      inclusive_sum_scan(x, many, {.threads = threads});
      exclusive_sum_scan(x, ex_many, {.threads = threads});
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(bits(many[i]), bits(one[i])) << "n=" << n << " i=" << i << " threads=" << threads;
        ASSERT_EQ(bits(ex_many[i]), bits(ex_one[i])) << "n=" << n << " i=" << i << " threads=" << threads;
      }
    }
    // Scan consistency: the last inclusive output is the reduction in the same association.
    EXPECT_EQ(bits(one.back()), bits(sum(x, sum_method::tree)));
    // Spot-check prefixes across chunk boundaries against the tree sum of the prefix alone.
    for (std::size_t i : {chunk - 1, chunk, 2 * chunk - 1, 3 * chunk + 5, n - 1}) {
      if (i >= n) continue;
      ASSERT_EQ(bits(one[i]), bits(sum(x.data(), i + 1, sum_method::tree))) << "i=" << i;
      ASSERT_EQ(bits(ex_one[i]), bits(sum(x.data(), i, sum_method::tree))) << "i=" << i;
    }
  }
}

TEST(SumScan, MixedPrecisionSpecialValuesAndInPlace) {
  std::vector<half> h = {half::from_float(1), half::from_float(2), half::from_bits(0x7c00), half::from_bits(0xfc00)};
  std::vector<float> out(4);
  inclusive_sum_scan(h, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 3.0f);
  EXPECT_EQ(out[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits(out[3]), bits(canonical_nan<float>()));
  exclusive_sum_scan(h, out);
  EXPECT_EQ(bits(out[0]), bits(-0.0f));
  EXPECT_EQ(out[3], std::numeric_limits<float>::infinity());

  std::vector<double> x = test::random_fixed_range<double>(200000, 10, 3, true);
  std::vector<double> expected(x.size());
  inclusive_sum_scan(x, expected, {.threads = 1});
  inclusive_sum_scan(x.data(), x.data(), x.size(), {.threads = 4});  // in place
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(bits(x[i]), bits(expected[i])) << i;
}

template <class A, class T>
void expect_scan_matches_tree_sums(std::size_t n) {
  SCOPED_TRACE(std::string(float_traits<T>::name) + "->" + float_traits<A>::name);
  std::vector<double> raw = test::random_fixed_range<double>(n, 6, n + 17, true);
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = test::make<T>(raw[i]);
  std::vector<A> out(n);
  inclusive_sum_scan(x, out, {.threads = 3});
  for (std::size_t i : {std::size_t{0}, n / 3, n / 2, n - 1}) {
    ASSERT_EQ(bits(out[i]), bits(sum<A>(x.data(), i + 1, sum_method::tree))) << i;
  }
}

TEST(SumScan, EveryTypePair) {
  const std::size_t n = 2 * (std::size_t{1} << 16) + 5;
  test::for_each_type_pair([n]<class A, class T>() { expect_scan_matches_tree_sums<A, T>(n); });
}

TEST(GenericScan, NonCommutativeOperatorsKeepOrder) {
  // Affine maps x -> a x + b composed left to right, over integers modulo 2^64: exact, associative, not commutative.
  using affine = std::array<std::uint64_t, 2>;
  auto compose = [](const affine& f, const affine& g) { return affine{g[0] * f[0], g[0] * f[1] + g[1]}; };
  const std::size_t n = 3 * (std::size_t{1} << 16) + 17;
  std::vector<affine> maps(n);
  std::mt19937_64 rng(5);
  for (auto& m : maps) m = {rng() | 1u, rng()};
  std::vector<affine> expected(n);
  affine running = {1, 0};
  for (std::size_t i = 0; i < n; ++i) expected[i] = running = compose(running, maps[i]);
  for (unsigned threads : {1u, 2u, 5u}) {
    std::vector<affine> out(n), ex(n);
    detred::inclusive_scan(maps, out, compose, {.threads = threads});
    detred::exclusive_scan(maps, ex, affine{1, 0}, compose, {.threads = threads});
    ASSERT_EQ(out, expected) << threads;
    ASSERT_EQ(ex[0], (affine{1, 0}));
    for (std::size_t i = 1; i < n; ++i) ASSERT_EQ(ex[i], expected[i - 1]) << i;
  }
  std::vector<std::string> words = {"a", "b", "c", "d", "e"};
  std::vector<std::string> prefixes(5);
  detred::inclusive_scan(words, prefixes, [](const std::string& a, const std::string& b) { return a + b; });
  EXPECT_EQ(prefixes, (std::vector<std::string>{"a", "ab", "abc", "abcd", "abcde"}));
  detred::exclusive_scan(words.data(), words.data(), words.size(), std::string(">"),
                         [](const std::string& a, const std::string& b) { return a + b; });  // in place
  // The identity stands only for the empty prefix; it is never combined with an input (unlike std::exclusive_scan's
  // init), which is what keeps out[i] == reduce(x[0..i)) bit for bit.
  EXPECT_EQ(words, (std::vector<std::string>{">", "a", "ab", "abc", "abcd"}));
}

TEST(GenericScan, MaximumSegmentSumIsOrderSensitiveAndExact) {
  // (total, best prefix, best suffix, best segment): the classic associative, non-commutative monoid.
  using mss = std::array<std::int64_t, 4>;
  auto combine = [](const mss& l, const mss& r) {
    return mss{l[0] + r[0], std::max(l[1], l[0] + r[1]), std::max(r[2], r[0] + l[2]),
               std::max({l[3], r[3], l[2] + r[1]})};
  };
  std::mt19937_64 rng(9);
  std::vector<std::int64_t> v(100000);
  for (auto& e : v) e = std::int64_t(rng() % 201) - 100;
  std::vector<mss> x(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) x[i] = {v[i], v[i], v[i], v[i]};
  std::vector<mss> out(x.size());
  detred::inclusive_scan(x, out, combine, {.threads = 3});
  std::int64_t best = std::numeric_limits<std::int64_t>::min(), ending_here = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {  // Kadane's algorithm as the sequential reference
    ending_here = (i == 0) ? v[0] : std::max(v[i], ending_here + v[i]);
    best = std::max(best, ending_here);
    ASSERT_EQ(out[i][3], best) << i;
  }
  EXPECT_EQ(reduce(x, mss{0, 0, 0, 0}, combine)[3], best);
}

// Buffers that touch (one ends where the other begins) do not overlap: they must be accepted, and give the same bits
// as separate buffers. Catches an off-by-one (<= for <) in the overlap check.
TEST(Scan, AcceptsBuffersThatTouchWithoutOverlapping) {
  std::vector<float> both(20);
  for (std::size_t i = 0; i < 10; ++i) both[i] = 0.1f * float(i + 1);
  std::vector<float> expected(10);
  inclusive_sum_scan(both.data(), expected.data(), 10);
  EXPECT_NO_THROW(inclusive_sum_scan(both.data(), both.data() + 10, 10));  // output right after the input
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(test::bits(both[10 + i]), test::bits(expected[i]));
  std::vector<float> reversed(20);
  for (std::size_t i = 0; i < 10; ++i) reversed[10 + i] = both[i];
  EXPECT_NO_THROW(exclusive_sum_scan(reversed.data() + 10, reversed.data(), 10));  // output right before the input
  auto plus = [](double a, double b) { return a + b; };
  std::vector<double> d(8, 0.5);
  EXPECT_NO_THROW(detred::inclusive_scan(d.data(), d.data() + 4, 4, plus));
  EXPECT_EQ(d[7], 2.0);
  EXPECT_THROW(detred::inclusive_scan(d.data(), d.data() + 3, 4, plus), detred::invalid_argument);  // one overlaps
}

TEST(Scan, RejectsMismatchedOrOverlappingBuffers) {
  std::vector<float> x(10, 1.0f), small(9);
  EXPECT_THROW(inclusive_sum_scan(x, small), detred::invalid_argument);
  EXPECT_THROW(inclusive_sum_scan(x.data(), x.data() + 1, 9), detred::invalid_argument);
  EXPECT_THROW(inclusive_sum_scan(static_cast<const float*>(nullptr), x.data(), 3), detred::invalid_argument);
  auto plus = [](int a, int b) { return a + b; };
  std::vector<int> a(4, 1), b(5);
  EXPECT_THROW(detred::inclusive_scan(a, b, plus), detred::invalid_argument);
}

}  // namespace
