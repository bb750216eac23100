// Error metrics: exact differences, rounded to double only at the end (contract in the header).
#include "detred/verify/error_metrics.hpp"

#include <cmath>
#include <limits>

#include "high_precision.hpp"

namespace detred::verify {

namespace mp = boost::multiprecision;
using detail::real;

namespace {

// The exponent of A's unit in the last place at `reference` (a correctly rounded sum): the ulp of a normal value
// 2^e * 1.f is 2^(e - p + 1); of zero and subnormals, the smallest subnormal; of an overflowed (infinite) result,
// ulp(MAX).
template <floating_accumulation A>
int ulp_exponent(A reference) {
  constexpr int p = std::numeric_limits<A>::digits;
  constexpr int emin = std::numeric_limits<A>::min_exponent - 1;  // min_exponent counts from 0.5: -125 for float
  constexpr int emax = std::numeric_limits<A>::max_exponent - 1;
  if (std::isinf(reference)) return emax - p + 1;
  if (reference == 0 || std::fabs(reference) < std::numeric_limits<A>::min()) return emin - p + 1;
  int exponent = 0;
  std::frexp(reference, &exponent);  // reference = f * 2^exponent, f in [0.5, 1)
  return exponent - 1 - p + 1;
}

}  // namespace

template <floating_accumulation A>
error_metrics measure_error(const exact_sum& s, A computed) {
  const A reference = s.rounded<A>();
  error_metrics m;
  m.exact_match = std::isnan(reference) ? std::isnan(computed) : bits_of(reference) == bits_of(computed);
  if (!s.is_finite() || !std::isfinite(computed)) {
    const double e = m.exact_match ? 0.0 : std::numeric_limits<double>::infinity();
    m.absolute = m.relative = m.ulps = e;
    return m;
  }
  exact_sum difference = s;
  difference.add(-computed);
  const mp::cpp_int d = mp::abs(difference.scaled());
  const mp::cpp_int t = mp::abs(s.scaled());
  const real absolute = detail::unscale(d);
  m.absolute = detail::to_double(absolute);
  if (d == 0)
    m.relative = 0;
  else if (t == 0)
    m.relative = std::numeric_limits<double>::infinity();
  else
    m.relative = detail::to_double(real(d) / real(t));
  m.ulps = detail::to_double(mp::ldexp(absolute, -ulp_exponent(reference)));
  return m;
}

double condition_number(const exact_sum& sum, const exact_sum& sum_of_magnitudes) {
  const mp::cpp_int s = mp::abs(sum.scaled());
  const mp::cpp_int magnitudes = sum_of_magnitudes.scaled();
  if (magnitudes == 0) return 1.0;
  if (s == 0) return std::numeric_limits<double>::infinity();
  return detail::to_double(real(magnitudes) / real(s));
}

template error_metrics measure_error<float>(const exact_sum&, float);
template error_metrics measure_error<double>(const exact_sum&, double);

}  // namespace detred::verify
