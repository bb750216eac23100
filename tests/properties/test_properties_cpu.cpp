// The property suites against the CPU backend (label cpu; CI). See docs/TESTING.md for the list of properties and
// how to run them long or replay a failure.
#include "detred/verify/exact_sum.hpp"
#include "tests/properties/backend.hpp"
#include "tests/properties/exact_properties.hpp"
#include "tests/properties/reduction_properties.hpp"
#include "tests/properties/sum_properties.hpp"

namespace detred::test {

INSTANTIATE_TYPED_TEST_SUITE_P(properties, SumProperties, ::testing::Types<cpu_backend>, backend_name);
INSTANTIATE_TYPED_TEST_SUITE_P(properties, ReductionProperties, ::testing::Types<cpu_backend>, backend_name);

// The exact method's promise, checked today on the reference (exact_properties.hpp).
TEST(ExactReferenceProperties, CorrectlyRoundedAndInvariantUnderPermutationAndSplit) {
  check_property(exact_method_is_correctly_rounded_and_order_and_split_invariant<verify::exact_sum>);
}

}  // namespace detred::test
