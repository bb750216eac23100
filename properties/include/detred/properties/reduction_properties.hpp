// The promises of detred's other reductions and its scans, each a property written once over a Backend
// (backend.hpp). Instantiated for the CPU backend; the CUDA backend has no product, extrema, generic reduce or scan
// yet and will instantiate this suite when it does.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <span>
#include <vector>

#include "detred/properties/inputs.hpp"
#include "detred/properties/operators.hpp"
#include "detred/properties/property.hpp"
#include "detred/reduce.hpp"

namespace detred::test {

template <class Backend>
class ReductionProperties : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Backend::available()) GTEST_SKIP() << Backend::unavailable_reason();
  }
};

// A finite nonzero double as m 2^e with m an integer.
struct integer_scaled {
  boost::multiprecision::cpp_int m;
  int e = 0;
};
inline integer_scaled decompose(double x) {
  int e = 0;
  const double f = std::frexp(x, &e);  // x = f 2^e, |f| in [0.5, 1)
  return {boost::multiprecision::cpp_int(static_cast<std::int64_t>(std::ldexp(f, 53))), e - 53};
}

// |computed - p| <= gamma_{n-1} |p| for the exact product p of x, decided in integers:
// |computed - p| (2^precision - (n - 1)) <= (n - 1) |p|, all scaled to a common power of two.
template <class A, class T>
bool product_within_bound(std::span<const T> x, A computed) {
  using boost::multiprecision::cpp_int;
  integer_scaled p{1, 0};
  for (const T& v : x) {
    const integer_scaled d = decompose(as_double(v));
    p.m *= d.m;
    p.e += d.e;
  }
  const integer_scaled c = computed == 0 ? integer_scaled{0, p.e} : decompose(static_cast<double>(computed));
  const int common = std::min(p.e, c.e);
  const cpp_int exact = p.m << (p.e - common);
  const cpp_int approximate = c.m << (c.e - common);
  const std::uint64_t k = x.empty() ? 0 : x.size() - 1;
  const cpp_int scale = (cpp_int(1) << std::numeric_limits<A>::digits) - k;
  return boost::multiprecision::abs(approximate - exact) * scale <= k * boost::multiprecision::abs(exact);
}

// Up to 1024 factors with magnitudes in [0.5, 2) and random signs, from a seed (shrinking n and the seed): long
// products whose rounding errors add up, with no over- or underflow.
template <class T>
rc::Gen<sample<T>> seeded_factor_samples() {
  return gen::apply(
      [](std::uint64_t n, std::uint64_t seed) {
        std::vector<T> x(n);
        for (std::uint64_t i = 0; i < n; ++i) {
          const std::uint64_t r = mix(seed, i);
          const double m = 1 + static_cast<double>(r >> 12) * 0x1p-52;  // [1, 2)
          x[i] = make<T>(((r & 1) ? -m : m) * ((r & 2) ? 0.5 : 1.0));
        }
        return sample<T>{std::move(x), "factors in [0.5, 2), seed " + std::to_string(seed)};
      },
      sizes(1024), gen::inRange<std::uint64_t>(0, 1000000));
}

TYPED_TEST_SUITE_P(ReductionProperties);

// reduce.hpp / ACCURACY.md "Product": without over/underflow, |product - p| <= gamma_{n-1} |p|; empty gives 1.
// Inputs have magnitudes in [0.5, 2): no product of them leaves the normal range.
TYPED_TEST_P(ReductionProperties, ProductWithinGammaNMinus1) {
  check_property([] {
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const sample<T> x = *gen::oneOf(explicit_samples<T>(finite_values<T>(-1, 0), "explicit (magnitudes in [0.5, 2))"),
                                      seeded_factor_samples<T>());
      const A result = TypeParam::template product<A, T>(x.values, *TypeParam::configs());
      RC_LOG() << "product " << std::hexfloat << result << std::defaultfloat << "\n";
      if (x.values.empty()) RC_ASSERT(result == A(1));
      RC_ASSERT((product_within_bound<A, T>(x.values, result)));
    });
  });
}

// reduce.hpp "Common contract": NaN anywhere, or 0 times Inf, gives the canonical NaN; otherwise an infinity gives an
// infinity and a zero a zero, with the sign the product of the signs.
TYPED_TEST_P(ReductionProperties, ProductSpecialValuesFollowIeeeRules) {
  check_property([] {
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const double inf = std::numeric_limits<double>::infinity();
      const auto specials = gen::element(make<T>(0.0), make<T>(-0.0), make<T>(inf), make<T>(-inf), canonical_nan<T>(),
                                         make<T>(-std::numeric_limits<double>::quiet_NaN()));
      const sample<T> x = *explicit_samples<T>(gen::weightedOneOf<T>({{1, specials}, {2, finite_values<T>(-1, 0)}}),
                                               "explicit (with specials)");
      const A result = TypeParam::template product<A, T>(x.values, *TypeParam::configs());
      bool nan = false, zero = false, infinite = false, negative = false;
      for (const T& v : x.values) {
        const double d = as_double(v);
        nan = nan || std::isnan(d);
        zero = zero || d == 0;
        infinite = infinite || std::isinf(d);
        negative = negative != std::signbit(d);
      }
      RC_LOG() << "product " << std::hexfloat << result << std::defaultfloat << "\n";
      if (nan || (zero && infinite))
        RC_ASSERT(bits(result) == bits(canonical_nan<A>()));
      else if (infinite)
        RC_ASSERT(bits(result) == bits(negative ? -infinity<A>() : infinity<A>()));
      else if (zero)
        RC_ASSERT(bits(result) == bits(negative ? negative_zero<A>() : A(0)));
      else
        RC_ASSERT((product_within_bound<A, T>(x.values, result)));
    });
  });
}

// The straightforward IEEE 754-2019 minimum/maximum and their indices: a NaN wins (the first one's index, canonical
// NaN value); otherwise the least (greatest) value, -0 below +0, ties to the lowest index; empty: +-Inf and n.
template <class T>
struct extremum_reference {
  std::size_t index;
  T value;
};
template <class T>
extremum_reference<T> reference_extremum(std::span<const T> x, bool minimum) {
  const std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i)
    if (std::isnan(as_double(x[i]))) return {i, canonical_nan<T>()};
  std::size_t best = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (best == n) {
      best = i;
      continue;
    }
    const double v = as_double(x[i]), b = as_double(x[best]);
    const bool better = minimum ? (v < b || (v == b && std::signbit(v) && !std::signbit(b)))
                                : (v > b || (v == b && !std::signbit(v) && std::signbit(b)));
    if (better) best = i;
  }
  const double empty = minimum ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  return {best, best == n ? make<T>(empty) : x[best]};
}

// reduce.hpp: min, max (IEEE 754-2019 minimum/maximum, canonical NaN, -0 < +0) and argmin, argmax (lowest index;
// the first NaN's index; -0 beats +0 for argmin, +0 for argmax) against the straightforward loop above.
TYPED_TEST_P(ReductionProperties, ExtremaAndTheirIndicesFollowIeee2019) {
  check_property([] {
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const sample<T> x = *gen::oneOf(special_samples<T>(), zero_samples<T>(),
                                      explicit_samples<T>(finite_values<T>(-3, 3), "explicit (near 1)"));
      const std::span<const T> values(x.values);
      const extremum_reference<T> lo = reference_extremum(values, true);
      const extremum_reference<T> hi = reference_extremum(values, false);
      RC_ASSERT(bits(TypeParam::min(values)) == bits(lo.value));
      RC_ASSERT(bits(TypeParam::max(values)) == bits(hi.value));
      RC_ASSERT(TypeParam::argmin(values) == lo.index);
      RC_ASSERT(TypeParam::argmax(values) == hi.index);
    });
  });
}

// Calls f.template operator()<Op>() for one of the four non-commutative operators.
template <class F>
void with_operator(int index, F&& f) {
  switch (index) {
    case 0:
      return f.template operator()<matrix_product>();
    case 1:
      return f.template operator()<affine_composition>();
    case 2:
      return f.template operator()<string_concatenation>();
    default:
      return f.template operator()<maximum_segment_sum>();
  }
}

// reduce.hpp / scan.hpp: the generic reduce and both scans never swap operands, so with an associative,
// non-commutative operator they equal the sequential left-to-right fold (and its prefixes), for every size and
// thread count.
TYPED_TEST_P(ReductionProperties, GenericReduceAndScansEqualTheLeftToRightFold) {
  check_property([] {
    const int op_index = *gen::inRange(0, 4);
    std::uint64_t n = *sizes();
    const std::uint64_t seed = *gen::inRange<std::uint64_t>(0, 1000);
    const typename TypeParam::config config = *TypeParam::configs();
    with_operator(op_index, [&]<class Op>() {
      using V = typename Op::value;
      if (std::same_as<Op, string_concatenation>) n = std::min<std::uint64_t>(n, 3000);  // quadratic reference
      RC_LOG() << Op::name << ", n " << n << ", seed " << seed << "\n";
      std::vector<V> x(n);
      for (std::uint64_t i = 0; i < n; ++i) x[i] = Op::make(seed, i);
      std::vector<V> inclusive(n), exclusive(n);
      V fold = Op::identity();
      for (std::uint64_t i = 0; i < n; ++i) {
        exclusive[i] = fold;
        fold = Op{}(fold, x[i]);
        inclusive[i] = fold;
      }
      const std::span<const V> in(x);
      RC_ASSERT(TypeParam::reduce(in, Op::identity(), Op{}, config) == fold);
      RC_ASSERT(TypeParam::inclusive_scan(in, Op{}, config) == inclusive);
      RC_ASSERT(TypeParam::exclusive_scan(in, Op::identity(), Op{}, config) == exclusive);
    });
  });
}

// scan.hpp: every prefix of the sum scans is the tree sum of that prefix, so the last inclusive output equals the
// reduction in the same association, bit for bit; exclusive outputs are the inclusive ones shifted, after -0.0. The
// same for a generic scan with a non-associative floating-point operator (which exposes any change of association).
TYPED_TEST_P(ReductionProperties, ScanPrefixesEqualTheReductionInTheSameAssociation) {
  check_property([] {
    with_type_pair(*type_pairs(), [&]<class A, class T>() {
      const sample<T> x = *gen::weightedOneOf<sample<T>>({{3, finite_samples<T, A>()}, {1, special_samples<T>()}});
      const std::span<const T> in(x.values);
      const std::size_t n = in.size();
      const typename TypeParam::config config = *TypeParam::configs();
      const std::vector<A> inclusive = TypeParam::template inclusive_sum_scan<A, T>(in, config);
      const std::vector<A> exclusive = TypeParam::template exclusive_sum_scan<A, T>(in, config);
      if (n == 0) return;
      RC_ASSERT(bits(inclusive.back()) == bits(TypeParam::template sum<A, T>(in, sum_method::tree, config)));
      const std::size_t i = *gen::inRange<std::size_t>(0, n);
      RC_ASSERT(bits(inclusive[i]) == bits(TypeParam::template sum<A, T>(in.first(i + 1), sum_method::tree, config)));
      RC_ASSERT(bits(exclusive[0]) == bits(negative_zero<A>()));
      for (std::size_t k = 1; k < n; ++k) RC_ASSERT(bits(exclusive[k]) == bits(inclusive[k - 1]));

      std::vector<A> widened(n);
      for (std::size_t k = 0; k < n; ++k) widened[k] = static_cast<A>(as_double(in[k]));
      const auto skewed = [](A l, A r) { return l * A(0.75) + r; };  // not associative: the association shows
      const std::vector<A> generic = TypeParam::inclusive_scan(std::span<const A>(widened), skewed, config);
      const A reduced = TypeParam::reduce(std::span<const A>(widened), A(0), skewed, config);
      // A user operator's NaN results carry whichever operand's payload the compiled code happens to propagate
      // (the compiler may swap the operands of +), so any NaN matches any NaN here; detred's own sums canonicalise.
      RC_ASSERT((std::isnan(generic.back()) && std::isnan(reduced)) || bits(generic.back()) == bits(reduced));
    });
  });
}

REGISTER_TYPED_TEST_SUITE_P(ReductionProperties, ProductWithinGammaNMinus1, ProductSpecialValuesFollowIeeeRules,
                            ExtremaAndTheirIndicesFollowIeee2019, GenericReduceAndScansEqualTheLeftToRightFold,
                            ScanPrefixesEqualTheReductionInTheSameAssociation);

}  // namespace detred::test
