// Inputs for the exact sum's tests (CPU and GPU share them, so GPU == CPU is checked on the very same data): the
// issue's four data sets (uniform, normal, full range, ill-conditioned) and hand-made edge cases.
#pragma once

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
