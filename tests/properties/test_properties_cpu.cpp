// The property suites against the CPU backend (label cpu; CI). See docs/TESTING.md for the list of properties and
// how to run them long or replay a failure.
#include "detred/accumulators/exact.hpp"
#include "detred/properties/exact_properties.hpp"
#include "detred/properties/reduction_properties.hpp"
#include "detred/properties/sum_properties.hpp"
#include "detred/verify/exact_sum.hpp"
#include "tests/properties/backend.hpp"
#include "tests/properties/exact_method_properties.hpp"

namespace detred::test {

INSTANTIATE_TYPED_TEST_SUITE_P(properties, SumProperties, ::testing::Types<cpu_backend>, backend_name);
INSTANTIATE_TYPED_TEST_SUITE_P(properties, ReductionProperties, ::testing::Types<cpu_backend>, backend_name);

// The exact method's promise, checked today on the reference (exact_properties.hpp).
TEST(ExactReferenceProperties, CorrectlyRoundedAndInvariantUnderPermutationAndSplit) {
  check_property(exact_method_is_correctly_rounded_and_order_and_split_invariant<verify::exact_sum>);
}

// The same promise for the library's exact_accumulator (docs/EXACT.md): whole, permuted, split and merged, each
// rounded to A and to T. The layout follows T (double for binary64, float for the rest).
struct library_exact {
  exact_accumulator<double> wide;
  exact_accumulator<float> narrow;
  bool is_wide = false;
  template <class T>
  void add(std::span<const T> xs) {
    if constexpr (std::same_as<T, double>) {
      is_wide = true;
      wide.add(xs.data(), xs.size());
    } else {
      narrow.add(xs.data(), xs.size());
    }
  }
  void merge(const library_exact& other) {
    is_wide = is_wide || other.is_wide;
    wide.merge(other.wide);
    narrow.merge(other.narrow);
  }
  template <class A>
  A rounded() const {
    return is_wide ? wide.rounded<A>() : narrow.rounded<A>();
  }
};
TEST(ExactAccumulatorProperties, CorrectlyRoundedAndInvariantUnderPermutationAndSplit) {
  check_property(exact_method_is_correctly_rounded_and_order_and_split_invariant<library_exact>);
}
INSTANTIATE_TYPED_TEST_SUITE_P(properties, ExactMethodProperties, ::testing::Types<cpu_backend>, backend_name);

}  // namespace detred::test
