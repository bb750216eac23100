// The input generators (contract in the header). Everything below uses only IEEE basic operations, frexp/ldexp
// (exact) and sqrt (correctly rounded), so the bits are the same on every IEEE 754 machine.
#include "detred/verify/generators.hpp"
#include "float_format.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "detred/verify/exact_sum.hpp"

namespace detred::verify {

namespace {

__extension__ typedef unsigned __int128 uint128;

// xoshiro256** (Blackman and Vigna), seeded through splitmix64 so that nearby seeds give unrelated streams.
class random_bits {
 public:
  explicit random_bits(std::uint64_t seed) {
    for (auto& word : state_) word = splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }
  // k * 2^-53 for a uniform k in [0, 2^53): exact.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  // In [-1, 1): exact (a multiple of 2^-52).
  double uniform_symmetric() { return 2 * uniform01() - 1; }
  // Uniform in [0, bound) by Lemire's multiply-shift (the bias, below 2^-64 * bound, does not matter here).
  std::uint64_t below(std::uint64_t bound) { return static_cast<std::uint64_t>((uint128(next()) * bound) >> 64); }
  bool coin() { return (next() >> 63) != 0; }

 private:
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t state_[4];
};

constexpr double ln2 = 0x1.62e42fefa39efp-1;

// Natural log of a positive, finite, normal x, to a few ulps: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(t), t = (m - 1) / (m + 1), |t| < 0.172, by its series (12 terms: the next is below 1e-19).
double portable_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < 0x1.6a09e667f3bcdp-1) {
    m *= 2;
    --e;
  }
  const double t = (m - 1) / (m + 1);
  const double t2 = t * t;
  double series = 0;
  for (int k = 23; k >= 1; k -= 2) series = series * t2 + 1.0 / k;
  return e * ln2 + 2 * t * series;
}

// 1/i! for i = 0..16, each the correctly rounded quotient of two exact doubles (i! is exact up to 18!).
constexpr std::array<double, 17> inverse_factorials = [] {
  std::array<double, 17> c{};
  double factorial = 1;
  for (int i = 0; i <= 16; ++i) {
    if (i > 0) factorial *= i;
    c[i] = 1.0 / factorial;
  }
  return c;
}();

// e^y for |y| < 700, to a few ulps: y = k ln2 + r, |r| <= ln2 / 2, e^r by its Taylor series (17 terms, Horner),
// times 2^k.
double portable_exp(double y) {
  const double k = std::floor(y / ln2 + 0.5);
  const double r = (y - k * 0x1.62e42fefa3800p-1) - k * 0x1.ef35793c7673p-45;  // ln2 split: k * hi is exact
  double series = inverse_factorials[16];
  for (int i = 15; i >= 0; --i) series = series * r + inverse_factorials[i];
  const int exponent = static_cast<int>(k);
  if (exponent < -1022 || exponent > 1023) return std::ldexp(series, exponent);
  // 2^exponent from its bits: the same exact scaling as ldexp, without the library call.
  return series * std::bit_cast<double>(static_cast<std::uint64_t>(exponent + 1023) << 52);
}

// Standard normal deviates by Marsaglia's polar method; the second deviate of each pair is kept for the next call.
class normal_deviates {
 public:
  double next(random_bits& rng) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0, v = 0, s = 0;
    do {
      u = rng.uniform_symmetric();
      v = rng.uniform_symmetric();
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    const double factor = std::sqrt(-2 * portable_log(s) / s);
    spare_ = v * factor;
    has_spare_ = true;
    return u * factor;
  }

 private:
  double spare_ = 0;
  bool has_spare_ = false;
};

using detail::format;
using detail::format_of;

// d rounded to nearest even in T (the 16-bit types through float: deterministic, and exact where d is a T value).
template <floating_input T>
T to_type(double d) {
  if constexpr (std::same_as<T, double>)
    return d;
  else if constexpr (std::same_as<T, float>)
    return static_cast<float>(d);
  else
    return T::from_float(static_cast<float>(d));
}

template <floating_input T>
double to_double(T x) {
  if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>)
    return x.to_float();
  else
    return x;
}

template <floating_input T>
T negate(T x) {
  if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>)
    return T::from_bits(std::uint16_t(x.bits ^ 0x8000u));
  else
    return -x;
}

// NaNs given by their bits (so that the sign and payload are the same everywhere): the canonical quiet NaN, and a
// negative quiet NaN with payload 1.
template <floating_input T>
T negative_nan_with_payload() {
  if constexpr (std::same_as<T, half>)
    return half::from_bits(0xfe01u);
  else if constexpr (std::same_as<T, bfloat16>)
    return bfloat16::from_bits(0xffc1u);
  else if constexpr (std::same_as<T, float>)
    return std::bit_cast<float>(std::uint32_t{0xffc00001u});
  else
    return std::bit_cast<double>(std::uint64_t{0xfff8000000000001ull});
}

template <class T>
void shuffle(std::vector<T>& x, random_bits& rng) {
  for (std::size_t i = x.size(); i > 1; --i) std::swap(x[i - 1], x[rng.below(i)]);
}

template <floating_input T>
std::vector<T> generate_specials(std::uint64_t n, random_bits& rng) {
  constexpr format f = format_of<T>();
  const double infinity = std::numeric_limits<double>::infinity();
  const double max = std::ldexp(2 - std::ldexp(1.0, 1 - f.precision), f.emax);
  const double min_normal = std::ldexp(1.0, f.emin);
  const double min_subnormal = std::ldexp(1.0, f.emin - f.precision + 1);
  const T specials[] = {to_type<T>(0.0),
                        to_type<T>(-0.0),
                        to_type<T>(infinity),
                        to_type<T>(-infinity),
                        canonical_nan<T>(),
                        negative_nan_with_payload<T>(),
                        to_type<T>(min_subnormal),
                        to_type<T>(-min_subnormal),
                        to_type<T>(min_normal - min_subnormal),  // the largest subnormal
                        to_type<T>(min_normal),
                        to_type<T>(max),
                        to_type<T>(-max)};
  constexpr std::uint64_t special_count = sizeof(specials) / sizeof(specials[0]);
  std::vector<T> x(n);
  for (auto& v : x) {
    // One value in four is special.
    v = rng.below(4) == 0 ? specials[rng.below(special_count)] : to_type<T>(rng.uniform_symmetric());
  }
  return x;
}

template <floating_input T>
std::vector<T> generate_cancel(std::uint64_t n, random_bits& rng) {
  constexpr format f = format_of<T>();
  normal_deviates normal;
  std::vector<T> x;
  x.reserve(n);
  const std::uint64_t half_n = n / 2;
  for (std::uint64_t i = 0; i < half_n; ++i) x.push_back(to_type<T>(normal.next(rng)));
  const double perturbation = std::ldexp(1.0, -(f.precision / 2));
  for (std::uint64_t i = 0; i < half_n; ++i) {
    const double a = to_double(x[i]);  // its partner; the final shuffle separates the two
    x.push_back(to_type<T>(-a * (1 + perturbation * rng.uniform_symmetric())));
  }
  if (n % 2 != 0) x.push_back(to_type<T>(normal.next(rng)));
  shuffle(x, rng);
  return x;
}

// The exponent e with 2^e <= |d| < 2^(e+1) (d finite, nonzero).
int exponent_of(double d) {
  int e = 0;
  std::frexp(d, &e);
  return e - 1;
}

template <floating_input T>
std::vector<T> generate_ill(std::uint64_t n, double condition, random_bits& rng) {
  constexpr format f = format_of<T>();
  std::vector<T> x;
  x.reserve(n);
  if (!(condition > 1)) {  // condition 1 (or nonsense): all of one sign
    for (std::uint64_t i = 0; i < n; ++i) x.push_back(to_type<T>(rng.uniform01()));
    return x;
  }
  if (condition > 1e30) condition = 1e30;
  int condition_exponent = 0;  // condition = fraction * 2^condition_exponent, fraction in [0.5, 1)
  const double fraction = std::frexp(condition, &condition_exponent);
  const int log2_condition = fraction == 0.5 ? condition_exponent - 1 : condition_exponent;  // ceil(log2 condition)
  // Magnitudes stay below 2^top. binary16 inputs are accumulated in a wider type, so only T's own range matters:
  // room for the cancelling terms (about 4 * 2^top) and for the final sum (about n 2^top / condition). Otherwise
  // n * 2^(top+2) must not overflow T.
  const int log2_n = static_cast<int>(std::bit_width(n));
  const int top = f.emax - 2 - ((std::same_as<T, half>) ? std::max(0, log2_n - log2_condition + 1) : log2_n);
  const int spread = std::min(log2_condition, top - f.emin);  // the first part's exponent range
  // The cancelling part: each step lowers the running sum by up to 2^(p-2); the descent is at most about
  // spread + log2(condition) binades. One more term places the final sum.
  const std::uint64_t steps = static_cast<std::uint64_t>((spread + log2_condition) / (f.precision - 2) + 2);
  const std::uint64_t n_last = n <= 1 ? 0 : std::min<std::uint64_t>(n - 1, steps + 1);
  const std::uint64_t n_first = n - n_last;

  exact_sum running;     // the exact sum so far
  exact_sum magnitudes;  // the exact sum of |x| so far
  auto append = [&](T v) {
    x.push_back(v);
    running.add(v);
    magnitudes.add(to_type<T>(std::fabs(to_double(v))));
  };
  // First part: magnitudes (1 + U[0,1)) 2^(e-1), e uniform in [top - spread, top]; each sign chosen to pull the
  // (approximate) running sum back towards zero, so that no partial sum in this order grows past 2^top.
  double approximate = 0;
  for (std::uint64_t i = 0; i < n_first; ++i) {
    const int e = top - static_cast<int>(rng.below(static_cast<std::uint64_t>(spread) + 1));
    const double magnitude = std::ldexp(1 + rng.uniform01(), e - 1);
    const bool negative = approximate > 0 || (approximate == 0 && rng.coin());
    const T v = to_type<T>(negative ? -magnitude : magnitude);
    approximate += to_double(v);
    append(v);
  }
  // Cancelling part: x = r 2^e - s, s the exact running sum (rounded to double), e stepping down towards the size
  // S / condition of the final sum.
  for (std::uint64_t j = 0; j + 1 < n_last; ++j) {
    const double s = running.rounded<double>();
    const double target = magnitudes.rounded<double>() / condition;
    const int target_exponent = target > 0 ? exponent_of(target) : f.emin;
    const int e = s == 0 ? target_exponent : std::max(target_exponent, exponent_of(s) - (f.precision - 2));
    append(to_type<T>(std::ldexp(rng.uniform_symmetric(), e) - s));
  }
  // Last term: with r the running sum and S0 the sum of magnitudes so far, the final sum t (same sign as r) solves
  // (S0 + |t - r|) / |t| = condition.
  if (n_last > 0) {
    const double r = running.rounded<double>();
    const double s0 = magnitudes.rounded<double>();
    const double abs_r = std::fabs(r);
    const double min_subnormal = std::ldexp(1.0, f.emin - f.precision + 1);
    const double abs_t = s0 >= condition * abs_r ? (s0 - abs_r) / (condition - 1) : (s0 + abs_r) / (condition + 1);
    // Not below T's smallest subnormal: an exact zero would make the condition number infinite.
    const double t = r < 0 ? -std::max(abs_t, min_subnormal) : std::max(abs_t, min_subnormal);
    append(to_type<T>(t - r));
  }
  shuffle(x, rng);
  return x;
}

}  // namespace

std::string_view to_string(distribution d) {
  switch (d) {
    case distribution::uniform:
      return "uniform";
    case distribution::normal:
      return "normal";
    case distribution::lognormal:
      return "lognormal";
    case distribution::same_sign:
      return "same_sign";
    case distribution::cancel:
      return "cancel";
    case distribution::ill:
      return "ill";
    case distribution::specials:
      return "specials";
  }
  return "unknown";
}

std::optional<distribution> parse_distribution(std::string_view name) {
  for (distribution d : {distribution::uniform, distribution::normal, distribution::lognormal, distribution::same_sign,
                         distribution::cancel, distribution::ill, distribution::specials}) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

template <floating_input T>
std::vector<T> generate(const generator_options& options) {
  random_bits rng(options.seed);
  const std::uint64_t n = options.n;
  std::vector<T> x;
  switch (options.kind) {
    case distribution::uniform:
      x.reserve(n);
      for (std::uint64_t i = 0; i < n; ++i) x.push_back(to_type<T>(rng.uniform_symmetric()));
      return x;
    case distribution::normal: {
      normal_deviates normal;
      x.reserve(n);
      for (std::uint64_t i = 0; i < n; ++i) x.push_back(to_type<T>(normal.next(rng)));
      return x;
    }
    case distribution::lognormal: {
      // sigma = ln(MAX) / 8, deviates clamped to 7 sigma: magnitudes within [MAX^-7/8, MAX^7/8].
      constexpr format f = format_of<T>();
      const double sigma = (f.emax + 1) * ln2 / 8;
      normal_deviates normal;
      x.reserve(n);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double z = std::clamp(normal.next(rng), -7.0, 7.0);
        const double magnitude = portable_exp(sigma * z);
        x.push_back(to_type<T>(rng.coin() ? -magnitude : magnitude));
      }
      return x;
    }
    case distribution::same_sign:
      x.reserve(n);
      for (std::uint64_t i = 0; i < n; ++i) x.push_back(to_type<T>(rng.uniform01()));
      return x;
    case distribution::cancel:
      return generate_cancel<T>(n, rng);
    case distribution::ill:
      return generate_ill<T>(n, options.condition, rng);
    case distribution::specials:
      return generate_specials<T>(n, rng);
  }
  throw std::invalid_argument("generate: unknown distribution");
}

template std::vector<half> generate<half>(const generator_options&);
template std::vector<bfloat16> generate<bfloat16>(const generator_options&);
template std::vector<float> generate<float>(const generator_options&);
template std::vector<double> generate<double>(const generator_options&);

}  // namespace detred::verify
