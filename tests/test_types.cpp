// types/half.hpp, types/bfloat16.hpp, types/float_traits.hpp: exact widening, round-to-nearest-even narrowing,
// canonical NaNs. GCC's _Float16 is the independent oracle for binary16.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "detred/types/float_traits.hpp"

using detred::bfloat16;
using detred::half;

TEST(Half, EveryBinary16WidensExactlyAndRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const half h = half::from_bits(std::uint16_t(b));
    const float f = h.to_float();
    const _Float16 oracle = std::bit_cast<_Float16>(std::uint16_t(b));
    if (detred::is_nan(h)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      continue;
    }
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f), std::bit_cast<std::uint32_t>(static_cast<float>(oracle)))
        << std::hex << b;
    ASSERT_EQ(half::from_float(f).bits, b) << std::hex << b;
  }
}

TEST(Half, NarrowingRoundsToNearestEvenLikeFloat16) {
  std::mt19937 rng(7);
  auto check = [](float f) {
    const _Float16 oracle = static_cast<_Float16>(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(detred::is_nan(half::from_float(f)));
      return;
    }
    ASSERT_EQ(half::from_float(f).bits, std::bit_cast<std::uint16_t>(oracle)) << std::hexfloat << f;
  };
  for (int i = 0; i < 2000000; ++i) check(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  // Every float in the interesting band (2^-26 .. 2^17), at a stride that visits every rounding case.
  for (std::uint32_t b = 0x32800000u; b < 0x48000000u; b += 37) {
    check(std::bit_cast<float>(b));
    check(-std::bit_cast<float>(b));
  }
  // Ties and the overflow threshold exactly.
  for (float f : {65504.0f, 65519.99f, 65520.0f, 0x1p-25f, 0x1.8p-25f, 0x1p-24f, 0x1.8p-24f, 0x1.004p0f, 0x1.006p0f}) {
    check(f);
    check(-f);
  }
}

TEST(BFloat16, WideningIsExactAndNarrowingRoundsToNearestEven) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const bfloat16 h = bfloat16::from_bits(std::uint16_t(b));
    if (detred::is_nan(h)) continue;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(h.to_float()), b << 16);
    ASSERT_EQ(bfloat16::from_float(h.to_float()).bits, b);
  }
  std::mt19937 rng(11);
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (std::isnan(f)) {
      EXPECT_TRUE(detred::is_nan(bfloat16::from_float(f)));
      continue;
    }
    // Oracle: the two bfloat16 neighbours of f, compared in double (exact), ties to the even one.
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t down = x & 0xffff0000u, up = down + 0x10000u;
    const double dd = std::fabs(double(f) - double(std::bit_cast<float>(down)));
    const double up_value = (up & 0x7fffffffu) == 0x7f800000u ? std::copysign(0x1p128, double(f))  // where Inf begins
                                                              : double(std::bit_cast<float>(up));
    const double du = std::fabs(up_value - double(f));
    std::uint32_t expect = (dd < du || (dd == du && ((down >> 16) & 1u) == 0)) ? down : up;
    if (std::isinf(f)) expect = x;
    ASSERT_EQ(bfloat16::from_float(f).bits, expect >> 16) << std::hexfloat << f;
  }
  EXPECT_EQ(bfloat16::from_float(std::numeric_limits<float>::max()).bits, 0x7f80u);  // rounds up to Inf
}

TEST(FloatTraits, CanonicalNanIsOneBitPattern) {
  EXPECT_EQ(detred::bits_of(detred::canonical_nan<float>()), 0x7fc00000u);
  EXPECT_EQ(detred::bits_of(detred::canonical_nan<double>()), 0x7ff8000000000000ull);
  EXPECT_EQ(detred::canonical_nan<half>().bits, 0x7e00u);
  EXPECT_EQ(detred::canonical_nan<bfloat16>().bits, 0x7fc0u);
  const float payload = std::bit_cast<float>(0xffc01234u);
  EXPECT_EQ(detred::bits_of(detred::canonicalize_nan(payload)), 0x7fc00000u);
  EXPECT_EQ(detred::bits_of(detred::canonicalize_nan(-0.0f)), 0x80000000u);
}

TEST(FloatTraits, WideningIsExact) {
  EXPECT_EQ(detred::widen<double>(0x1.fffffep127f), 0x1.fffffep127);
  EXPECT_EQ(detred::widen<double>(half::from_bits(0x0001)), 0x1p-24);  // smallest binary16 subnormal
  EXPECT_EQ(detred::widen<float>(bfloat16::from_bits(0x0001)), 0x1p-133f);
  EXPECT_TRUE(detred::is_finite(1.0f));
  EXPECT_FALSE(detred::is_finite(std::numeric_limits<float>::infinity()));
  EXPECT_FALSE(detred::is_finite(std::numeric_limits<double>::quiet_NaN()));
}

// Narrowing an input into a smaller accumulation type is rejected at compile time (float_traits.hpp says why).
static_assert(detred::accumulable<half, float> && detred::accumulable<bfloat16, double>);
static_assert(detred::accumulable<float, double> && detred::accumulable<double, double>);
static_assert(!detred::accumulable<double, float>);
static_assert(!detred::accumulable<int, double> && !detred::accumulable<float, half>);
static_assert(std::is_same_v<detred::default_accumulation_t<half>, float>);
static_assert(std::is_same_v<detred::default_accumulation_t<double>, double>);

// The headers promise that narrowing keeps a NaN's sign (the quiet NaN 0x7e00 / 0x7fc0 with the input's sign), and
// widening keeps it too; only detred's reductions canonicalise. Catches a from_float that drops the sign.
TEST(Half, NaNKeepsItsSignBothWays) {
  for (std::uint32_t payload : {0x00400000u, 0x00000001u, 0x003fffffu, 0x00123456u}) {
    const float positive = std::bit_cast<float>(0x7f800000u | payload);
    const float negative = std::bit_cast<float>(0xff800000u | payload);
    EXPECT_EQ(half::from_float(positive).bits, 0x7e00u) << std::hex << payload;
    EXPECT_EQ(half::from_float(negative).bits, 0xfe00u) << std::hex << payload;
    EXPECT_EQ(bfloat16::from_float(positive).bits, 0x7fc0u) << std::hex << payload;
    EXPECT_EQ(bfloat16::from_float(negative).bits, 0xffc0u) << std::hex << payload;
  }
  EXPECT_TRUE(std::signbit(half::from_bits(0xfe00u).to_float()));
  EXPECT_TRUE(std::isnan(half::from_bits(0xfe00u).to_float()));
  EXPECT_TRUE(std::signbit(bfloat16::from_bits(0xffc0u).to_float()));
}
