// min, max, argmin, argmax (reduce.hpp). IEEE 754-2019 minimum/maximum are exact, hence associative and
// commutative: one left-to-right pass gives the only possible bits, whatever the order. int32/int64: plain compares.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "detred/reduce.hpp"

namespace detred::detail {
namespace {

template <class T>
using compare_t = std::conditional_t<(sizeof(T) == 2), float, T>;

template <class T>
bool nan_input(T x) {
  if constexpr (floating_input<T>)
    return is_nan(x);
  else
    return false;
}

template <class T>
bool sign_bit(T x) {
  return (bits_of(x) >> (8 * sizeof(T) - 1)) != 0;
}

// True when x should replace the current best under IEEE minimum (want_min) or maximum, NaNs excluded by the caller:
// a strictly better value, or the better-signed zero (-0 for minimum, +0 for maximum).
template <class T>
bool better(T x, T best, bool want_min) {
  if constexpr (!floating_input<T>) {
    return want_min ? x < best : x > best;
  } else {
    const compare_t<T> v = widen<compare_t<T>>(x);
    const compare_t<T> b = widen<compare_t<T>>(best);
    if (want_min ? v < b : v > b) return true;
    return v == 0 && b == 0 && sign_bit(x) == want_min && sign_bit(best) != want_min;
  }
}

template <class T>
T extremum(const T* x, std::size_t n, bool want_min) {
  T best;
  if constexpr (floating_input<T>)
    best = signed_infinity<T>(!want_min);
  else
    best = want_min ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (floating_input<T>)
      if (is_nan(x[i])) return canonical_nan<T>();
    if (better(x[i], best, want_min)) best = x[i];
  }
  return best;
}

template <class T>
std::size_t arg_extremum(const T* x, std::size_t n, bool want_min) {
  if (n == 0) return 0;
  std::size_t best = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (nan_input(x[i])) return i;
    if (i > 0 && better(x[i], x[best], want_min)) best = i;
  }
  return best;
}

}  // namespace

template <class T>
T min_n(const T* data, std::size_t n) {
  return extremum(data, n, true);
}
template <class T>
T max_n(const T* data, std::size_t n) {
  return extremum(data, n, false);
}
template <class T>
std::size_t argmin_n(const T* data, std::size_t n) {
  return arg_extremum(data, n, true);
}
template <class T>
std::size_t argmax_n(const T* data, std::size_t n) {
  return arg_extremum(data, n, false);
}

#define DETRED_INSTANTIATE_EXTREMA(T)                      \
  template T min_n<T>(const T*, std::size_t);              \
  template T max_n<T>(const T*, std::size_t);              \
  template std::size_t argmin_n<T>(const T*, std::size_t); \
  template std::size_t argmax_n<T>(const T*, std::size_t);
DETRED_INSTANTIATE_EXTREMA(half)
DETRED_INSTANTIATE_EXTREMA(bfloat16)
DETRED_INSTANTIATE_EXTREMA(float)
DETRED_INSTANTIATE_EXTREMA(double)
DETRED_INSTANTIATE_EXTREMA(std::int32_t)
DETRED_INSTANTIATE_EXTREMA(std::int64_t)
#undef DETRED_INSTANTIATE_EXTREMA

}  // namespace detred::detail
