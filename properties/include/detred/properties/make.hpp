// make<T>(v): a double rounded to an input type of detred (to nearest, ties to even), for generators and tests.
#pragma once

#include <type_traits>

#include "detred/types/float_traits.hpp"

namespace detred::test {

// v rounded to T (to nearest, ties to even).
template <class T>
T make(double v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return T::from_float(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

}  // namespace detred::test
