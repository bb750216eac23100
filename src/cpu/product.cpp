// product (reduce.hpp): the canonical order with plain multiplication, accumulated in A.
#include <cstddef>

#include "detred/detail/canonical_engine.hpp"
#include "detred/reduce.hpp"

namespace detred::detail {

template <class A, class T>
A product_n(const T* data, std::size_t n, const cpu_options& options) {
  auto load = [data](std::size_t i) { return widen<A>(data[i]); };
  auto multiply = [](A& left, const A& right) { left = left * right; };
  const std::optional<A> result = canonical_reduce<A>(n, load, multiply, options);
  return result ? canonicalize_nan(*result) : A(1);
}

#define DETRED_INSTANTIATE_PRODUCT(A, T) template A product_n<A, T>(const T*, std::size_t, const cpu_options&);
DETRED_INSTANTIATE_PRODUCT(float, half)
DETRED_INSTANTIATE_PRODUCT(double, half)
DETRED_INSTANTIATE_PRODUCT(float, bfloat16)
DETRED_INSTANTIATE_PRODUCT(double, bfloat16)
DETRED_INSTANTIATE_PRODUCT(float, float)
DETRED_INSTANTIATE_PRODUCT(double, float)
DETRED_INSTANTIATE_PRODUCT(double, double)
#undef DETRED_INSTANTIATE_PRODUCT

}  // namespace detred::detail
