// order.hpp: the binary counter computes the definition, and canonical_depth is the true depth of the tree.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "detred/order.hpp"
#include "tests/support/reference.hpp"

namespace {

struct concat {
  void operator()(std::string& left, const std::string& right) const { left += right; }
};
// Records the association as a fully parenthesised expression, so the test sees the order itself.
struct parenthesise {
  void operator()(std::string& left, const std::string& right) const { left = "(" + left + "+" + right + ")"; }
};

TEST(CanonicalOrder, DocumentedExamples) {
  auto expression = [](std::size_t n) {
    detred::binary_counter<std::string, parenthesise> counter;
    for (std::size_t i = 0; i < n; ++i) counter.push(std::to_string(i));
    return counter.fold();
  };
  EXPECT_EQ(expression(1), "0");
  EXPECT_EQ(expression(3), "((0+1)+2)");
  EXPECT_EQ(expression(4), "((0+1)+(2+3))");
  EXPECT_EQ(expression(7), "((((0+1)+(2+3))+(4+5))+6)");
  EXPECT_EQ(expression(13), "(((((0+1)+(2+3))+((4+5)+(6+7)))+((8+9)+(10+11)))+12)");
}

TEST(CanonicalOrder, BinaryCounterMatchesTheRecursiveDefinition) {
  const std::function<std::string(std::string, std::string)> op = [](std::string a, std::string b) {
    return "(" + a + "+" + b + ")";
  };
  std::vector<std::string> x;
  for (int i = 0; i < 200; ++i) x.push_back(std::to_string(i));
  for (std::size_t n = 1; n <= x.size(); ++n) {
    detred::binary_counter<std::string, parenthesise> counter;
    for (std::size_t i = 0; i < n; ++i) counter.push(x[i]);
    ASSERT_EQ(counter.fold(), detred::test::canonical_reference<std::string>(x, n, op, "")) << n;
  }
}

// digit_fold: for the pushes that finish a parallel reduce (blocks of strictly decreasing sizes, in index order: the
// binary digits of a count, or of several counts one after another as the GPU finishing blocks push them), the left
// fold it keeps is the binary counter's fold, for every n. (Planted: a right fold, combine(value, acc), fails at
// n = 3.)
TEST(CanonicalOrder, DigitFoldIsTheBinaryCounterOfDecreasingPushes) {
  using counter = detred::binary_counter<std::string, parenthesise>;
  const auto block_root = [](std::uint64_t first, int level) {
    counter c;
    for (std::uint64_t i = 0; i < (std::uint64_t{1} << level); ++i) c.push(std::to_string(first + i));
    return c.fold();
  };
  for (std::uint64_t n = 1; n <= 300; ++n) {
    counter whole;
    for (std::uint64_t i = 0; i < n; ++i) whole.push(std::to_string(i));
    // The binary digits of n, largest first, as a finishing block pushes them.
    detred::digit_fold<std::string, parenthesise> digits;
    counter reference;
    std::uint64_t first = 0;
    for (int k = 63; k >= 0; --k) {
      if (!((n >> k) & 1)) continue;
      const std::string root = block_root(first, k);
      digits.push(root, k);
      reference.push(root, k);
      first += std::uint64_t{1} << k;
    }
    ASSERT_FALSE(digits.empty());
    EXPECT_EQ(digits.fold(), whole.fold()) << "n=" << n;
    EXPECT_EQ(digits.fold(), reference.fold()) << "n=" << n;
    // As canonical_sum_kernels.cuh's finish_in_block pushes them: chunks of 8 (the digits of n / 8 at levels 3 + k),
    // then tail tiles of 2 (fewer than 4 of them: levels 1 + k), then the remainder (fewer than 2 elements: level 0).
    detred::digit_fold<std::string, parenthesise> finish;
    const std::uint64_t chunks = n / 8, tiles = (n % 8) / 2, remainder = n % 2;
    first = 0;
    for (const auto& [count, base] : {std::pair{chunks, 3}, std::pair{tiles, 1}, std::pair{remainder, 0}}) {
      for (int k = 63; k >= 0; --k) {
        if (!((count >> k) & 1)) continue;
        finish.push(block_root(first, base + k), base + k);
        first += std::uint64_t{1} << (base + k);
      }
    }
    EXPECT_EQ(finish.fold(), whole.fold()) << "n=" << n << " as chunks, tiles and a remainder";
  }
  EXPECT_TRUE((detred::digit_fold<std::string, parenthesise>{}.empty()));
}

TEST(CanonicalOrder, DepthIsTheLongestPathInTheTree) {
  // Depth of every leaf = number of '(' enclosing it in the parenthesised expression.
  for (std::uint64_t n = 1; n <= 300; ++n) {
    detred::binary_counter<std::string, parenthesise> counter;
    for (std::uint64_t i = 0; i < n; ++i) counter.push("x");
    const std::string e = counter.fold();
    int depth = 0, deepest = 0;
    for (char c : e) {
      depth += (c == '(') - (c == ')');
      deepest = std::max(deepest, depth);
    }
    ASSERT_EQ(detred::canonical_depth(n), deepest) << n;
  }
  EXPECT_EQ(detred::canonical_depth(std::uint64_t{1} << 40), 40);
  EXPECT_EQ(detred::canonical_depth((std::uint64_t{1} << 40) - 1), 78);
}

}  // namespace
