// Shared helpers of the property suites: running a RapidCheck property inside a Google Test, and deciding error
// bounds exactly.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>

#include "detred/types/float_traits.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::test {

// Runs `property` as the current Google Test's RapidCheck property: RC_PARAMS applies (properties_main.cpp sets the
// CI defaults), a failure prints the seed, the shrunk counterexample and the RC_PARAMS="reproduce=..." to replay it.
template <class Property>
void check_property(Property&& property) {
  rc::detail::checkGTest(std::forward<Property>(property));
}

template <class T>
std::uint64_t bits(T x) {
  return static_cast<std::uint64_t>(bits_of(x));
}

// |computed - s| <= bound, decided in exact arithmetic (no rounding of the error before the comparison). An infinite
// bound holds for everything finite.
template <floating_accumulation A>
bool within_bound(const verify::exact_sum& s, A computed, double bound) {
  if (std::isinf(bound)) return std::isfinite(computed);
  if (!std::isfinite(computed)) return false;
  verify::exact_sum error = s;
  error.add(-computed);
  verify::exact_sum limit;
  limit.add(bound);
  return boost::multiprecision::abs(error.scaled()) <= limit.scaled();
}

}  // namespace detred::test
