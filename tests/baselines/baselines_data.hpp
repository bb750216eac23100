// Inputs on which summation order shows: signed values whose magnitudes spread over 2^-30 .. 2^30, so that most
// reassociations round differently. Deterministic (fixed seed).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "detred/types/float_traits.hpp"

namespace detred::test {

template <class T>
std::vector<T> order_sensitive(std::size_t n, std::uint64_t seed = 15) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::vector<T> xs(n);
  for (auto& x : xs) {
    const double v = std::ldexp(unit(rng), exponent(rng));
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      x = T::from_float(static_cast<float>(std::ldexp(unit(rng), exponent(rng) / 4)));
    } else {
      x = static_cast<T>(v);
    }
  }
  return xs;
}

}  // namespace detred::test
