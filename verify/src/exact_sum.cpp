// exact_sum: per-exponent integer buckets, combined and rounded by hand (see the header for the contract).
#include "detred/verify/exact_sum.hpp"
#include "float_format.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>

namespace detred::verify {

namespace mp = boost::multiprecision;

namespace {

__extension__ typedef unsigned __int128 uint128;

// A signed 128-bit integer as a cpp_int, through its two 64-bit halves (no reliance on cpp_int's __int128 support).
mp::cpp_int to_cpp_int(int128 v) {
  const bool negative = v < 0;
  // |v| fits in 128 unsigned bits even for the most negative value.
  const uint128 magnitude = negative ? uint128{0} - static_cast<uint128>(v) : static_cast<uint128>(v);
  mp::cpp_int r = static_cast<std::uint64_t>(magnitude >> 64);
  r <<= 64;
  r += static_cast<std::uint64_t>(magnitude);
  return negative ? mp::cpp_int(-r) : r;
}

using detail::format;
using detail::format_of;

// m * 2^q, a value representable in T (m < 2^p, the exponent in range), built exactly. Every such value of the 16-
// and 32-bit formats is a float, and every such double is produced exactly by ldexp (no rounding: it is representable).
template <floating_input T>
T make_value(bool negative, std::uint64_t m, int q) {
  const double magnitude = std::ldexp(static_cast<double>(m), q);  // m < 2^53: exact
  const double value = negative ? -magnitude : magnitude;
  if constexpr (std::same_as<T, double>) {
    return value;
  } else if constexpr (std::same_as<T, float>) {
    return static_cast<float>(value);  // representable: exact
  } else {
    return T::from_float(static_cast<float>(value));  // representable in T, hence in float: both steps exact
  }
}

template <floating_input T>
T signed_zero(bool negative) {
  return make_value<T>(negative, 0, 0);  // ldexp(0, 0) = +0; negated: -0
}

}  // namespace

void exact_sum::add_double(double x) {
  ++count_;
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const bool negative = (bits >> 63) != 0;
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  if (!(negative && (bits << 1) == 0)) only_negative_zeros_ = false;
  if (biased_exponent == 0x7ff) {
    if (fraction != 0)
      has_nan_ = true;
    else if (negative)
      has_negative_infinity_ = true;
    else
      has_positive_infinity_ = true;
    return;
  }
  // Normal: (2^52 + fraction) * 2^(E - 1075); subnormal (E = 0): fraction * 2^(1 - 1075). Bucket b = max(E, 1) - 1
  // holds weight 2^(b - 1074).
  const std::int64_t significand =
      static_cast<std::int64_t>(biased_exponent == 0 ? fraction : (fraction | (std::uint64_t{1} << 52)));
  const int bucket = (biased_exponent == 0 ? 1 : biased_exponent) - 1;
  buckets_[bucket] += negative ? -significand : significand;
}

void exact_sum::merge(const exact_sum& other) {
  for (int b = 0; b < bucket_count; ++b) buckets_[b] += other.buckets_[b];
  count_ += other.count_;
  has_nan_ = has_nan_ || other.has_nan_;
  has_positive_infinity_ = has_positive_infinity_ || other.has_positive_infinity_;
  has_negative_infinity_ = has_negative_infinity_ || other.has_negative_infinity_;
  only_negative_zeros_ = only_negative_zeros_ && other.only_negative_zeros_;
}

mp::cpp_int exact_sum::scaled() const {
  mp::cpp_int total = 0;
  for (int b = 0; b < bucket_count; ++b) {
    if (buckets_[b] != 0) total += to_cpp_int(buckets_[b]) << b;
  }
  return total;
}

int exact_sum::sign() const {
  const mp::cpp_int s = scaled();
  return s.sign();
}

template <floating_input T>
T exact_sum::rounded() const {
  if (has_nan_ || (has_positive_infinity_ && has_negative_infinity_)) return canonical_nan<T>();
  if (has_positive_infinity_) return signed_infinity<T>(false);
  if (has_negative_infinity_) return signed_infinity<T>(true);

  const mp::cpp_int s = scaled();
  if (s == 0) return signed_zero<T>(only_negative_zeros_);
  const bool negative = s < 0;
  const mp::cpp_int magnitude = negative ? mp::cpp_int(-s) : s;

  // |s| = magnitude * 2^-1074. Its leading bit has weight 2^e with e = msb - 1074. The result's quantum (the weight of
  // its last significand bit) is 2^q, q = max(e, emin) - (p - 1): p bits for a normal result, fewer below 2^emin.
  constexpr format f = format_of<T>();
  const int e = static_cast<int>(mp::msb(magnitude)) - scale_exponent;
  int q = (e > f.emin ? e : f.emin) - (f.precision - 1);
  const int shift = q + scale_exponent;  // >= 0 for every format: the smallest quantum is 2^-1074 (double)

  // Round to nearest, ties to even: keep the bits above the quantum, then look at the guard bit (the first one
  // dropped) and the sticky bit (any later one).
  std::uint64_t m = static_cast<std::uint64_t>(magnitude >> shift);
  if (shift > 0) {
    const bool guard = mp::bit_test(magnitude, static_cast<unsigned>(shift - 1));
    const bool sticky = shift > 1 && static_cast<int>(mp::lsb(magnitude)) < shift - 1;
    if (guard && (sticky || (m & 1) != 0)) ++m;
  }
  if (m == (std::uint64_t{1} << f.precision)) {  // rounding carried into a new binade
    m >>= 1;
    ++q;
  }
  // The result m * 2^q has its leading bit at q + p - 1 (or lower, for subnormals); past emax it is an overflow. This
  // includes the tie at MAX + ulp(MAX)/2, which rounds up to 2^(emax+1).
  if (q + f.precision - 1 > f.emax) return signed_infinity<T>(negative);
  return make_value<T>(negative, m, q);
}

std::string exact_sum::to_decimal(int significant_digits) const {
  if (significant_digits < 1) throw std::invalid_argument("to_decimal: significant_digits must be at least 1");
  const mp::cpp_int s = scaled();
  if (s == 0) return "0";
  // s * 2^-1074 = (s * 5^1074) * 10^-1074: an exact decimal integer D times a power of ten.
  mp::cpp_int five_power = mp::pow(mp::cpp_int(5), scale_exponent);
  const bool negative = s < 0;
  const mp::cpp_int decimal = (negative ? mp::cpp_int(-s) : s) * five_power;
  std::string digits = decimal.str();
  int exponent = static_cast<int>(digits.size()) - 1 - scale_exponent;
  if (static_cast<int>(digits.size()) > significant_digits) {
    // Round half to even on the exact digit string.
    const std::string kept = digits.substr(0, significant_digits);
    const char first_dropped = digits[significant_digits];
    const bool rest_nonzero = digits.find_first_not_of('0', significant_digits + 1) != std::string::npos;
    const bool last_odd = ((kept.back() - '0') & 1) != 0;
    const bool round_up = first_dropped > '5' || (first_dropped == '5' && (rest_nonzero || last_odd));
    mp::cpp_int head(kept);
    if (round_up) ++head;
    digits = head.str();
    if (static_cast<int>(digits.size()) > significant_digits) {  // 999.. rounded up to 1000..
      digits.pop_back();
      ++exponent;
    }
  }
  std::string out = negative ? "-" : "";
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += 'e';
  out += exponent < 0 ? '-' : '+';
  const std::string exponent_digits = std::to_string(exponent < 0 ? -exponent : exponent);
  out += exponent_digits.size() < 2 ? "0" + exponent_digits : exponent_digits;
  return out;
}

template half exact_sum::rounded<half>() const;
template bfloat16 exact_sum::rounded<bfloat16>() const;
template float exact_sum::rounded<float>() const;
template double exact_sum::rounded<double>() const;

}  // namespace detred::verify
