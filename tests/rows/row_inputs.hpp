// Inputs for the row and column reduction tests: random matrices with values over many binades, special values on
// request, and the row lengths around every tile boundary of the GPU's row reduction.
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

// n values in +-[2^-12, 2^12) (for half: +-[2^-6, 2^6)), random signs; with `specials`, about one in 50 is replaced by
// one of +-0, +-Inf, NaN, a subnormal or the largest finite value.
template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed, bool specials = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  const int spread = std::is_same_v<T, half> ? 6 : 12;
  std::vector<T> x(n);
  for (auto& e : x) {
    double v = std::ldexp(u(rng), int(rng() % (2 * spread)) - spread) * ((rng() & 1) ? -1.0 : 1.0);
    if (specials && rng() % 50 == 0) {
      const double max = std::is_same_v<T, half> ? 65504.0 : std::is_same_v<T, bfloat16> ? 0x1.fep127 : 0x1.fffffep127;
      const double sub = std::is_same_v<T, half> ? 0x1p-24 : std::is_same_v<T, bfloat16> ? 0x1p-133 : 0x1p-149;
      switch (rng() % 7) {
        case 0:
          v = 0.0;
          break;
        case 1:
          v = -0.0;
          break;
        case 2:
          v = INFINITY;
          break;
        case 3:
          v = -INFINITY;
          break;
        case 4:
          v = NAN;
          break;
        case 5:
          v = sub * double(1 + rng() % 3);
          break;
        default:
          v = (rng() & 1) ? max : -max;
          break;
      }
    }
    e = make<T>(v);
  }
  return x;
}

// Row lengths that cross every boundary of the row reduction for input type T: 0 .. 3 segments one by one, then
// around each multiple of the segment (32 V elements) up to 2 tiles, and around 1, 2, 3 tiles.
template <class T>
std::vector<std::int32_t> boundary_lengths() {
  constexpr int V = int(16 / sizeof(T));
  const int segment = 32 * V, tile = 1024 * V;
  std::vector<std::int32_t> n;
  for (int i = 0; i <= 3 * segment + 1; ++i) n.push_back(i);
  for (int m = 4 * segment; m <= 2 * tile; m += segment)
    for (int d : {-V - 1, -1, 0, 1, V + 1}) n.push_back(m + d);
  for (int t : {1, 2, 3})
    for (int d : {-segment - 1, -V, -1, 0, 1, 7, V, segment + 3}) n.push_back(t * tile + d);
  return n;
}

}  // namespace detred::test
