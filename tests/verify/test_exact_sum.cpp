// The exact reference checked against cases whose answers are known independently of it: hand-checked vectors
// (cancellation, overflow ties, subnormal results, signed zeros, NaN and Inf), IEEE addition itself (a single
// addition of two values is correctly rounded, so it is an oracle for n = 2 over the whole range), and sums small
// enough to be exact in double or float, where one conversion is the correct rounding.
#include "detred/verify/exact_sum.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {
using namespace detred;
using detred::verify::exact_sum;
using detred::verify::exact_sum_of;

template <class T>
std::uint64_t bits(T x) {
  return static_cast<std::uint64_t>(bits_of(x));
}

template <class T>
exact_sum sum_of(std::initializer_list<T> values) {
  std::vector<T> v(values);
  return exact_sum_of<T>(std::span<const T>(v));
}

constexpr double dmax = std::numeric_limits<double>::max();
constexpr double fmax = std::numeric_limits<float>::max();

TEST(ExactSum, HandCheckedCancellation) {
  EXPECT_EQ(sum_of<double>({1e308, 1e308, -1e308}).rounded<double>(), 1e308);
  EXPECT_EQ(sum_of<double>({dmax, dmax, -dmax}).rounded<double>(), dmax);
  EXPECT_EQ(sum_of<double>({0x1p53, 1, -0x1p53}).rounded<double>(), 1.0);
  EXPECT_EQ(sum_of<double>({0x1p1023, 0x1p-1074, -0x1p1023}).rounded<double>(), 0x1p-1074);
  EXPECT_EQ(sum_of<float>({0x1p24f, 1, -0x1p24f}).rounded<float>(), 1.0f);
  EXPECT_EQ(sum_of<float>({fmax, fmax, -fmax}).rounded<float>(), fmax);
  // 1e308 + 1e308 - 1e308 exceeds the float range: the float result is +Inf.
  EXPECT_EQ(sum_of<double>({1e308, 1e308, -1e308}).rounded<float>(), std::numeric_limits<float>::infinity());
}

TEST(ExactSum, LongAlternatingSeriesWithKnownSums) {
  // 1 - 2 + 3 - 4 + ... - 2m = -m.
  {
    exact_sum s;
    const int m = 500000;
    for (int k = 1; k <= 2 * m; ++k) s.add(k % 2 ? double(k) : -double(k));
    EXPECT_EQ(s.rounded<double>(), -double(m));
    EXPECT_EQ(s.count(), std::uint64_t(2 * m));
  }
  // (2^1000, 1, -2^1000, 2^-1000) repeated: every plain sum loses the small terms; the exact sum is k (1 + 2^-1000).
  {
    exact_sum s;
    const int k = 100000;
    for (int i = 0; i < k; ++i) {
      s.add(0x1p1000);
      s.add(1.0);
      s.add(-0x1p1000);
      s.add(0x1p-1000);
    }
    EXPECT_EQ(s.rounded<double>(), double(k));  // k (1 + 2^-1000) rounds to k
    EXPECT_EQ(s.to_decimal(6), "1.00000e+05");
  }
  // x_i, 0.5, -x_i for 2^20 random doubles over the whole range: the sum is 2^20 * 0.5 = 2^19.
  {
    std::mt19937_64 rng(7);
    exact_sum s;
    for (int i = 0; i < (1 << 20); ++i) {
      double x = 0;
      do x = std::bit_cast<double>(rng());
      while (!std::isfinite(x));
      s.add(x);
      s.add(0.5);
      s.add(-x);
    }
    EXPECT_EQ(s.rounded<double>(), 0x1p19);
  }
}

// A helper for half/bfloat16 expected values given as float.
template <class T>
T from(float f) {
  if constexpr (std::same_as<T, float>)
    return f;
  else
    return T::from_float(f);  // exact for the representable values used here
}

// MAX + ulp(MAX)/2 is the first value that rounds to infinity (the tie goes up, to the even 2^(emax+1)); anything
// below it rounds to MAX.
template <class T>
void check_overflow_threshold(double max, double half_ulp) {
  const double tiny = 0x1p-1074;
  EXPECT_EQ(bits(sum_of<double>({max, half_ulp}).rounded<T>()), bits(from<T>(std::numeric_limits<float>::infinity())));
  EXPECT_EQ(bits(sum_of<double>({-max, -half_ulp}).rounded<T>()),
            bits(from<T>(-std::numeric_limits<float>::infinity())));
  EXPECT_EQ(bits(sum_of<double>({max, half_ulp, -tiny}).rounded<T>()), bits(from<T>(float(max))));
  EXPECT_EQ(bits(sum_of<double>({-max, -half_ulp, tiny}).rounded<T>()), bits(from<T>(float(-max))));
  EXPECT_EQ(bits(sum_of<double>({max, half_ulp, -half_ulp}).rounded<T>()), bits(from<T>(float(max))));
}

TEST(ExactSum, OverflowTiesForEveryType) {
  // half: MAX 65504, ulp(MAX) 32.
  check_overflow_threshold<half>(65504.0, 16.0);
  // bfloat16: MAX (2 - 2^-7) 2^127, ulp 2^120.
  check_overflow_threshold<bfloat16>(0x1.fep127, 0x1p119);
  // float: MAX (2 - 2^-23) 2^127, ulp 2^104.
  check_overflow_threshold<float>(double(fmax), 0x1p103);
  // double: MAX (2 - 2^-52) 2^1023, ulp 2^971; MAX + ulp/2 is not a double, so build it as MAX + 2^969 + 2^969.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(sum_of<double>({dmax, 0x1p969, 0x1p969}).rounded<double>(), inf);
  EXPECT_EQ(sum_of<double>({-dmax, -0x1p969, -0x1p969}).rounded<double>(), -inf);
  EXPECT_EQ(sum_of<double>({dmax, 0x1p969, 0x1p969, -0x1p-1074}).rounded<double>(), dmax);
  EXPECT_EQ(sum_of<double>({dmax, 0x1p970, 0x1p971, dmax}).rounded<double>(), inf);
}

TEST(ExactSum, SubnormalResultsAndTies) {
  // double: subnormal results are exact multiples of 2^-1074.
  EXPECT_EQ(sum_of<double>({0x1p-1074, 0x1p-1074, 0x1p-1074}).rounded<double>(), 0x3p-1074);
  EXPECT_EQ(sum_of<double>({0x1p-1022, -0x1p-1074}).rounded<double>(), 0x1p-1022 - 0x1p-1074);
  // float: 2^-150 is half the smallest subnormal: the tie goes to even (0); a hair more goes up; 3 2^-150 ties to
  // 2^-148.
  EXPECT_EQ(bits(sum_of<double>({0x1p-150}).rounded<float>()), bits(0.0f));
  EXPECT_EQ(bits(sum_of<double>({-0x1p-150}).rounded<float>()), bits(-0.0f));
  EXPECT_EQ(sum_of<double>({0x1p-150, 0x1p-1074}).rounded<float>(), 0x1p-149f);
  EXPECT_EQ(sum_of<double>({0x3p-150}).rounded<float>(), 0x1p-148f);
  EXPECT_EQ(sum_of<double>({0x5p-150}).rounded<float>(), 0x1p-148f);
  // The largest subnormal plus half an ulp rounds (to even) to the smallest normal.
  EXPECT_EQ(sum_of<double>({0x1p-126 - 0x1p-149, 0x1p-150}).rounded<float>(), 0x1p-126f);
  // half: smallest subnormal 2^-24.
  EXPECT_EQ(sum_of<double>({0x1p-25}).rounded<half>().bits, 0x0000u);
  EXPECT_EQ(sum_of<double>({0x1p-25, 0x1p-60}).rounded<half>().bits, 0x0001u);
  EXPECT_EQ(sum_of<double>({0x3p-25}).rounded<half>().bits, 0x0002u);
  EXPECT_EQ(sum_of<double>({-0x1p-24, -0x1p-24}).rounded<half>().bits, 0x8002u);
  // bfloat16: smallest subnormal 2^-133.
  EXPECT_EQ(sum_of<double>({0x1p-133}).rounded<bfloat16>().bits, 0x0001u);
  EXPECT_EQ(sum_of<double>({0x1p-134}).rounded<bfloat16>().bits, 0x0000u);
  EXPECT_EQ(sum_of<double>({0x3p-134}).rounded<bfloat16>().bits, 0x0002u);
  // Normal ties to even.
  EXPECT_EQ(sum_of<double>({1, 0x1p-53}).rounded<double>(), 1.0);
  EXPECT_EQ(sum_of<double>({1, 0x1p-53, 0x1p-1074}).rounded<double>(), 1 + 0x1p-52);
  EXPECT_EQ(sum_of<double>({1 + 0x1p-52, 0x1p-53}).rounded<double>(), 1 + 0x1p-51);
  EXPECT_EQ(sum_of<double>({1, 0x1p-24}).rounded<float>(), 1.0f);
  EXPECT_EQ(sum_of<double>({1, 0x3p-24}).rounded<float>(), 1 + 0x1p-22f);
  EXPECT_EQ(sum_of<double>({1, 0x1p-11}).rounded<half>().bits, from<half>(1.0f).bits);
  EXPECT_EQ(sum_of<double>({1, 0x1p-8}).rounded<bfloat16>().bits, from<bfloat16>(1.0f).bits);
  EXPECT_EQ(sum_of<double>({1, 0x3p-8}).rounded<bfloat16>().bits, from<bfloat16>(1 + 0x1p-6f).bits);
}

TEST(ExactSum, SignedZeros) {
  auto zero_bits = [](const exact_sum& s) { return bits(s.rounded<double>()); };
  EXPECT_EQ(zero_bits(exact_sum{}), bits(-0.0));  // empty: the identity -0.0
  EXPECT_EQ(zero_bits(sum_of<double>({-0.0})), bits(-0.0));
  EXPECT_EQ(zero_bits(sum_of<double>({-0.0, -0.0, -0.0})), bits(-0.0));
  EXPECT_EQ(zero_bits(sum_of<double>({0.0})), bits(0.0));
  EXPECT_EQ(zero_bits(sum_of<double>({-0.0, 0.0})), bits(0.0));
  EXPECT_EQ(zero_bits(sum_of<double>({1.0, -1.0})), bits(0.0));
  EXPECT_EQ(zero_bits(sum_of<double>({-1.0, 1.0})), bits(0.0));
  EXPECT_EQ(zero_bits(sum_of<double>({-0.0, -1.0, 1.0})), bits(0.0));
  EXPECT_EQ(bits(exact_sum{}.rounded<half>()), 0x8000u);
  EXPECT_EQ(bits(exact_sum{}.rounded<bfloat16>()), 0x8000u);
  EXPECT_EQ(bits(sum_of<float>({-0.0f, -0.0f}).rounded<float>()), bits(-0.0f));
  EXPECT_EQ(exact_sum{}.sign(), 0);
  EXPECT_EQ(exact_sum{}.to_decimal(), "0");
}

TEST(ExactSum, NanAndInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(bits(sum_of<double>({1.0, nan}).rounded<double>()), bits(canonical_nan<double>()));
  EXPECT_EQ(bits(sum_of<double>({-nan}).rounded<float>()), bits(canonical_nan<float>()));
  EXPECT_EQ(bits(sum_of<double>({inf, -inf}).rounded<double>()), bits(canonical_nan<double>()));
  EXPECT_EQ(bits(sum_of<double>({inf, nan}).rounded<half>()), bits(canonical_nan<half>()));
  EXPECT_EQ(sum_of<double>({inf, 1.0, -dmax}).rounded<double>(), inf);
  EXPECT_EQ(sum_of<double>({-inf, -dmax, -inf}).rounded<double>(), -inf);
  EXPECT_EQ(sum_of<double>({-inf}).rounded<half>().bits, 0xfc00u);
  const exact_sum s = sum_of<double>({1.0, inf, 2.0, nan});
  EXPECT_TRUE(s.has_nan());
  EXPECT_TRUE(s.has_positive_infinity());
  EXPECT_FALSE(s.has_negative_infinity());
  EXPECT_FALSE(s.is_finite());
  EXPECT_EQ(s.count(), 4u);
  EXPECT_EQ(s.to_decimal(3), "3.00e+00");  // the finite part
  EXPECT_EQ(s.sign(), 1);
}

TEST(ExactSum, ToDecimalIsTheExactValueRounded) {
  // 0.1 as a double is 0.1000000000000000055511151231257827021181583404541015625 exactly.
  EXPECT_EQ(sum_of<double>({0.1}).to_decimal(40), "1.000000000000000055511151231257827021182e-01");
  EXPECT_EQ(sum_of<double>({-0.1}).to_decimal(5), "-1.0000e-01");
  EXPECT_EQ(sum_of<double>({0x1p-1074}).to_decimal(4), "4.941e-324");
  EXPECT_EQ(sum_of<double>({9.5}).to_decimal(1), "1e+01");  // half-even on the digits: 9.5 -> 10
  EXPECT_EQ(sum_of<double>({8.5}).to_decimal(1), "8e+00");
  EXPECT_EQ(sum_of<double>({1e308, 1e308}).to_decimal(3), "2.00e+308");
}

// Oracle: one IEEE addition is correctly rounded (overflow and subnormals included), so for two inputs the reference
// must equal a + b bit for bit, over the whole range of bit patterns.
TEST(ExactSum, TwoTermsEqualOneIeeeAddition) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    double a = 0, b = 0;
    do a = std::bit_cast<double>(rng());
    while (std::isnan(a));
    // Half the time b is near a in exponent (carries, cancellation, ties); else any bit pattern.
    if (i % 2 == 0 && std::isfinite(a) && a != 0) {
      const double r = std::bit_cast<double>((rng() >> 12) | 0x3ff0000000000000ull);  // in [1, 2)
      b = std::ldexp((rng() & 1) ? -r : r, std::ilogb(a) - int(rng() % 60));
    } else {
      do b = std::bit_cast<double>(rng());
      while (std::isnan(b));
    }
    if (std::isinf(a) && std::isinf(b) && a != b) continue;
    const double expected = a + b;
    ASSERT_EQ(bits(sum_of<double>({a, b}).rounded<double>()),
              bits(std::isnan(expected) ? canonical_nan<double>() : expected))
        << std::hexfloat << a << " + " << b;
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (std::isnan(fa + fb)) continue;
    ASSERT_EQ(bits(sum_of<float>({fa, fb}).rounded<float>()), bits(fa + fb)) << std::hexfloat << fa << " + " << fb;
  }
}

// Oracle: sums of a few hundred values on a common grid are exact in double; converting that double once to float,
// half or bfloat16 (through an exact float, where the sum fits 24 bits) is the correct rounding.
TEST(ExactSum, SmallGridSumsEqualOneConversion) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + int(rng() % 300);
    std::vector<float> x(n);
    std::vector<half> h(n);
    std::vector<bfloat16> b(n);
    double exact = 0;
    for (int i = 0; i < n; ++i) {
      // Floats with exponents in [0, 20]: multiples of 2^-23 below 2^21, so the double sum of 300 is exact.
      x[i] = std::ldexp(float(std::int64_t(rng() % (1u << 24)) - (1 << 23)) * 0x1p-23f, int(rng() % 21));
      exact += x[i];
      // 16-bit values that are multiples of 2^-8 below 2^8: sums of 300 are below 2^17, exact in float.
      const float g = float(std::int64_t(rng() % (1u << 16)) - (1 << 15)) * 0x1p-8f;
      h[i] = half::from_float(g);
      b[i] = bfloat16::from_float(g);
    }
    ASSERT_EQ(exact_sum_of<float>(x).rounded<float>(), static_cast<float>(exact));
    float hs = 0, bs = 0;
    for (int i = 0; i < n; ++i) {
      hs += h[i].to_float();  // exact: multiples of 2^-8 below 2^16 fit float's 24 bits
      bs += b[i].to_float();
    }
    ASSERT_EQ(exact_sum_of<half>(h).rounded<half>().bits, half::from_float(hs).bits);
    ASSERT_EQ(exact_sum_of<bfloat16>(b).rounded<bfloat16>().bits, bfloat16::from_float(bs).bits);
    ASSERT_EQ(exact_sum_of<half>(h).rounded<float>(), hs);
  }
}

TEST(ExactSum, MergeEqualsAddingEverything) {
  std::mt19937_64 rng(11);
  std::vector<double> x(5000);
  for (auto& v : x) do
      v = std::bit_cast<double>(rng());
    while (!std::isfinite(v));
  const exact_sum whole = exact_sum_of<double>(x);
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{2500}, x.size()}) {
    exact_sum left = exact_sum_of<double>(std::span<const double>(x).first(cut));
    left.merge(exact_sum_of<double>(std::span<const double>(x).subspan(cut)));
    EXPECT_EQ(left.scaled(), whole.scaled());
    EXPECT_EQ(bits(left.rounded<double>()), bits(whole.rounded<double>()));
    EXPECT_EQ(left.count(), whole.count());
  }
}

TEST(ExactSum, MagnitudesAndScaled) {
  std::vector<double> x{-1.5, 2.0, -0.0, 0x1p-1074};
  EXPECT_EQ(verify::exact_sum_of_magnitudes<double>(x).rounded<double>(), 3.5 + 0x1p-1074);
  EXPECT_EQ(exact_sum_of<double>(x).scaled(), (boost::multiprecision::cpp_int(1) << 1073) + 1);
  EXPECT_EQ(exact_sum_of<double>(x).sign(), 1);
  EXPECT_EQ(sum_of<double>({-3.0}).sign(), -1);
}

}  // namespace
