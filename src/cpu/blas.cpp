// dot, nrm2, asum (blas.hpp): the canonical order with the operators of detail/reduce_ops.hpp, which the CUDA
// backend uses too (src/cuda/reduce/blas.cuh).
#include <cmath>
#include <cstddef>

#include "detred/blas.hpp"

namespace detred::detail {

template <class A, class T>
A dot_n(const T* x, const T* y, std::size_t n, const cpu_options& options) {
  auto load = [x, y](std::size_t i) { return widen<A>(x[i]) * widen<A>(y[i]); };
  auto add = [](A& left, const A& right) { left = left + right; };
  const std::optional<A> result = canonical_reduce<A>(n, load, add, options);
  return result ? canonicalize_nan(*result) : negative_zero<A>();
}

template <class A, class T>
A nrm2_n(const T* x, std::size_t n, const cpu_options& options) {
  auto load = [x](std::size_t i) { return nrm2_leaf(widen<A>(x[i])); };
  auto merge = [](nrm2_node<A>& left, const nrm2_node<A>& right) { left = nrm2_op<A>{}(left, right); };
  const std::optional<nrm2_node<A>> result = canonical_reduce<nrm2_node<A>>(n, load, merge, options);
  if (!result) return A(0);
  return canonicalize_nan(A(result->scale * std::sqrt(result->ssq)));
}

template <class A, class T>
A asum_n(const T* x, std::size_t n, const cpu_options& options) {
  auto load = [x](std::size_t i) { return magnitude(widen<A>(x[i])); };
  auto add = [](A& left, const A& right) { left = left + right; };
  const std::optional<A> result = canonical_reduce<A>(n, load, add, options);
  return result ? canonicalize_nan(*result) : A(0);
}

#define DETRED_INSTANTIATE_BLAS(A, T)                                          \
  template A dot_n<A, T>(const T*, const T*, std::size_t, const cpu_options&); \
  template A nrm2_n<A, T>(const T*, std::size_t, const cpu_options&);          \
  template A asum_n<A, T>(const T*, std::size_t, const cpu_options&);
DETRED_INSTANTIATE_BLAS(float, half)
DETRED_INSTANTIATE_BLAS(double, half)
DETRED_INSTANTIATE_BLAS(float, bfloat16)
DETRED_INSTANTIATE_BLAS(double, bfloat16)
DETRED_INSTANTIATE_BLAS(float, float)
DETRED_INSTANTIATE_BLAS(double, float)
DETRED_INSTANTIATE_BLAS(double, double)
#undef DETRED_INSTANTIATE_BLAS

}  // namespace detred::detail
