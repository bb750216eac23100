// The promise of an exact method: the correctly rounded sum, bit for bit, for every order and every split of the
// input. Written once over any Exact type with add(std::span<const T>), merge(const Exact&) and rounded<A>(); run
// today for the reference itself (verify::exact_sum), so that everything checked against it stands on a reference that
// is order- and split-invariant. The library's exact method (its own issue) reuses this property unchanged.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "detred/properties/inputs.hpp"
#include "detred/properties/property.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::test {

template <class Exact>
void exact_method_is_correctly_rounded_and_order_and_split_invariant() {
  with_type_pair(*type_pairs(), [&]<class A, class T>() {
    const sample<T> x = *gen::weightedOneOf<sample<T>>({{3, finite_samples<T, A>()}, {1, special_samples<T>()}});
    const std::size_t n = x.values.size();
    // A permutation (from a seed) and a split into pieces (cut points), summed piece by piece and merged backwards.
    const std::uint64_t permutation_seed = *gen::inRange<std::uint64_t>(0, 1000000);
    std::vector<std::size_t> cuts = *gen::container<std::vector<std::size_t>>(gen::inRange<std::size_t>(0, n + 1));
    std::sort(cuts.begin(), cuts.end());
    std::vector<T> permuted = x.values;
    std::mt19937_64 rng(permutation_seed);
    std::shuffle(permuted.begin(), permuted.end(), rng);

    // `whole` takes the values one at a time, last first: not the reference's computation (one add of the span, in
    // order), so that the first assertion below compares two different computations.
    Exact whole;
    for (std::size_t i = n; i-- > 0;) whole.template add<T>(std::span<const T>(x.values).subspan(i, 1));
    std::vector<Exact> pieces;
    std::size_t start = 0;
    cuts.push_back(n);
    for (std::size_t cut : cuts) {
      Exact piece;
      piece.template add<T>(std::span<const T>(permuted).subspan(start, cut - start));
      pieces.push_back(piece);
      start = cut;
    }
    Exact merged;
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) merged.merge(*it);

    const verify::exact_sum reference = verify::exact_sum_of<T>(x.values);
    RC_LOG() << "whole " << std::hexfloat << whole.template rounded<A>() << ", permuted and merged "
             << merged.template rounded<A>() << std::defaultfloat << "\n";
    RC_ASSERT(bits(whole.template rounded<A>()) == bits(reference.rounded<A>()));
    RC_ASSERT(bits(merged.template rounded<A>()) == bits(reference.rounded<A>()));
    RC_ASSERT(bits(merged.template rounded<T>()) == bits(reference.rounded<T>()));
    // Independent oracles where they exist. (1) A single IEEE addition is correctly rounded.
    if (n == 2) {
      const A a = static_cast<A>(as_double(x.values[0])), b = static_cast<A>(as_double(x.values[1]));
      RC_ASSERT(bits(whole.template rounded<A>()) == bits(canonicalize_nan<A>(a + b)));
    }
    // (2) When a left-to-right double sum makes no rounding error at all (every TwoSum error term is zero), it is the
    // exact sum, and one conversion to A is the correct rounding (zero signs included: IEEE gives x + (-x) = +0 and
    // -0 + -0 = -0, the reference's rule).
    double running = -0.0;
    bool exact_in_double = reference.is_finite();
    for (const T& v : x.values) {
      const double b = as_double(v), t = running + b;
      const double b_virtual = t - running;
      exact_in_double = exact_in_double && std::isfinite(t) && (running - (t - b_virtual)) + (b - b_virtual) == 0;
      running = t;
    }
    if (exact_in_double) {
      RC_LOG() << "exact in double: " << std::hexfloat << running << std::defaultfloat << "\n";
      RC_ASSERT(bits(whole.template rounded<A>()) == bits(static_cast<A>(running)));
    }
  });
}

}  // namespace detred::test
