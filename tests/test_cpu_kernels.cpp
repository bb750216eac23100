// src/cpu kernels: the generic, SSE2 and AVX2 subtree kernels compute the same canonical subtree, bit for bit.
// (test_sum.cpp checks whichever kernel this machine dispatches to against the definition; this test checks the
// others, which another machine would pick.)
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "src/cpu/subtree_root.hpp"
#include "tests/support/reference.hpp"

namespace {
using namespace detred;

template <class A>
void expect_all_kernels_agree(int level, std::uint64_t seed) {
  const std::size_t n = std::size_t{1} << level;
  std::vector<A> x = test::random_fixed_range<A>(n, 60, seed, true);
  const std::function<A(A, A)> plus = [](A a, A b) { return a + b; };
  const A expected = test::canonical_reference<A>(x, n, plus, -A(0));
  std::vector<plain_accumulator<A>> generic_scratch(n / 8);
  EXPECT_EQ(test::bits(cpu::subtree_root<plain_accumulator<A>>(x.data(), level, generic_scratch.data()).sum),
            test::bits(expected));
  std::vector<A> scratch(n / 8 + (std::size_t{1} << cpu::widen_block_level));
#if defined(__SSE2__)
  EXPECT_EQ(test::bits(cpu::sse2::subtree_root(x.data(), level, scratch.data())), test::bits(expected)) << level;
#endif
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (std::is_same_v<A, double>) {
    if (level >= 6 && cpu::avx2::available()) {
      EXPECT_EQ(test::bits(cpu::avx2::subtree_root(x.data(), level, scratch.data())), test::bits(expected)) << level;
    }
  }
#endif
  EXPECT_EQ(test::bits(cpu::plain_subtree_root<A>(x.data(), level, scratch.data())), test::bits(expected)) << level;
}

TEST(CpuKernels, EveryKernelComputesTheCanonicalSubtree) {
  for (int level = 6; level <= 16; ++level) {
    expect_all_kernels_agree<float>(level, 10 + level);
    expect_all_kernels_agree<double>(level, 50 + level);
  }
}

}  // namespace
