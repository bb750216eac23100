// RapidCheck generators for the property suites: type pairs, sizes and input vectors that shrink to small
// counterexamples, and the show functions that print them.
//
// Inputs mix several ranges: values near 1, values over (nearly) the whole exponent range of the input type including
// subnormals, vectors with heavy cancellation, and large seeded inputs from detred::verify's generators (uniform,
// normal, lognormal, same-sign, cancellation, ill-conditioned up to 1e30). Explicit vectors shrink element by element
// (towards +1.0: exponent 0, significand 1) and by removing elements; seeded inputs shrink their size and seed.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "detred/properties/make.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"
#include "detred/verify/generators.hpp"

namespace detred {
// How RapidCheck prints 16-bit values in counterexamples (found by argument-dependent lookup).
inline void showValue(half x, std::ostream& os) { os << x.to_float() << "_f16"; }
inline void showValue(bfloat16 x, std::ostream& os) { os << x.to_float() << "_bf16"; }
inline void showValue(sum_method m, std::ostream& os) { os << to_string(m); }
}  // namespace detred

namespace detred::test {

namespace gen = rc::gen;

template <class T>
double as_double(T x) {
  if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>)
    return x.to_float();
  else
    return static_cast<double>(x);
}

// Precision and exponent range of each input type.
template <class T>
struct limits_of {
  static constexpr int precision = float_traits<T>::precision;
  static constexpr int emin = std::same_as<T, half> ? -14 : (std::same_as<T, double> ? -1022 : -126);
  static constexpr int emax = std::same_as<T, half> ? 15 : (std::same_as<T, double> ? 1023 : 127);
  static constexpr int min_subnormal_exponent = emin - precision + 1;
};

// ---- Type pairs -----------------------------------------------------------------------------------------------------

// One of the seven supported (input, accumulation) pairs, drawn at random by each property.
struct type_pair {
  int index = 0;
};
inline const char* type_pair_name(int index) {
  static const char* const names[] = {"half -> float",  "half -> double",  "bfloat16 -> float", "bfloat16 -> double",
                                      "float -> float", "float -> double", "double -> double"};
  return names[index];
}
inline void showValue(type_pair p, std::ostream& os) { os << type_pair_name(p.index); }
inline rc::Gen<type_pair> type_pairs() {
  return gen::map(gen::inRange(0, 7), [](int i) { return type_pair{i}; });
}
// Calls f.template operator()<A, T>() for the pair.
template <class F>
void with_type_pair(type_pair p, F&& f) {
  switch (p.index) {
    case 0:
      return f.template operator()<float, half>();
    case 1:
      return f.template operator()<double, half>();
    case 2:
      return f.template operator()<float, bfloat16>();
    case 3:
      return f.template operator()<double, bfloat16>();
    case 4:
      return f.template operator()<float, float>();
    case 5:
      return f.template operator()<double, float>();
    default:
      return f.template operator()<double, double>();
  }
}

// ---- Sizes ----------------------------------------------------------------------------------------------------------

// The sizes that break reductions: 0, 1, 2, small; powers of two and their neighbours up to 2^18 (complete subtrees,
// chunk and tile boundaries); sizes that are a multiple of no tile; a few large ones; never more than `largest`. A
// category (drawn with weights 4:3:2:1) and a raw number that picks the size inside it: both shrink towards 0, so a
// failing size shrinks across categories down to the smallest that still fails.
inline rc::Gen<std::uint64_t> sizes(std::uint64_t largest = 300000) {
  return gen::apply(
      [largest](int weighted_category, std::uint64_t r) -> std::uint64_t {
        const int category = weighted_category < 4 ? 0 : weighted_category < 7 ? 1 : weighted_category < 9 ? 2 : 3;
        std::uint64_t n = 0;
        switch (category) {
          case 0:
            n = r % 65;
            break;
          case 1:
            n = (std::uint64_t{1} << (1 + r % 18)) + (r / 18) % 3 - 1;  // 2^k - 1, 2^k, 2^k + 1
            break;
          case 2:
            n = 65 + r % (5000 - 65);
            break;
          default:
            n = 5000 + r % 300000;
        }
        return std::min(n, largest);
      },
      gen::inRange(0, 10), gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 40));
}

// ---- Values ---------------------------------------------------------------------------------------------------------

// An exponent in [lo, hi] that shrinks towards the one nearest 0.
inline rc::Gen<int> exponents(int lo, int hi) {
  const int centre = std::clamp(0, lo, hi);
  return gen::apply(
      [=](bool below, int distance) {
        const int e = below ? centre - distance : centre + distance;
        return std::clamp(e, lo, hi);
      },
      gen::arbitrary<bool>(), gen::inRange(0, std::max(centre - lo, hi - centre) + 1));
}

// A finite value of T: +-(1 + f 2^(1-p)) 2^e rounded to T, e in [lo, hi] (below T's normal range the rounding gives
// subnormals). Shrinks towards +1.0.
template <class T>
rc::Gen<T> finite_values(int lo, int hi) {
  constexpr int p = limits_of<T>::precision;
  return gen::apply(
      [](bool negative, int e, std::uint64_t fraction) {
        const double v = std::ldexp(1.0 + std::ldexp(static_cast<double>(fraction), 1 - p), e);
        return make<T>(negative ? -v : v);
      },
      gen::arbitrary<bool>(), exponents(lo, hi), gen::inRange<std::uint64_t>(0, std::uint64_t{1} << (p - 1)));
}

// The exponent range of "wide" inputs of T accumulated in A: from T's smallest subnormal up to where no sum of
// `largest` of them can overflow A.
template <class T, class A>
int wide_top(std::uint64_t largest) {
  const int room = limits_of<A>::emax - 2 - static_cast<int>(std::bit_width(largest));
  return std::min(limits_of<T>::emax - 1, room);
}

// A vector of inputs with where it came from; what a property sums.
template <class T>
struct sample {
  std::vector<T> values;
  std::string origin;  // "explicit", "cancelling" or the generate() call
};

template <class T>
void showValue(const sample<T>& s, std::ostream& os) {
  os << s.origin << ", n = " << s.values.size();
  if (s.values.size() <= 64) {
    os << ": [";
    for (std::size_t i = 0; i < s.values.size(); ++i)
      os << (i ? ", " : "") << std::hexfloat << as_double(s.values[i]) << std::defaultfloat;
    os << "]";
  }
}

template <class T>
rc::Gen<sample<T>> explicit_samples(rc::Gen<T> values, std::string origin) {
  return gen::map(gen::container<std::vector<T>>(std::move(values)), [origin](std::vector<T> v) {
    return sample<T>{std::move(v), origin};
  });
}

// x, then -x_i (1 + d_i) for a few relative perturbations d_i of size about 2^-(p/2): heavy cancellation that
// shrinks with x.
template <class T>
rc::Gen<sample<T>> cancelling_samples(rc::Gen<T> values) {
  constexpr int p = limits_of<T>::precision;
  return gen::apply(
      [](std::vector<T> x, int perturbation_seed) {
        const std::size_t n = x.size();
        for (std::size_t i = 0; i < n; ++i) {
          const double d = std::ldexp(static_cast<double>((perturbation_seed + 7 * int(i)) % 5 - 2), -(p / 2));
          x.push_back(make<T>(-as_double(x[i]) * (1 + d)));
        }
        return sample<T>{std::move(x), "cancelling"};
      },
      gen::container<std::vector<T>>(std::move(values)), gen::inRange(0, 5));
}

// Large inputs from verify::generate (shrinking their size and seed).
template <class T>
rc::Gen<sample<T>> seeded_samples(rc::Gen<std::uint64_t> sizes) {
  using verify::distribution;
  return gen::apply(
      [](distribution d, std::uint64_t n, std::uint64_t seed, int log10_condition) {
        const double condition = std::pow(10.0, log10_condition);
        std::ostringstream origin;
        origin << "generate<" << float_traits<T>::name << ">({" << verify::to_string(d) << ", n = " << n
               << ", seed = " << seed << ", condition = 1e" << log10_condition << "})";
        return sample<T>{verify::generate<T>({d, n, seed, condition}), origin.str()};
      },
      gen::element(distribution::uniform, distribution::normal, distribution::lognormal, distribution::same_sign,
                   distribution::cancel, distribution::ill),
      std::move(sizes), gen::inRange<std::uint64_t>(0, 1000000), gen::inRange(1, 31));
}
template <class T>
rc::Gen<sample<T>> seeded_samples(std::uint64_t largest) {
  return seeded_samples<T>(sizes(largest));
}

// Ties along a summation path: x_0 = +-1, and u (the accumulation type's unit roundoff, half an ulp of 1) at the
// first element of every sibling subtree on x_0's path (the canonical order's, or recursive pairwise's), or at every
// position (the sequential path); zeros elsewhere. Each subtree of the path then sums exactly to u, and every addition
// on the path is a tie that rounds back to the even 1: the error is (number of u's) u, as close to the gamma_k bounds
// as plain summation gets. (Where T cannot hold u, as binary16 for a double accumulation, the u's are zeros.)
template <class T, class A>
rc::Gen<sample<T>> tie_samples(std::uint64_t largest) {
  return gen::apply(
      [](int path, std::uint64_t n, bool negative) {
        const double one = negative ? -1.0 : 1.0;
        const double u = one * std::ldexp(1.0, -std::numeric_limits<A>::digits);
        std::vector<T> x(n, make<T>(0.0));
        if (n == 0) return sample<T>{x, "ties (empty)"};
        x[0] = make<T>(one);
        const T tie = as_double(make<T>(u)) == u ? make<T>(u) : make<T>(0.0);
        const char* name = "ties along the sequential path";
        if (path == 0) {
          for (std::uint64_t i = 1; i < n; ++i) x[i] = tie;
        } else if (path == 1) {
          name = "ties along the canonical path";
          std::uint64_t start = 0;
          bool first_block = true;
          for (int k = 63; k >= 0; --k) {
            const std::uint64_t block = std::uint64_t{1} << k;
            if (!(n & block)) continue;
            if (first_block) {
              for (int j = 0; j < k; ++j) x[std::uint64_t{1} << j] = tie;
              first_block = false;
            } else {
              x[start] = tie;
            }
            start += block;
          }
        } else {
          name = "ties along the pairwise path";
          for (std::uint64_t m = n; m >= 2; m /= 2) x[m / 2] = tie;
        }
        return sample<T>{std::move(x), name};
      },
      gen::inRange(0, 3), sizes(largest), gen::arbitrary<bool>());
}

// Finite inputs for the error-bound properties: no sum of them overflows A in any order.
template <class T, class A>
rc::Gen<sample<T>> finite_samples(std::uint64_t largest = 300000) {
  const int top = wide_top<T, A>(largest);
  const int bottom = limits_of<T>::min_subnormal_exponent;
  return gen::weightedOneOf<sample<T>>({
      {3, explicit_samples<T>(finite_values<T>(bottom, top), "explicit (wide range)")},
      {2, explicit_samples<T>(finite_values<T>(-10, 10), "explicit (near 1)")},
      {2, cancelling_samples<T>(finite_values<T>(std::max(bottom, -40), std::min(top, 40)))},
      {3, seeded_samples<T>(largest)},
      {2, tie_samples<T, A>(largest)},
  });
}

// Special values of T: +-0, +-Inf, NaN (canonical, and negative with a payload), the smallest subnormals.
template <class T>
rc::Gen<T> special_values() {
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::ldexp(1.0, limits_of<T>::min_subnormal_exponent);
  return gen::element(make<T>(0.0), make<T>(-0.0), make<T>(inf), make<T>(-inf), canonical_nan<T>(),
                      make<T>(-std::numeric_limits<double>::quiet_NaN()), make<T>(tiny), make<T>(-tiny));
}

// Vectors mixing special values with moderate finite values (no overflow): for the IEEE special-value rules. Four
// kinds, so that each rule is met often: one infinity (either sign) among finite values; zeros and subnormals among
// finite values; and every special value at once (NaN, both infinities, both zeros, subnormals).
template <class T>
rc::Gen<sample<T>> special_samples() {
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::ldexp(1.0, limits_of<T>::min_subnormal_exponent);
  auto among_finite = [](rc::Gen<T> specials, const char* origin) {
    return explicit_samples<T>(gen::weightedOneOf<T>({{1, std::move(specials)}, {3, finite_values<T>(-8, 8)}}), origin);
  };
  return gen::oneOf(among_finite(gen::just(make<T>(inf)), "explicit (with +Inf)"),
                    among_finite(gen::just(make<T>(-inf)), "explicit (with -Inf)"),
                    among_finite(gen::element(make<T>(0.0), make<T>(-0.0), make<T>(tiny), make<T>(-tiny)),
                                 "explicit (with zeros and subnormals)"),
                    among_finite(special_values<T>(), "explicit (with every special value)"));
}

// Signed zeros only: the sign rules of an exact-zero sum.
template <class T>
rc::Gen<sample<T>> zero_samples() {
  return explicit_samples<T>(gen::element(make<T>(0.0), make<T>(-0.0)), "explicit (signed zeros)");
}

}  // namespace detred::test
