// verify's private shorthand for a format's parameters (from float_traits): precision p with the hidden bit, and the
// exponents of the smallest and largest normal binades, so that normal values are m * 2^(e - p + 1) with
// 2^(p-1) <= m < 2^p and emin <= e <= emax. Internal to detred::verify (not installed).
#pragma once

#include "detred/types/float_traits.hpp"

namespace detred::verify::detail {

struct format {
  int precision;
  int emin;
  int emax;
};

template <floating_input T>
constexpr format format_of() {
  return {float_traits<T>::precision, float_traits<T>::min_exponent, float_traits<T>::max_exponent};
}

}  // namespace detred::verify::detail
