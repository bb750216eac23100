// Error-free transformations: the building blocks of compensated summation.
//
// For finite a, b whose sum does not overflow, both return s = fl(a + b) and e with a + b = s + e exactly.
#pragma once

#include "detred/config.hpp"

namespace detred {

template <class A>
struct sum_and_error {
  A sum;
  A error;
};

// Knuth's TwoSum: exact for any ordering of |a| and |b|; 6 additions, no branch (so GPU warps do not diverge).
template <class A>
constexpr DETRED_HD sum_and_error<A> two_sum(A a, A b) {
  const A s = a + b;
  const A b_virtual = s - a;
  const A a_virtual = s - b_virtual;
  const A e = (a - a_virtual) + (b - b_virtual);
  return {s, e};
}

// Dekker's FastTwoSum: exact only when |a| >= |b| (or a == 0); 3 additions. Callers must ensure the precondition;
// Kahan's accumulator uses it in the form (t - s) - y, where the running sum usually dominates.
template <class A>
constexpr DETRED_HD sum_and_error<A> fast_two_sum(A a, A b) {
  const A s = a + b;
  const A e = b - (s - a);
  return {s, e};
}

}  // namespace detred
