// Non-commutative associative operators for the generic reduce and scan properties, each with its identity, a way to
// make the i-th input from a seed, and equality. Integer arithmetic wraps modulo 2^64, so every operator is exactly
// associative and a sequential left-to-right fold is the reference for any association.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <ostream>
#include <string>

namespace detred::test {

// A well-mixed 64-bit value from (seed, i) (splitmix64's finaliser).
inline std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// 2x2 matrices over the integers modulo 2^64, multiplied.
struct matrix2 {
  std::array<std::uint64_t, 4> a{1, 0, 0, 1};  // row-major
  friend bool operator==(const matrix2&, const matrix2&) = default;
};
struct matrix_product {
  static constexpr const char* name = "2x2 integer matrix product";
  using value = matrix2;
  static value identity() { return {}; }
  static value make(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t r = mix(seed, i);
    return {{r & 7, (r >> 3) & 7, (r >> 6) & 7, (r >> 9) & 7}};
  }
  value operator()(const value& l, const value& r) const {
    return {{l.a[0] * r.a[0] + l.a[1] * r.a[2], l.a[0] * r.a[1] + l.a[1] * r.a[3], l.a[2] * r.a[0] + l.a[3] * r.a[2],
             l.a[2] * r.a[1] + l.a[3] * r.a[3]}};
  }
};

// Affine maps x -> m x + c modulo 2^64; combine(f, g) = "f, then g" = g o f.
struct affine_map {
  std::uint64_t m = 1, c = 0;
  friend bool operator==(const affine_map&, const affine_map&) = default;
};
struct affine_composition {
  static constexpr const char* name = "affine-map composition";
  using value = affine_map;
  static value identity() { return {}; }
  static value make(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t r = mix(seed, i);
    return {r % 5 + 1, (r >> 8) % 11};
  }
  value operator()(const value& f, const value& g) const { return {g.m * f.m, g.m * f.c + g.c}; }
};

// Strings, concatenated.
struct string_concatenation {
  static constexpr const char* name = "string concatenation";
  using value = std::string;
  static value identity() { return {}; }
  static value make(std::uint64_t seed, std::uint64_t i) {
    const std::uint64_t r = mix(seed, i);
    return std::string(1 + r % 2, static_cast<char>('a' + (r >> 8) % 26));
  }
  value operator()(const value& l, const value& r) const { return l + r; }
};

// Maximum segment sum (the largest sum of a non-empty contiguous run): the classic non-commutative monoid of
// (total, best prefix, best suffix, best segment). The identity uses a "minus infinity" far below any reachable sum.
struct segment {
  std::int64_t total = 0, prefix = 0, suffix = 0, best = 0;
  friend bool operator==(const segment&, const segment&) = default;
};
struct maximum_segment_sum {
  static constexpr const char* name = "maximum segment sum";
  using value = segment;
  static constexpr std::int64_t minus_infinity = -(std::int64_t{1} << 50);
  static value identity() { return {0, minus_infinity, minus_infinity, minus_infinity}; }
  static value make(std::uint64_t seed, std::uint64_t i) {
    const std::int64_t v = static_cast<std::int64_t>(mix(seed, i) % 201) - 100;
    return {v, v, v, v};
  }
  value operator()(const value& l, const value& r) const {
    return {l.total + r.total, std::max(l.prefix, l.total + r.prefix), std::max(r.suffix, r.total + l.suffix),
            std::max({l.best, r.best, l.suffix + r.prefix})};
  }
};

inline std::ostream& operator<<(std::ostream& os, const matrix2& m) {
  return os << "[[" << m.a[0] << ", " << m.a[1] << "], [" << m.a[2] << ", " << m.a[3] << "]]";
}
inline std::ostream& operator<<(std::ostream& os, const affine_map& f) { return os << f.m << " x + " << f.c; }
inline std::ostream& operator<<(std::ostream& os, const segment& s) {
  return os << "{total " << s.total << ", prefix " << s.prefix << ", suffix " << s.suffix << ", best " << s.best << "}";
}

}  // namespace detred::test
