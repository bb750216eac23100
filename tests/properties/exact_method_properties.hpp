// sum_method::exact's promise against any backend (backend.hpp): the bits of verify::exact_sum's correct rounding, on
// random finite inputs (wide range, near 1, cancelling, seeded, ties), special values, signed zeros, full-range bit
// patterns (every finite binade, subnormals included) and sums near the overflow threshold, in random
// configurations. With the CUDA backend this is also the GPU == CPU check (both equal the reference).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "detred/properties/inputs.hpp"
#include "detred/properties/property.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::test {

// Any finite T from its bits: random sign, exponent field over every finite binade, random fraction.
template <class T>
rc::Gen<T> full_range_values() {
  using B = typename float_traits<T>::bits_type;
  constexpr int bits = int(sizeof(B) * 8), p = float_traits<T>::precision;
  constexpr std::uint64_t fields = (std::uint64_t{1} << (bits - p)) - 1;
  return gen::apply(
      [](bool negative, std::uint64_t field, std::uint64_t fraction) {
        const std::uint64_t b = (std::uint64_t(negative) << (bits - 1)) | (field << (p - 1)) | fraction;
        if constexpr (std::same_as<T, half> || std::same_as<T, bfloat16>)
          return T::from_bits(B(b));
        else
          return detred::bit_cast<T>(B(b));
      },
      gen::arbitrary<bool>(), gen::inRange<std::uint64_t>(0, fields),
      gen::inRange<std::uint64_t>(0, std::uint64_t{1} << (p - 1)));
}

// Values in the top binades of T (partial sums overflow, the rounded sum may or may not).
template <class T>
rc::Gen<T> huge_values() {
  return finite_values<T>(limits_of<T>::emax - 2, limits_of<T>::emax);
}

template <class Backend>
class ExactMethodProperties : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Backend::available()) GTEST_SKIP() << Backend::unavailable_reason();
  }
};
TYPED_TEST_SUITE_P(ExactMethodProperties);

TYPED_TEST_P(ExactMethodProperties, CorrectlyRoundedOnEveryKindOfInput) {
  check_property([] {
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const sample<T> x = *gen::weightedOneOf<sample<T>>({
          {3, finite_samples<T, A>()},
          {1, special_samples<T>()},
          {1, zero_samples<T>()},
          {2, explicit_samples<T>(full_range_values<T>(), "explicit (full range bits)")},
          {1, explicit_samples<T>(huge_values<T>(), "explicit (near MAX)")},
      });
      const A result = TypeParam::template sum<A, T>(x.values, sum_method::exact, *TypeParam::configs());
      const A reference = verify::exact_sum_of<T>(x.values).template rounded<A>();
      RC_LOG() << "exact: " << std::hexfloat << result << ", reference " << reference << std::defaultfloat << "\n";
      RC_ASSERT(bits(result) == bits(reference));
    });
  });
}

REGISTER_TYPED_TEST_SUITE_P(ExactMethodProperties, CorrectlyRoundedOnEveryKindOfInput);

}  // namespace detred::test
