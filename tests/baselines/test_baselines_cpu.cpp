// detred::baselines::openmp_reduction_sum (baselines/include/detred/baselines/cpu.hpp): its stated guarantee,
// not_guaranteed, is real (the bits change with the thread count on order-sensitive data), its bound gamma_{n-1} S
// holds, one thread is the left fold, and the empty sum is +0.0. CPU only: runs in CI.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <set>
#include <vector>

#include "detred/baselines/cpu.hpp"
#include "detred/verify/error_bounds.hpp"
#include "detred/verify/error_metrics.hpp"
#include "detred/verify/exact_sum.hpp"
#include "tests/baselines/baselines_data.hpp"

namespace {
using namespace detred;

template <class A>
std::uint64_t bits(A a) {
  if constexpr (sizeof(A) == 4)
    return std::bit_cast<std::uint32_t>(a);
  else
    return std::bit_cast<std::uint64_t>(a);
}

template <class A, class T>
void check_openmp(std::size_t n) {
  const auto xs = test::order_sensitive<T>(n);
  const std::span<const T> span(xs);
  const auto s = verify::exact_sum_of(span);
  const auto S = verify::exact_sum_of_magnitudes(span);
  const double bound = verify::error_bound<A>(sum_method::sequential, s, S);
  A fold = A(0);
  for (const T& x : xs) fold += widen<A>(x);
  EXPECT_EQ(bits(baselines::openmp_reduction_sum<A, T>(span, 1)), bits(fold)) << "one thread is the left fold";
  std::set<std::uint64_t> distinct;
  for (unsigned threads : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    const A r = baselines::openmp_reduction_sum<A, T>(span, threads);
    distinct.insert(bits(r));
    EXPECT_LE(verify::measure_error<A>(s, r).absolute, bound) << threads << " threads";
  }
  // The guarantee the header states (not_guaranteed) is visible: the thread count changes the bits.
  EXPECT_GT(distinct.size(), 1u);
  std::printf("openmp_reduction_sum n=%zu: %zu distinct results over 8 thread counts\n", n, distinct.size());
}

TEST(OpenMPReduction, ThreadCountChangesBitsWithinBoundFloat) { check_openmp<float, float>(100'000); }
TEST(OpenMPReduction, ThreadCountChangesBitsWithinBoundDouble) { check_openmp<double, double>(100'000); }
TEST(OpenMPReduction, ThreadCountChangesBitsWithinBoundHalf) { check_openmp<float, half>(100'000); }

TEST(OpenMPReduction, EmptySumIsPositiveZero) {
  const std::vector<float> none;
  EXPECT_EQ(bits(baselines::openmp_reduction_sum<float, float>(std::span<const float>(none), 4)), 0u);
}

}  // namespace
