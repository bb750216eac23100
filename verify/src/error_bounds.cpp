// The a-priori bounds of docs/ACCURACY.md, evaluated in 300-bit arithmetic and rounded up (contract in the header).
#include "detred/verify/error_bounds.hpp"

#include <bit>
#include <limits>
#include <optional>

#include "detred/order.hpp"
#include "high_precision.hpp"

namespace detred::verify {

using detail::real;

namespace {

// gamma_k = k u / (1 - k u); nullopt when k u >= 1 (no bound).
std::optional<real> gamma(std::uint64_t k, const real& u) {
  const real ku = real(k) * u;
  if (ku >= 1) return std::nullopt;
  return ku / (1 - ku);
}

// ceil(log2 n): the depth of recursive pairwise summation (0 for n <= 1).
std::uint64_t pairwise_depth(std::uint64_t n) { return n <= 1 ? 0 : std::bit_width(n - 1); }

std::optional<real> bound(sum_method method, std::uint64_t n, const real& S, const real& abs_s, const real& u) {
  const std::uint64_t n_minus_1 = n == 0 ? 0 : n - 1;
  const auto h = static_cast<std::uint64_t>(canonical_depth(n));
  std::optional<real> g;
  switch (method) {
    case sum_method::sequential:
      g = gamma(n_minus_1, u);
      if (!g) return std::nullopt;
      return *g * S;
    case sum_method::pairwise:
      g = gamma(pairwise_depth(n), u);
      if (!g) return std::nullopt;
      return *g * S;
    case sum_method::kahan:
      return (2 * u + 4 * real(n) * u * u) * S;
    case sum_method::neumaier:
      g = gamma(n_minus_1, u);
      if (!g) return std::nullopt;
      return u * abs_s + *g * *g * S;
    case sum_method::tree:
      g = gamma(h, u);
      if (!g) return std::nullopt;
      return *g * S;
    case sum_method::tree_neumaier:
      g = gamma(h + 1, u);
      if (!g) return std::nullopt;
      return u * abs_s + *g * *g * S;
    case sum_method::exact:
      return u * abs_s;  // bound_as_double adds half the smallest subnormal
  }
  return std::nullopt;
}

template <floating_accumulation A>
double bound_as_double(sum_method method, std::uint64_t n, const real& S, const real& abs_s) {
  const real u = boost::multiprecision::ldexp(real(1), -std::numeric_limits<A>::digits);
  const std::optional<real> b = bound(method, n, S, abs_s, u);
  if (!b) return std::numeric_limits<double>::infinity();
  // A few 300-bit roundings happened on the way; a relative margin of 2^-280 covers them with room to spare.
  const real margin = 1 + boost::multiprecision::ldexp(real(1), -280);
  if (method == sum_method::exact)  // correct rounding: u|s|, or half the subnormal spacing below the normal range
    return detail::round_up_to_double(
        *b * margin + boost::multiprecision::ldexp(
                          real(1), std::numeric_limits<A>::min_exponent - 1 - std::numeric_limits<A>::digits));
  return detail::round_up_to_double(*b * margin);
}

}  // namespace

template <floating_accumulation A>
double error_bound(sum_method method, std::uint64_t n, double S, double abs_s) {
  return bound_as_double<A>(method, n, real(S), real(abs_s));
}

template <floating_accumulation A>
double error_bound(sum_method method, const exact_sum& s, const exact_sum& S) {
  return bound_as_double<A>(method, s.count(), detail::unscale(S.scaled()),
                            detail::unscale(boost::multiprecision::abs(s.scaled())));
}

template double error_bound<float>(sum_method, std::uint64_t, double, double);
template double error_bound<double>(sum_method, std::uint64_t, double, double);
template double error_bound<float>(sum_method, const exact_sum&, const exact_sum&);
template double error_bound<double>(sum_method, const exact_sum&, const exact_sum&);

}  // namespace detred::verify
