// Ties of zeros of both signs for every extremum (min, max, argmin, argmax, row max), host only so that the CPU and
// the GPU tests use the same cases. IEEE 754-2019 minimum/maximum order -0 below +0; argmin/argmax return the lowest
// index among equal best elements, where -0 and +0 are not equal. The expected results come from a direct reading of
// that rule (a key that splits the zeros by sign), independent of detred's comparison code.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "detred/types/float_traits.hpp"
#include "tests/support/type_pairs.hpp"

namespace detred::test {

template <class T>
struct zero_tie_case {
  std::string name;
  std::vector<T> x;
};

// The sort key of IEEE 754-2019 minimum/maximum for non-NaN x: the value, then the sign of a zero (-0 < +0).
template <class T>
bool ieee_less(T a, T b) {
  const double va = double(widen<float>(a)), vb = double(widen<float>(b));
  if (va != vb) return va < vb;
  const bool na = (bits_of(a) >> (8 * sizeof(T) - 1)) != 0, nb = (bits_of(b) >> (8 * sizeof(T) - 1)) != 0;
  return na && !nb;
}
template <>
inline bool ieee_less<double>(double a, double b) {
  if (a != b) return a < b;
  return std::signbit(a) && !std::signbit(b);
}

template <class T>
std::size_t reference_argmin(const std::vector<T>& x) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (ieee_less(x[i], x[best])) best = i;
  return best;
}
template <class T>
std::size_t reference_argmax(const std::vector<T>& x) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (ieee_less(x[best], x[i])) best = i;
  return best;
}

// Zeros of both signs in every arrangement that decides a tie: all-zero arrays of each sign pattern up to length 4;
// then {-1, +0, -0} and its mirror {+1, -0, +0} in every order; then long arrays (lengths around 8, 16, 32, 64, 256
// and 1000, so that any blocked or vectorised pass meets the tie inside a block and across blocks) of -1 or +1 with
// one zero of each sign at the first, a middle and the last position, in both orders.
template <class T>
std::vector<zero_tie_case<T>> zero_tie_cases() {
  const T pz = make<T>(0.0), nz = make<T>(-0.0), one = make<T>(1.0), minus_one = make<T>(-1.0);
  std::vector<zero_tie_case<T>> cases;
  for (std::size_t n = 1; n <= 4; ++n)
    for (unsigned pattern = 0; pattern < (1u << n); ++pattern) {
      zero_tie_case<T> c{"zeros " + std::to_string(n) + " pattern " + std::to_string(pattern), {}};
      for (std::size_t i = 0; i < n; ++i) c.x.push_back((pattern >> i) & 1 ? nz : pz);
      cases.push_back(c);
    }
  const T triple[3] = {minus_one, pz, nz}, mirror[3] = {one, nz, pz};
  const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& o : orders) {
    cases.push_back({"{-1, +0, -0} order " + std::to_string(o[0]) + std::to_string(o[1]) + std::to_string(o[2]),
                     {triple[o[0]], triple[o[1]], triple[o[2]]}});
    cases.push_back({"{+1, -0, +0} order " + std::to_string(o[0]) + std::to_string(o[1]) + std::to_string(o[2]),
                     {mirror[o[0]], mirror[o[1]], mirror[o[2]]}});
  }
  for (std::size_t n : {7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u, 255u, 256u, 257u, 1000u})
    for (bool above : {false, true})
      for (std::size_t first : {std::size_t{0}, n / 2, n - 2})
        for (bool negative_first : {false, true}) {
          zero_tie_case<T> c{std::to_string(n) + (above ? " x +1" : " x -1") + ", zeros at " + std::to_string(first) +
                                 (negative_first ? " (-0 first)" : " (+0 first)"),
                             std::vector<T>(n, above ? one : minus_one)};
          const std::size_t second = first == n - 2 ? n - 1 : n - 1 - first / 3;
          c.x[first] = negative_first ? nz : pz;
          c.x[second] = negative_first ? pz : nz;
          cases.push_back(c);
        }
  return cases;
}

}  // namespace detred::test
