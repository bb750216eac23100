// Inputs and checks shared by the tests of the row family's gradients (tests/rows/test_norm_backward_*.cpp,
// test_softmax_*.cpp): values in a range, rounded to T; the rounding bound of an output of type T; bitwise comparison
// of two rows' outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "detred/types/bfloat16.hpp"
#include "detred/types/float_traits.hpp"
#include "detred/types/half.hpp"
#include "tests/support/type_pairs.hpp"

namespace detred::test {

// n values uniform in [lo, hi), rounded to T (nearest even).
template <class T>
std::vector<T> values_in(std::size_t n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> x(n);
  for (auto& e : x) e = make<T>(u(rng));
  return x;
}

// The error of rounding a float result near `reference` to T: half an ulp of T relative (counted as a whole ulp:
// 2^-7 for bfloat16, 2^-10 for half), plus half's smallest subnormal for results in its subnormal range; 0 for float.
template <class T>
long double output_rounding(long double reference) {
  if constexpr (std::is_same_v<T, bfloat16>)
    return std::fabs(reference) * 0x1p-7L;
  else if constexpr (std::is_same_v<T, half>)
    return std::fabs(reference) * 0x1p-10L + 0x1p-24L;
  else
    return 0;
}

// The depth of a canonical tree over n leaves plus one: ceil(log2 n) + 2.
inline long double tree_depth(std::uint64_t n) { return std::ceil(std::log2(double(n < 1 ? 1 : n))) + 2; }

template <class T>
long double widened_value(T x) {
  return static_cast<long double>(widen<float>(x));
}

// Index of the first element whose bits differ (sizes must match), or -1.
template <class T>
long long first_bit_difference(const T* a, const T* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (bits_of(a[i]) != bits_of(b[i])) return static_cast<long long>(i);
  return -1;
}

}  // namespace detred::test
