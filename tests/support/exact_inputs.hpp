// Inputs for the exact sum's tests (CPU and GPU share them, so GPU == CPU is checked on the very same data): the
// issue's four data sets (uniform, normal, full range, ill-conditioned) and hand-made edge cases.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "detred/types/float_traits.hpp"
#include "detred/verify/generators.hpp"

namespace detred::test {

template <floating_input T>
T from_raw_bits(std::uint64_t b) {
  using B = typename float_traits<T>::bits_type;
  if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>)
    return T::from_bits(B(b));
  else
    return detred::bit_cast<T>(B(b));
}

// Full range: random sign, exponent field uniform over every finite binade (field 0: the subnormals), random fraction.
template <floating_input T>
std::vector<T> full_range(std::size_t n, std::uint64_t seed) {
  using traits = float_traits<T>;
  constexpr int bits = int(sizeof(typename traits::bits_type) * 8), p = traits::precision;
  constexpr std::uint64_t fields = (std::uint64_t{1} << (bits - p)) - 1;  // 0 .. all-ones - 1
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (auto& v : x) {
    const std::uint64_t r = rng();
    const std::uint64_t field = rng() % fields;
    const std::uint64_t fraction = r & ((std::uint64_t{1} << (p - 1)) - 1);
    const std::uint64_t sign = (r >> 63) & 1;
    v = from_raw_bits<T>((sign << (bits - 1)) | (field << (p - 1)) | fraction);
  }
  return x;
}

// Terms around the GPU fast path's window (docs/EXACT.md "On the GPU"): exponent fields top - k for k at and next to
// the window's width (24 binades for the binary32 family, whose binary16 and bfloat16 terms are widened to binary32;
// 56 for binary64), so that some terms sit exactly at the window's bottom and some just below it; subnormals, zeros
// and -0.0 among them; and, in the second half, terms one or two binades above `top`, which move the window up.
// Random signs and fractions.
template <floating_input T>
std::vector<T> window_boundary_data(std::size_t n, std::uint64_t seed) {
  using traits = float_traits<T>;
  constexpr int bits = int(sizeof(typename traits::bits_type) * 8), p = traits::precision;
  constexpr int largest_field = (1 << (bits - p)) - 2;
  constexpr int bias = (1 << (bits - p - 1)) - 1;
  constexpr int window = std::same_as<T, double> ? 56 : 24;
  constexpr int top = largest_field - 2 < bias + 10 ? largest_field - 2 : bias + 10;
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng(), r2 = rng();
    int field = top;
    switch (r2 % 10) {
      case 0:
      case 1:
      case 2:
      case 3:
        field = top;
        break;
      case 4:
        field = top - 1;
        break;
      case 5:
        field = top - (window - 1);
        break;
      case 6:
        field = top - window;
        break;
      case 7:
        field = top - (window + 1);
        break;
      case 8:
        field = (r2 >> 8) % 4 == 0 ? top - (window + 2) : 0;
        break;  // subnormal or zero when the fraction is 0
      default:
        field = i >= n / 2 ? top + 1 + int((r2 >> 8) % 2) : top - 2;
        break;
    }
    if (field < 0) field = 0;
    std::uint64_t fraction = r & ((std::uint64_t{1} << (p - 1)) - 1);
    if (field == 0 && (r2 >> 12) % 3 == 0) fraction = 0;  // +0.0 or -0.0
    const std::uint64_t sign = (r >> 63) & 1;
    x[i] = from_raw_bits<T>((sign << (bits - 1)) | (std::uint64_t(field) << (p - 1)) | fraction);
  }
  return x;
}

// Pairs x, -x in random order (their fast-path sum cancels to exactly zero: the result is +0.0), or -0.0 only.
template <floating_input T>
std::vector<T> cancelling_pairs(std::size_t pairs, std::uint64_t seed, bool negative_zeros_only) {
  using traits = float_traits<T>;
  constexpr int bits = int(sizeof(typename traits::bits_type) * 8), p = traits::precision;
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  std::vector<T> x;
  x.reserve(2 * pairs);
  if (negative_zeros_only) {
    x.assign(2 * pairs, from_raw_bits<T>(sign));
    return x;
  }
  std::vector<T> g = full_range<T>(pairs, seed);
  std::mt19937_64 rng(seed + 1);
  for (std::size_t i = 0; i < pairs; ++i) {
    // A narrow exponent range (the fast path) for most pairs, the full range for the rest.
    std::uint64_t b = std::uint64_t(bits_of(g[i])) & ~sign;
    if (rng() % 8 != 0) {
      const std::uint64_t field = std::uint64_t((1 << (bits - p - 1)) - 1 - int(rng() % 8));
      b = (b & ((std::uint64_t{1} << (p - 1)) - 1)) | (field << (p - 1));
    }
    x.push_back(from_raw_bits<T>(b));
    x.push_back(from_raw_bits<T>(b | sign));
  }
  std::shuffle(x.begin(), x.end(), rng);
  return x;
}

enum class exact_dataset { uniform, normal, full_range, ill };
inline const char* name_of(exact_dataset d) {
  switch (d) {
    case exact_dataset::uniform:
      return "uniform";
    case exact_dataset::normal:
      return "normal";
    case exact_dataset::full_range:
      return "full_range";
    case exact_dataset::ill:
      return "ill";
  }
  return "?";
}
inline constexpr exact_dataset all_exact_datasets[] = {exact_dataset::uniform, exact_dataset::normal,
                                                       exact_dataset::full_range, exact_dataset::ill};

template <floating_input T>
std::vector<T> exact_data(exact_dataset d, std::size_t n, std::uint64_t seed) {
  switch (d) {
    case exact_dataset::uniform:
      return verify::generate<T>({verify::distribution::uniform, n, seed});
    case exact_dataset::normal:
      return verify::generate<T>({verify::distribution::normal, n, seed});
    case exact_dataset::full_range:
      return full_range<T>(n, seed);
    case exact_dataset::ill:
      return verify::generate<T>({verify::distribution::ill, n, seed, 1e30});
  }
  return {};
}

// Hand-made edge cases, each a named vector (the exact reference gives the expected bits).
template <floating_input T>
std::vector<std::pair<std::string, std::vector<T>>> exact_edge_cases() {
  using traits = float_traits<T>;
  constexpr int bits = int(sizeof(typename traits::bits_type) * 8), p = traits::precision;
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  const std::uint64_t inf = ((std::uint64_t{1} << (bits - p)) - 1) << (p - 1);
  const std::uint64_t max = inf - 1, min_normal = std::uint64_t{1} << (p - 1), tiny = 1;
  const std::uint64_t one = std::uint64_t(-traits::min_exponent + 1) << (p - 1);  // exponent field of 1.0
  auto v = [](std::uint64_t b) { return from_raw_bits<T>(b); };
  std::vector<std::pair<std::string, std::vector<T>>> c;
  c.push_back({"empty", {}});
  c.push_back({"-0", {v(sign)}});
  c.push_back({"-0 -0", {v(sign), v(sign)}});
  c.push_back({"-0 +0", {v(sign), v(0)}});
  c.push_back({"x - x", {v(one), v(one | sign)}});
  c.push_back({"-x + x", {v(one | sign), v(one)}});
  c.push_back({"max max -max", {v(max), v(max), v(max | sign)}});
  c.push_back({"max max", {v(max), v(max)}});
  c.push_back({"-max -max", {v(max | sign), v(max | sign)}});
  c.push_back({"tiny x3", {v(tiny), v(tiny), v(tiny)}});
  c.push_back({"tiny - tiny", {v(tiny), v(tiny | sign)}});
  c.push_back({"min normal - tiny", {v(min_normal), v(tiny | sign)}});
  c.push_back({"1 + tiny", {v(one), v(tiny)}});
  c.push_back({"1 - tiny", {v(one), v(tiny | sign)}});
  c.push_back({"max + tiny", {v(max), v(tiny)}});
  c.push_back({"nan", {v(one), v(inf | 1)}});
  c.push_back({"-nan", {v(sign | inf | 1), v(one)}});
  c.push_back({"inf", {v(inf), v(one), v(max)}});
  c.push_back({"-inf", {v(inf | sign), v(max)}});
  c.push_back({"inf - inf", {v(inf), v(inf | sign)}});
  c.push_back({"inf max max", {v(inf), v(max | sign), v(max | sign)}});
  // The tie at the top: MAX + ulp(MAX)/2 rounds to Inf; just below, to MAX. ulp(MAX)/2 = 2^(emax - p).
  {
    const std::uint64_t half_ulp_field = std::uint64_t(traits::max_exponent - p - traits::min_exponent + 1);
    if (half_ulp_field >= 1) {
      const T h = v(half_ulp_field << (p - 1));
      c.push_back({"max + ulp/2 (tie to inf)", {v(max), h}});
      c.push_back({"max + ulp/2 - tiny", {v(max), h, v(tiny | sign)}});
    }
  }
  // A tie to even in the middle: 1 + 2^-p (rounds to 1) and 1 + 2^-p + 2^-(p+? ) (rounds up).
  {
    const std::uint64_t tie_field = std::uint64_t(-traits::min_exponent + 1 - p);
    if (tie_field >= 1) {
      c.push_back({"1 + half ulp (tie, even)", {v(one), v(tie_field << (p - 1))}});
      c.push_back({"1 + half ulp + tiny", {v(one), v(tie_field << (p - 1)), v(tiny)}});
      c.push_back({"(1+ulp) + half ulp (tie, up)", {v(one + 1), v(tie_field << (p - 1))}});
    }
  }
  // Subnormal results from normal terms.
  c.push_back({"subnormal difference", {v(min_normal + 3), v(min_normal | sign), v(tiny)}});
  return c;
}

}  // namespace detred::test
