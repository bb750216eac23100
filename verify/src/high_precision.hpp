// verify's private helpers for 300-bit binary floating point: conversions from exact sums and directed rounding to
// double. Internal to detred::verify (not installed).
#pragma once

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>

#include "detred/verify/exact_sum.hpp"

namespace detred::verify::detail {

using real =
    boost::multiprecision::number<boost::multiprecision::cpp_bin_float<300, boost::multiprecision::digit_base_2>,
                                  boost::multiprecision::et_off>;

// The integer v times 2^-1074 (a scaled exact sum), rounded to 300 bits.
inline real unscale(const boost::multiprecision::cpp_int& v) {
  return boost::multiprecision::ldexp(real(v), -exact_sum::scale_exponent);
}

// The smallest double >= x (x >= 0 and finite in 300-bit terms; +Inf when above DBL_MAX).
inline double round_up_to_double(const real& x) {
  double d = x.convert_to<double>();
  if (std::isfinite(d) && real(d) < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return d;
}

// x rounded to the nearest double.
inline double to_double(const real& x) { return x.convert_to<double>(); }

}  // namespace detred::verify::detail
