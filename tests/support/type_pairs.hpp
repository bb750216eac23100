// The (accumulation, input) pairs detred supports, for tests that must cover each one, and a value maker for any input
// type.
#pragma once

#include <type_traits>

#include "detred/types/float_traits.hpp"
#include "properties/include/detred/properties/make.hpp"  // make<T>(double), shared with the property suites

namespace detred::test {

// Calls f.template operator()<A, T>() for every supported pair: half, bfloat16 and float into float and double; double
// into double.
template <class F>
void for_each_type_pair(F&& f) {
  f.template operator()<float, half>();
  f.template operator()<double, half>();
  f.template operator()<float, bfloat16>();
  f.template operator()<double, bfloat16>();
  f.template operator()<float, float>();
  f.template operator()<double, float>();
  f.template operator()<double, double>();
}

}  // namespace detred::test
