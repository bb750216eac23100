// Independent references for the tests: written from the definitions in docs/ORDER.md and docs/ACCURACY.md, sharing
// no code with the implementations they check.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "detred/types/float_traits.hpp"

namespace detred::test {

// The canonical order straight from its definition: complete trees over the blocks of n's binary digits, left-folded.
template <class V>
V tree_reference(const std::vector<V>& x, std::size_t a, std::size_t size, const std::function<V(V, V)>& op) {
  if (size == 1) return x[a];
  return op(tree_reference(x, a, size / 2, op), tree_reference(x, a + size / 2, size / 2, op));
}
template <class V>
V canonical_reference(const std::vector<V>& x, std::size_t n, const std::function<V(V, V)>& op, V identity) {
  if (n == 0) return identity;
  bool first = true;
  V acc{};
  std::size_t start = 0;
  for (int k = 63; k >= 0; --k) {
    const std::size_t size = std::size_t{1} << k;
    if (!(n & size)) continue;
    V block = tree_reference(x, start, size, op);
    acc = first ? block : op(acc, block);
    first = false;
    start += size;
  }
  return acc;
}

template <class T>
std::uint64_t bits(T x) {
  return static_cast<std::uint64_t>(detred::bits_of(x));
}

// Exact sum of values that are all integer multiples of 2^-scale with |sum| * 2^scale < 2^126: in __int128, then
// correctly rounded once to A (libgcc's int128 -> float/double conversions round to nearest even), then scaled by
// 2^-scale (exact while the result stays normal, which the generators below guarantee).
__extension__ typedef __int128 int128;

template <class A, class V>
A exact_fixed_point_sum(const std::vector<V>& x, int scale) {
  int128 total = 0;
  for (V v : x) {
    const double d = static_cast<double>(v);
    total += static_cast<int128>(std::ldexp(d, scale));  // exact: d * 2^scale is an integer below 2^113
  }
  return std::ldexp(static_cast<A>(total), -scale);
}
template <class V>
double abs_sum(const std::vector<V>& x) {
  long double s = 0;
  for (V v : x) s += std::fabs(static_cast<long double>(v));
  return static_cast<double>(s);
}

// Random values m * 2^e with full-precision significands and e in [-spread, spread]: every one a multiple of
// 2^-(spread + p - 1); random signs give heavy cancellation when `cancel` is set.
template <class V>
std::vector<V> random_fixed_range(std::size_t n, int spread, std::uint64_t seed, bool cancel) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> exponent(-spread, spread);
  std::uniform_real_distribution<double> significand(1.0, 2.0);
  std::vector<V> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    V v = static_cast<V>(std::ldexp(significand(rng), exponent(rng)));
    if (cancel ? (rng() & 1) : false) v = -v;
    x[i] = v;
  }
  return x;
}

}  // namespace detred::test
