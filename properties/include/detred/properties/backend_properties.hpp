// Property suites for YOUR reduction (docs/PROPERTIES.md): write a backend (a struct, below), instantiate the suite,
// register it with ctest (detred_add_property_tests in CMake), and RapidCheck searches ill-conditioned, tie-laden,
// special-valued and boundary-sized inputs for a broken promise, shrinks the first one it finds, and saves it where
// detred-audit reads it (counterexample.hpp).
//
//   #include <detred/properties/backend_properties.hpp>
//   struct my_sum {
//     static constexpr const char* name = "my_sum";   // the instantiation's name in test names
//     using input = float;                             // T: half, bfloat16, float or double
//     using accumulation = float;                      // A: float or double
//     struct config { int blocks; };                   // one way to run it (launch shape, threads, alignment...)
//     static rc::Gen<config> configs();                // random configurations (give showValue(config, ostream&))
//     static accumulation sum(std::span<const input> x, const config& c);
//     // Optional, each enabling or tuning a property:
//     static bool available();                         // false: every property skips, printing
//     static std::string unavailable_reason();
//     static double error_bound(const verify::exact_sum& s, const verify::exact_sum& S, std::size_t n);
//     static constexpr sum_method bound = sum_method::tree;   // instead: detred's bound of that method
//     static accumulation reference(std::span<const input> x); // the method it must equal bit for bit
//     static constexpr bool canonical_order = true;    // it claims detred's canonical order (docs/ORDER.md)
//     static constexpr int runs = 8;                   // runs per input for SameBitsAcrossRuns (default 8)
//     static constexpr std::uint64_t largest = 300000; // the largest input drawn (default 300000)
//     static constexpr const char* plugin = "libmine.so";      // shown in the replay command
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(mine, BackendProperties, ::testing::Types<my_sum>,
//                                  detred::test::user_backend_name);
//
// The properties (each skips, saying so, when the backend does not declare what it needs):
//   ErrorWithinStatedBound     |sum - s| <= bound, decided exactly, s the exact sum (error_bound or bound)
//   SameBitsAcrossConfigurations  two random configurations give the same bits
//   SameBitsAcrossRuns         `runs` calls in one configuration give the same bits
//   EqualsReference            the same bits as reference(x)
//   IeeeSpecialValues          NaN in, or +Inf and -Inf: NaN; one infinity (finite rest): that infinity; all terms
//                              zero: -0.0 exactly when every term is -0.0; else finite
//   SplitInvarianceOfTheCanonicalOrder  canonical_order: sum(x) == fl(sum(x[0..n-b)) + sum(x[n-b..n))), b the last
//                              block of the canonical order (lowest set bit of n; n/2 for a power of two)
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "detred/properties/counterexample.hpp"
#include "detred/properties/inputs.hpp"
#include "detred/properties/property.hpp"
#include "detred/sum_method.hpp"
#include "detred/verify/error_bounds.hpp"
#include "detred/verify/error_metrics.hpp"
#include "detred/verify/exact_sum.hpp"

namespace detred::test {

// The required part of a backend.
template <class B>
concept reduction_backend = requires(std::span<const typename B::input> x, const typename B::config& c) {
  { B::name } -> std::convertible_to<const char*>;
  { B::configs() } -> std::same_as<rc::Gen<typename B::config>>;
  { B::sum(x, c) } -> std::same_as<typename B::accumulation>;
};

namespace backend_traits {
template <class B>
bool available() {
  if constexpr (requires { B::available(); })
    return B::available();
  else
    return true;
}
template <class B>
std::string unavailable_reason() {
  if constexpr (requires { B::unavailable_reason(); })
    return B::unavailable_reason();
  else
    return std::string(B::name) + " is not available";
}
template <class B>
constexpr bool has_bound = requires(const verify::exact_sum& s) {
  B::error_bound(s, s, std::size_t{});
}
|| requires { B::bound; };
template <class B>
double bound(const verify::exact_sum& s, const verify::exact_sum& S, std::size_t n) {
  if constexpr (requires { B::error_bound(s, S, n); })
    return B::error_bound(s, S, n);
  else
    return verify::error_bound<typename B::accumulation>(B::bound, s, S);
}
template <class B>
constexpr bool has_reference = requires(std::span<const typename B::input> x) {
  B::reference(x);
};
template <class B>
constexpr bool canonical_order() {
  if constexpr (requires { B::canonical_order; })
    return B::canonical_order;
  else
    return false;
}
template <class B>
constexpr int runs() {
  if constexpr (requires { B::runs; })
    return B::runs;
  else
    return 8;
}
template <class B>
constexpr std::uint64_t largest() {
  if constexpr (requires { B::largest; })
    return B::largest;
  else
    return 300000;
}
template <class B>
std::string plugin() {
  if constexpr (requires { B::plugin; })
    return B::plugin;
  else
    return "";
}
}  // namespace backend_traits

template <reduction_backend B>
class BackendProperties : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_traits::available<B>()) GTEST_SKIP() << backend_traits::unavailable_reason<B>();
  }
};

// Fails the current property, saving x for detred-audit and logging where it went.
template <class B>
void fail_with(std::span<const typename B::input> x, const std::string& what) {
  RC_LOG() << save_counterexample<typename B::input>(x, backend_traits::plugin<B>()) << "\n";
  RC_FAIL(what);
}

template <class A>
std::string hex(A v) {
  std::ostringstream s;
  s << std::hexfloat << v;
  return s.str();
}

TYPED_TEST_SUITE_P(BackendProperties);

TYPED_TEST_P(BackendProperties, ErrorWithinStatedBound) {
  using B = TypeParam;
  using T = typename B::input;
  using A = typename B::accumulation;
  if constexpr (!backend_traits::has_bound<B>) {
    GTEST_SKIP() << B::name << " states no error bound (give error_bound() or bound)";
  } else {
    check_property([] {
      const sample<T> x = *finite_samples<T, A>(backend_traits::largest<B>());
      const A result = B::sum(x.values, *B::configs());
      const verify::exact_sum s = verify::exact_sum_of<T>(x.values);
      const verify::exact_sum S = verify::exact_sum_of_magnitudes<T>(x.values);
      const double bound = backend_traits::bound<B>(s, S, x.values.size());
      const verify::error_metrics error = verify::measure_error(s, result);
      RC_LOG() << "result " << hex(result) << ", exact " << s.to_decimal(25) << ", |error| " << error.absolute << " ("
               << error.ulps << " ulps), bound " << bound << "\n";
      if (!within_bound(s, result, bound)) fail_with<B>(x.values, "error above the stated bound");
    });
  }
}

TYPED_TEST_P(BackendProperties, SameBitsAcrossConfigurations) {
  using B = TypeParam;
  using T = typename B::input;
  using A = typename B::accumulation;
  check_property([] {
    const sample<T> x = *finite_samples<T, A>(backend_traits::largest<B>());
    const A first = B::sum(x.values, *B::configs());
    const A second = B::sum(x.values, *B::configs());
    RC_LOG() << "first configuration " << hex(first) << ", second " << hex(second) << "\n";
    if (bits(first) != bits(second)) fail_with<B>(x.values, "two configurations gave different bits");
  });
}

TYPED_TEST_P(BackendProperties, SameBitsAcrossRuns) {
  using B = TypeParam;
  using T = typename B::input;
  using A = typename B::accumulation;
  check_property([] {
    const sample<T> x = *finite_samples<T, A>(backend_traits::largest<B>());
    const typename B::config config = *B::configs();
    const A first = B::sum(x.values, config);
    for (int run = 1; run < backend_traits::runs<B>(); ++run) {
      const A again = B::sum(x.values, config);
      if (bits(again) != bits(first)) {
        RC_LOG() << "run 0 " << hex(first) << ", run " << run << " " << hex(again) << "\n";
        fail_with<B>(x.values, "two runs in one configuration gave different bits");
      }
    }
  });
}

TYPED_TEST_P(BackendProperties, EqualsReference) {
  using B = TypeParam;
  using T = typename B::input;
  using A = typename B::accumulation;
  if constexpr (!backend_traits::has_reference<B>) {
    GTEST_SKIP() << B::name << " names no reference method (give reference())";
  } else {
    check_property([] {
      const sample<T> x = *gen::weightedOneOf<sample<T>>(
          {{4, finite_samples<T, A>(backend_traits::largest<B>())}, {1, special_samples<T>()}});
      const A result = B::sum(x.values, *B::configs());
      const A reference = B::reference(x.values);
      RC_LOG() << "result " << hex(result) << ", reference " << hex(reference) << "\n";
      const bool both_nan = std::isnan(result) && std::isnan(reference);
      if (!both_nan && bits(result) != bits(reference)) fail_with<B>(x.values, "differs from the reference");
    });
  }
}

TYPED_TEST_P(BackendProperties, IeeeSpecialValues) {
  using B = TypeParam;
  using T = typename B::input;
  using A = typename B::accumulation;
  check_property([] {
    const sample<T> x = *gen::oneOf(special_samples<T>(), zero_samples<T>());
    const A result = B::sum(x.values, *B::configs());
    const verify::exact_sum s = verify::exact_sum_of<T>(x.values);
    const A expected = s.rounded<A>();
    RC_LOG() << "result " << hex(result) << ", IEEE " << hex(expected) << "\n";
    const bool all_zero = std::all_of(x.values.begin(), x.values.end(), [](T v) { return as_double(v) == 0; });
    bool ok = true;
    if (std::isnan(expected))
      ok = std::isnan(result);  // any NaN: detred canonicalizes, a user's backend need not
    else if (std::isinf(expected) || all_zero)
      ok = bits(result) == bits(expected);
    else
      ok = std::isfinite(result);
    if (!ok) fail_with<B>(x.values, "breaks an IEEE special-value rule");
  });
}

TYPED_TEST_P(BackendProperties, SplitInvarianceOfTheCanonicalOrder) {
  using B = TypeParam;
  using T = typename B::input;
  using A = typename B::accumulation;
  if constexpr (!backend_traits::canonical_order<B>()) {
    GTEST_SKIP() << B::name << " does not claim the canonical order (canonical_order = true)";
  } else {
    check_property([] {
      const sample<T> x = *finite_samples<T, A>(backend_traits::largest<B>());
      const std::size_t n = x.values.size();
      RC_PRE(n >= 2);
      const std::size_t last_block = (n & (n - 1)) == 0 ? n / 2 : (n & (~n + 1));
      const std::span<const T> all(x.values);
      const A whole = B::sum(all, *B::configs());
      const A head = B::sum(all.first(n - last_block), *B::configs());
      const A tail = B::sum(all.last(last_block), *B::configs());
      RC_LOG() << "whole " << hex(whole) << ", head " << hex(head) << " + tail " << hex(tail) << "\n";
      const A joined = head + tail;
      const bool both_nan = std::isnan(whole) && std::isnan(joined);
      if (!both_nan && bits(whole) != bits(joined)) fail_with<B>(x.values, "not split-invariant at the last block");
    });
  }
}

REGISTER_TYPED_TEST_SUITE_P(BackendProperties, ErrorWithinStatedBound, SameBitsAcrossConfigurations, SameBitsAcrossRuns,
                            EqualsReference, IeeeSpecialValues, SplitInvarianceOfTheCanonicalOrder);

// Names an instantiation after its backend's `name`. (sum_properties.hpp has the same for detred's own suites.)
struct user_backend_name {
  template <class B>
  static std::string GetName(int) {
    return B::name;
  }
};

}  // namespace detred::test
