// The exact sum of floating-point inputs: the reference every error bound and every "exact" claim of detred is
// checked against.
//
// Order-independent and exact: every finite input (binary16, bfloat16, binary32, binary64, any mix) is split into its
// integer significand and its exponent, and the significand is added, as an integer, into one bucket per exponent.
// A bucket is a signed 128-bit integer, and a significand has at most 53 bits, so up to 2^74 inputs can be added
// without overflow (the contract promises 2^40). Nothing is ever rounded until a result is asked for; then the
// buckets are combined into one Boost.Multiprecision integer, the sum times 2^1074, and rounded by hand to the
// requested type (round to nearest, ties to even; subnormal results; overflow to +-Inf). The design follows xsum's
// "large superaccumulator" (R. Neal, 2015): per-exponent integer bins, carried only at the end.
//
// Special inputs are counted, not added: NaN, +Inf and -Inf each set a flag, and rounded<T>() returns what IEEE
// arithmetic would (NaN if any NaN or both infinities, else the infinity present).
#pragma once

#include <array>
#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <span>
#include <string>

#include "detred/types/float_traits.hpp"

namespace detred::verify {

__extension__ typedef __int128 int128;

class exact_sum {
 public:
  // A binary64 value m * 2^e with m an integer of at most 53 bits has e >= -1074; binary16, bfloat16 and binary32
  // values are binary64 values. Bucket b holds significands of weight 2^(b - 1074), b = 0 .. 2045.
  static constexpr int bucket_count = 2046;
  static constexpr int scale_exponent = 1074;  // scaled() is the sum times 2^scale_exponent

  // Adds x exactly. NaN and +-Inf are recorded (see rounded()); every input, special or not, is counted.
  template <floating_input T>
  void add(T x) {
    if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>) {
      add_double(static_cast<double>(x.to_float()));
    } else {
      add_double(static_cast<double>(x));  // exact: every binary32 is a binary64
    }
  }
  template <floating_input T>
  void add(std::span<const T> xs) {
    for (const T& x : xs) add(x);
  }
  // Adds everything `other` holds: exact, so merging partial sums in any order gives the same exact_sum.
  void merge(const exact_sum& other);

  std::uint64_t count() const { return count_; }
  bool has_nan() const { return has_nan_; }
  bool has_positive_infinity() const { return has_positive_infinity_; }
  bool has_negative_infinity() const { return has_negative_infinity_; }
  bool is_finite() const { return !has_nan_ && !has_positive_infinity_ && !has_negative_infinity_; }

  // The exact sum rounded once to T, correctly: round to nearest, ties to even; results below the normal range are
  // the correctly rounded subnormal (or zero); |s| >= MAX + ulp(MAX)/2 gives +-Inf. An exact zero is -0.0 when every
  // input was -0.0 or there were none (the IEEE identity of addition), else +0.0 (what IEEE gives for x + (-x)).
  // Special inputs: NaN (detred's canonical NaN) if any NaN or both infinities, else the infinity present.
  template <floating_input T>
  T rounded() const;

  // -1, 0 or +1: the sign of the exact sum of the finite inputs.
  int sign() const;
  // The exact sum of the finite inputs times 2^1074, an integer.
  boost::multiprecision::cpp_int scaled() const;
  // The exact sum of the finite inputs in decimal scientific notation, rounded to `significant_digits` digits
  // (half-even on the exact decimal expansion), e.g. "1.000000000000000000000000000000000000000e+308", or "0".
  std::string to_decimal(int significant_digits = 40) const;

 private:
  void add_double(double x);

  std::array<int128, bucket_count> buckets_{};
  std::uint64_t count_ = 0;
  bool has_nan_ = false;
  bool has_positive_infinity_ = false;
  bool has_negative_infinity_ = false;
  bool only_negative_zeros_ = true;  // no input other than -0.0 so far (true when empty)
};

// The exact sum of xs.
template <floating_input T>
exact_sum exact_sum_of(std::span<const T> xs) {
  exact_sum s;
  s.add(xs);
  return s;
}

// The exact sum of |x_i| (S in every error bound). NaN and Inf inputs are recorded as in exact_sum.
template <floating_input T>
exact_sum exact_sum_of_magnitudes(std::span<const T> xs) {
  exact_sum s;
  for (const T& x : xs) {
    if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>) {
      s.add(T::from_bits(std::uint16_t(x.bits & 0x7fffu)));
    } else {
      s.add(x < T(0) ? -x : (x == T(0) ? T(0) : x));  // NaN stays NaN: x < 0 and x == 0 are false
    }
  }
  return s;
}

}  // namespace detred::verify
