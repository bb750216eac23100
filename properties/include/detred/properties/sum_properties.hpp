// The promises of detred's sums, each a property, written once over a Backend (backend.hpp) and instantiated per
// backend by test_properties_cpu.cpp and test_properties_cuda.cpp. Each property names the sentence of the docs it
// enforces. Methods a backend does not implement are skipped, saying so.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <span>
#include <vector>

#include "detred/order.hpp"
#include "detred/properties/inputs.hpp"
#include "detred/properties/property.hpp"
#include "detred/reduce.hpp"
#include "detred/verify/error_bounds.hpp"
#include "detred/verify/error_metrics.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::test {

template <class Backend>
class SumProperties : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Backend::available()) GTEST_SKIP() << Backend::unavailable_reason();
  }
};

// |sum - s| <= the bound of `method` (docs/ACCURACY.md, "Summary and tests";
// verify/include/detred/verify/error_bounds.hpp), for every type pair, over finite inputs of every range (no overflow),
// in every backend configuration.
template <class Backend>
void error_within_documented_bound(sum_method method, bool only_16_bit_inputs = false) {
  const type_pair pair =
      only_16_bit_inputs ? *gen::map(gen::inRange(0, 4), [](int i) { return type_pair{i}; }) : *type_pairs();
  with_type_pair(pair, [&]<class A, class T>() {
    const sample<T> x = *finite_samples<T, A>();
    const typename Backend::config config = *Backend::configs();
    const A result = Backend::template sum<A, T>(x.values, method, config);
    const verify::exact_sum s = verify::exact_sum_of<T>(x.values);
    const verify::exact_sum S = verify::exact_sum_of_magnitudes<T>(x.values);
    const double bound = verify::error_bound<A>(method, s, S);
    const verify::error_metrics error = verify::measure_error(s, result);
    RC_LOG() << to_string(method) << ": result " << std::hexfloat << result << ", exact " << s.to_decimal(25)
             << ", |error| " << error.absolute << " (" << std::defaultfloat << error.ulps << " ulps), bound "
             << std::hexfloat << bound << std::defaultfloat << ", n " << x.values.size() << ", condition "
             << verify::condition_number(s, S) << "\n";
    RC_ASSERT(within_bound(s, result, bound));
  });
}

template <class Backend>
void bound_property(sum_method method) {
  if (!Backend::supports(method))
    GTEST_SKIP() << "the " << Backend::name << " backend has no " << to_string(method) << " sum";
  check_property([method] { error_within_documented_bound<Backend>(method); });
}

TYPED_TEST_SUITE_P(SumProperties);

// sum_method.hpp: sequential, |error| <= gamma_{n-1} S.
TYPED_TEST_P(SumProperties, SequentialWithinGammaNMinus1) { bound_property<TypeParam>(sum_method::sequential); }
// sum_method.hpp: pairwise, |error| <= gamma_{ceil(log2 n)} S.
TYPED_TEST_P(SumProperties, PairwiseWithinGammaCeilLog2N) { bound_property<TypeParam>(sum_method::pairwise); }
// sum_method.hpp / ACCURACY.md: kahan, tested as |error| <= (2u + 4 n u^2) S.
TYPED_TEST_P(SumProperties, KahanWithin2uPlus4nu2) { bound_property<TypeParam>(sum_method::kahan); }
// sum_method.hpp: neumaier, |error| <= u|s| + gamma_{n-1}^2 S.
TYPED_TEST_P(SumProperties, NeumaierWithinUsPlusGammaSquared) { bound_property<TypeParam>(sum_method::neumaier); }
// sum_method.hpp: tree (the canonical order), |error| <= gamma_{h(n)} S.
TYPED_TEST_P(SumProperties, TreeWithinGammaH) { bound_property<TypeParam>(sum_method::tree); }
// sum_method.hpp: tree_neumaier, |error| <= u|s| + gamma_{h(n)+1}^2 S.
TYPED_TEST_P(SumProperties, TreeNeumaierWithinUsPlusGammaHPlus1Squared) {
  bound_property<TypeParam>(sum_method::tree_neumaier);
}

// ACCURACY.md, "Mixed precision": 16-bit inputs widen exactly, so every bound holds with u of the accumulation type
// (2^-24 or 2^-53), not of the input type.
TYPED_TEST_P(SumProperties, MixedPrecisionBoundsUseTheAccumulationUnitRoundoff) {
  check_property([] {
    std::vector<sum_method> methods;
    for (sum_method m : all_sum_methods)
      if (TypeParam::supports(m)) methods.push_back(m);
    const sum_method method = *gen::elementOf(methods);
    error_within_documented_bound<TypeParam>(method, true);
  });
}

// README / ORDER.md: tree and tree_neumaier give the same bits for every thread count and launch configuration, and
// on the GPU the CPU's bits. Reference: the CPU backend on one thread.
TYPED_TEST_P(SumProperties, CanonicalMethodsGiveTheCpuSingleThreadBits) {
  check_property([] {
    const sum_method method = *gen::element(sum_method::tree, sum_method::tree_neumaier);
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      // Besides the usual inputs, many-chunk ones (2^17 .. 2^20 elements: 2 to 16 CPU chunks, many GPU tiles).
      const sample<T> x = *gen::weightedOneOf<sample<T>>(
          {{3, finite_samples<T, A>()},
           {1, special_samples<T>()},
           {1, seeded_samples<T>(gen::inRange<std::uint64_t>(std::uint64_t{1} << 17, (std::uint64_t{1} << 20) + 1))}});
      const typename TypeParam::config config = *TypeParam::configs();
      const A result = TypeParam::template sum<A, T>(x.values, method, config);
      const A reference = detred::sum<A>(x.values.data(), x.values.size(), method, cpu_options{1});
      RC_LOG() << TypeParam::name << " " << std::hexfloat << result << ", CPU on one thread " << reference
               << std::defaultfloat << "\n";
      RC_ASSERT(bits(result) == bits(reference));
    });
  });
}

// ORDER.md: the canonical order is a left fold of complete trees over the binary digits of n, so a split before the
// last (smallest) block is exact in structure: tree(x) == fl(tree(x[0..n-b)) + tree(x[n-b..n))), b the lowest set
// bit of n (for a power of two, n/2), each part computed in its own random configuration.
TYPED_TEST_P(SumProperties, TreeSplitsAtItsLastBlock) {
  check_property([] {
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const sample<T> x = *finite_samples<T, A>();
      const std::size_t n = x.values.size();
      RC_PRE(n >= 2);
      const std::size_t last_block = (n & (n - 1)) == 0 ? n / 2 : (n & (~n + 1));
      const std::span<const T> all(x.values);
      const A whole = TypeParam::template sum<A, T>(all, sum_method::tree, *TypeParam::configs());
      const A head = TypeParam::template sum<A, T>(all.first(n - last_block), sum_method::tree, *TypeParam::configs());
      const A tail = TypeParam::template sum<A, T>(all.last(last_block), sum_method::tree, *TypeParam::configs());
      RC_LOG() << "whole " << std::hexfloat << whole << ", head " << head << " + tail " << tail << std::defaultfloat
               << " (last block " << last_block << ")\n";
      RC_ASSERT(bits(whole) == bits(canonicalize_nan<A>(head + tail)));
    });
  });
}

// reduce.hpp / ACCURACY.md "Special values": NaN anywhere, or both infinities, gives the canonical NaN; one infinity
// gives that infinity (the finite values here cannot overflow); an all-zero input gives -0.0 exactly when every term
// is -0.0 (the empty sum too); every method, every configuration.
TYPED_TEST_P(SumProperties, SpecialValuesFollowIeeeRules) {
  check_property([] {
    std::vector<sum_method> methods;
    for (sum_method m : all_sum_methods)
      if (TypeParam::supports(m)) methods.push_back(m);
    const sum_method method = *gen::elementOf(methods);
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const sample<T> x = *gen::oneOf(special_samples<T>(), zero_samples<T>());
      const A result = TypeParam::template sum<A, T>(x.values, method, *TypeParam::configs());
      const verify::exact_sum s = verify::exact_sum_of<T>(x.values);
      RC_LOG() << to_string(method) << ": " << std::hexfloat << result << std::defaultfloat << "\n";
      const bool all_zero = std::all_of(x.values.begin(), x.values.end(), [](T v) { return as_double(v) == 0; });
      if (!s.is_finite() || all_zero) {
        // Specials and exact zeros: the rounded reference has the IEEE result (canonical NaN, the infinity, the sign
        // of zero).
        RC_ASSERT(bits(result) == bits(s.rounded<A>()));
      } else {
        const verify::exact_sum S = verify::exact_sum_of_magnitudes<T>(x.values);
        RC_ASSERT(within_bound(s, result, verify::error_bound<A>(method, s, S)));
      }
    });
  });
}

// Sizes: n = 0, 1, 2, powers of two and their neighbours, sizes that are a multiple of no tile, large ones: every
// method stays within its bound, the canonical methods give the CPU single-thread bits, and n = 0 gives -0.0.
TYPED_TEST_P(SumProperties, EverySizeGivesTheCanonicalBitsWithinTheBound) {
  check_property([] {
    std::vector<sum_method> methods;
    for (sum_method m : all_sum_methods)
      if (TypeParam::supports(m)) methods.push_back(m);
    const sum_method method = *gen::elementOf(methods);
    const std::uint64_t n = *sizes(1u << 19);
    const std::uint64_t seed = *gen::inRange<std::uint64_t>(0, 1000);
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const std::vector<T> x = verify::generate<T>({verify::distribution::normal, n, seed});
      const A result = TypeParam::template sum<A, T>(x, method, *TypeParam::configs());
      RC_LOG() << to_string(method) << ", n " << n << ": " << std::hexfloat << result << std::defaultfloat << "\n";
      if (n == 0) RC_ASSERT(bits(result) == bits(negative_zero<A>()));
      if (method == sum_method::tree || method == sum_method::tree_neumaier)
        RC_ASSERT(bits(result) == bits(detred::sum<A>(x.data(), x.size(), method, cpu_options{1})));
      const verify::exact_sum s = verify::exact_sum_of<T>(x);
      const verify::exact_sum S = verify::exact_sum_of_magnitudes<T>(x);
      RC_ASSERT(within_bound(s, result, verify::error_bound<A>(method, s, S)));
    });
  });
}

REGISTER_TYPED_TEST_SUITE_P(SumProperties, SequentialWithinGammaNMinus1, PairwiseWithinGammaCeilLog2N,
                            KahanWithin2uPlus4nu2, NeumaierWithinUsPlusGammaSquared, TreeWithinGammaH,
                            TreeNeumaierWithinUsPlusGammaHPlus1Squared,
                            MixedPrecisionBoundsUseTheAccumulationUnitRoundoff,
                            CanonicalMethodsGiveTheCpuSingleThreadBits, TreeSplitsAtItsLastBlock,
                            SpecialValuesFollowIeeeRules, EverySizeGivesTheCanonicalBitsWithinTheBound);

// Names the instantiations after the backend ("cpu", "cuda") instead of a number.
struct backend_name {
  template <class Backend>
  static std::string GetName(int) {
    return Backend::name;
  }
};

}  // namespace detred::test
