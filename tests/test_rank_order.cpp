// include/detred/distributed/rank_order.hpp: the all-reduce's compile-time canonical order over P ranks equals
// detred::sum<float> of the P values in rank order (docs/DISTRIBUTED.md, "all_reduce"), bit for bit, for P = 1 .. 15,
// on inputs where the association shows (values over many binades, cancellation), and on the order written out.
// Runs on the CPU: the same header is compiled into the GPU combine kernel (src/nccl/combine.cu).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "detred/distributed/rank_order.hpp"
#include "detred/reduce.hpp"

namespace {
using namespace detred;

std::uint32_t bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

template <int P>
void check_rank_count(std::uint64_t& state) {
  for (int trial = 0; trial < 20000; ++trial) {
    float x[P];
    for (float& v : x) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const int exponent = int(state >> 59) - 16;  // 32 binades: the association changes the rounding
      const float scale = exponent >= 0 ? float(1 << exponent) : 1.0f / float(1 << -exponent);
      v = float(std::int32_t(state >> 32)) * 0x1p-31f * scale;
    }
    const auto load = [&](int r) { return x[r]; };
    const float got = distributed::rank_order_sum<P>(load);
    const float expected = sum<float>(x, P, sum_method::tree);
    ASSERT_EQ(bits(got), bits(expected)) << "P=" << P << " trial " << trial;
  }
  if constexpr (P < 15) check_rank_count<P + 1>(state);
}

TEST(RankOrder, EqualsTheCanonicalSumForEveryRankCountUpTo15) {
  std::uint64_t state = 20261123;
  check_rank_count<1>(state);
}

TEST(RankOrder, AssociationAsDocumented) {
  // Values that make each association distinguishable: 2^24 absorbs 1 unless the 1s meet first.
  const auto at = [](std::vector<float> v) { return [v](int r) { return v[std::size_t(r)]; }; };
  // P = 3: (x0 + x1) + x2.   x0 = 2^24, x1 = 1, x2 = 1: (2^24 + 1) + 1 = 2^24 (ties to even twice); x0 + (x1 + x2) =
  // 2^24 + 2.
  EXPECT_EQ(distributed::rank_order_sum<3>(at({0x1p24f, 1.0f, 1.0f})), 0x1p24f);
  // P = 4: (x0 + x1) + (x2 + x3): the two 1s at the end meet first.
  EXPECT_EQ(distributed::rank_order_sum<4>(at({0x1p24f, 0.0f, 1.0f, 1.0f})), 0x1p24f + 2.0f);
  // P = 6: ((x0 + x1) + (x2 + x3)) + (x4 + x5).
  EXPECT_EQ(distributed::rank_order_sum<6>(at({0x1p24f, 0.0f, 0.0f, 0.0f, 1.0f, 1.0f})), 0x1p24f + 2.0f);
  // P = 5: ((x0 + x1) + (x2 + x3)) + x4: the 1s meet only inside the first tree.
  EXPECT_EQ(distributed::rank_order_sum<5>(at({0x1p24f, 0.0f, 1.0f, 1.0f, 0.0f})), 0x1p24f + 2.0f);
  EXPECT_EQ(distributed::rank_order_sum<5>(at({0x1p24f, 0.0f, 0.0f, 1.0f, 1.0f})), 0x1p24f);
}

}  // namespace
