// What detred needs to know about each floating-point input type: its bits, its exact widening, its NaN.
//
// Supported inputs: half (binary16), bfloat16, float (binary32), double (binary64).
// Supported accumulation types: float and double. A pair (input, accumulation) is supported when widening the input
// to the accumulation type is exact; narrowing (double into float) is rejected at compile time, because it would
// round every term before the sum and void every bound detred states.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "detred/config.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/half.hpp"

namespace detred {

template <class T>
concept floating_input =
    std::same_as<T, half> || std::same_as<T, bfloat16> || std::same_as<T, float> || std::same_as<T, double>;

template <class A>
concept floating_accumulation = std::same_as<A, float> || std::same_as<A, double>;

template <class T>
struct float_traits;

template <>
struct float_traits<half> {
  using bits_type = std::uint16_t;
  static constexpr int precision = 11;      // p: significand bits including the hidden one
  static constexpr int min_exponent = -14;  // emin: exponent of the smallest normal binade
  static constexpr int max_exponent = 15;   // emax: exponent of the largest binade
  static constexpr const char* name = "f16";
};
template <>
struct float_traits<bfloat16> {
  using bits_type = std::uint16_t;
  static constexpr int precision = 8;
  static constexpr int min_exponent = -126;
  static constexpr int max_exponent = 127;
  static constexpr const char* name = "bf16";
};
template <>
struct float_traits<float> {
  using bits_type = std::uint32_t;
  static constexpr int precision = 24;
  static constexpr int min_exponent = -126;
  static constexpr int max_exponent = 127;
  static constexpr const char* name = "f32";
};
template <>
struct float_traits<double> {
  using bits_type = std::uint64_t;
  static constexpr int precision = 53;
  static constexpr int min_exponent = -1022;
  static constexpr int max_exponent = 1023;
  static constexpr const char* name = "f64";
};

// True when every value of In is exactly representable in Acc.
template <class In, class Acc>
inline constexpr bool widens_exactly = float_traits<In>::precision <= float_traits<Acc>::precision;

template <class In, class Acc>
concept accumulable = floating_input<In> && floating_accumulation<Acc> && widens_exactly<In, Acc>;

// The accumulation type detred uses when the caller names none: float for 16-bit inputs, else the input type.
template <floating_input T>
using default_accumulation_t = std::conditional_t<(sizeof(T) == 2), float, T>;

// Exact conversion of an input value to an accumulation type.
template <class Acc, class In>
requires accumulable<In, Acc>
constexpr DETRED_HD Acc widen(In x) {
  if constexpr (std::same_as<In, half> || std::same_as<In, bfloat16>) {
    return static_cast<Acc>(x.to_float());
  } else {
    return static_cast<Acc>(x);
  }
}

// The bit pattern of a value: what "bitwise identical" compares.
template <floating_input T>
constexpr DETRED_HD typename float_traits<T>::bits_type bits_of(T x) {
  return detred::bit_cast<typename float_traits<T>::bits_type>(x);
}

template <floating_input T>
constexpr DETRED_HD bool is_nan(T x) {
  if constexpr (std::same_as<T, half>)
    return (x.bits & 0x7fffu) > 0x7c00u;
  else if constexpr (std::same_as<T, bfloat16>)
    return (x.bits & 0x7fffu) > 0x7f80u;
  else
    return x != x;
}

// The one NaN detred returns: positive sign, quiet bit set, zero payload. Backends disagree on NaN payloads (x86
// keeps the first operand's, CUDA returns its own), so every floating result that is NaN is replaced by this one,
// which keeps NaN results bitwise identical across runs, backends and devices.
template <floating_input T>
constexpr DETRED_HD T canonical_nan() {
  if constexpr (std::same_as<T, half>)
    return half::from_bits(0x7e00u);
  else if constexpr (std::same_as<T, bfloat16>)
    return bfloat16::from_bits(0x7fc0u);
  else if constexpr (std::same_as<T, float>)
    return detred::bit_cast<float>(std::uint32_t{0x7fc00000u});
  else
    return detred::bit_cast<double>(std::uint64_t{0x7ff8000000000000ull});
}

template <floating_input T>
constexpr DETRED_HD T canonicalize_nan(T x) {
  return is_nan(x) ? canonical_nan<T>() : x;
}

// +-0, +-Inf of each accumulation type, spelled once.
template <floating_accumulation A>
constexpr DETRED_HD A negative_zero() {
  return -A(0);
}
template <floating_accumulation A>
constexpr DETRED_HD A infinity() {
  return std::numeric_limits<A>::infinity();
}

// +Inf or -Inf of any input type (16-bit types by their bit patterns).
template <floating_input T>
constexpr T signed_infinity(bool negative) {
  if constexpr (std::same_as<T, half>)
    return half::from_bits(negative ? 0xfc00u : 0x7c00u);
  else if constexpr (std::same_as<T, bfloat16>)
    return bfloat16::from_bits(negative ? 0xff80u : 0x7f80u);
  else
    return negative ? -infinity<T>() : infinity<T>();
}

// |x| (the sign bit cleared, NaN included), in host and device code alike.
template <floating_accumulation A>
constexpr DETRED_HD A magnitude(A x) {
  if constexpr (std::same_as<A, float>) {
    return __builtin_fabsf(x);
  } else {
    return __builtin_fabs(x);
  }
}

template <floating_accumulation A>
constexpr DETRED_HD bool is_finite(A x) {
  // Written without <cmath> or numeric_limits so that it runs in device code too; false for +-Inf and NaN. The
  // magnitude compare is one instruction on the GPU (an absolute-value operand), where x <= max && x >= -max is two.
  return magnitude(x) <= (std::same_as<A, float> ? A(__FLT_MAX__) : A(__DBL_MAX__));
}

}  // namespace detred
