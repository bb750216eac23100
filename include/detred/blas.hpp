// Reproducible BLAS-1 reductions and the generic map-reduce on the CPU backend, in the canonical order
// (docs/ORDER.md): the same bits for every thread count, and the same bits as detred::cuda (cuda/blas.hpp,
// cuda/transform_reduce.cuh) for every launch configuration.
//
// - dot(x, y, n): sum of widen(x[i]) * widen(y[i]) (one rounding per product in Acc, no fused multiply-add) in the
//   canonical order; |error| <= gamma_{h(n)+1} sum |x_i y_i| (h(n) of docs/ORDER.md). Empty: -0.0. bf16 x bf16
//   products are exact in float.
// - nrm2(x, n): sqrt(sum x_i^2) as a scaled sum of squares (node (scale, ssq), scale = the largest |x| of the
//   subtree, detail/reduce_ops.hpp): no overflow or underflow of squares before the result itself overflows or
//   underflows. NaN if any input is NaN, else +Inf if any is infinite. Empty: +0.0.
// - asum(x, n): sum of |x[i]| in the canonical order; |error| <= gamma_{h(n)} sum |x_i|. Empty: +0.0.
// NaN results are the canonical NaN. Acc: float or double, the default as for sum (float for 16-bit inputs).
#pragma once

#include <cstddef>
#include <optional>

#include "detred/detail/canonical_engine.hpp"
#include "detred/detail/reduce_ops.hpp"
#include "detred/reduce.hpp"

namespace detred {

namespace detail {
template <class A, class T>
A dot_n(const T* x, const T* y, std::size_t n, const cpu_options& options);
template <class A, class T>
A nrm2_n(const T* x, std::size_t n, const cpu_options& options);
template <class A, class T>
A asum_n(const T* x, std::size_t n, const cpu_options& options);
}  // namespace detail

template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> dot(const T* x, const T* y, std::size_t n,
                                                                               const cpu_options& options = {}) {
  detail::require_data(x, n, "dot");
  detail::require_data(y, n, "dot");
  return detail::dot_n<accumulation_for<Acc, T>>(x, y, n, options);
}
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> nrm2(const T* x, std::size_t n,
                                                                                const cpu_options& options = {}) {
  detail::require_data(x, n, "nrm2");
  return detail::nrm2_n<accumulation_for<Acc, T>>(x, n, options);
}
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> asum(const T* x, std::size_t n,
                                                                                const cpu_options& options = {}) {
  detail::require_data(x, n, "asum");
  return detail::asum_n<accumulation_for<Acc, T>>(x, n, options);
}

// Generic map-reduce, arguments in std::transform_reduce's order (init, reduce, transform): transform(x[0]) (+) ...
// (+) transform(x[n-1]) in the canonical order, (+) = reduce_op(left, right), operands never swapped; `identity` when
// n == 0 (never combined with an input). transform may take (x) or (x, i) (the element's index). Same bits for every
// thread count, and as cuda::transform_reduce with the same operators.
template <class Node, class T, class Op, class Map>
Node transform_reduce(const T* data, std::size_t n, Node identity, Op reduce_op, Map transform_op,
                      const cpu_options& options = {}) {
  detail::require_data(data, n, "transform_reduce");
  auto load = [&](std::size_t i) -> Node {
    if constexpr (std::is_invocable_v<const Map&, const T&, std::uint64_t>)
      return transform_op(data[i], std::uint64_t(i));
    else
      return transform_op(data[i]);
  };
  auto combine = [&reduce_op](Node& left, const Node& right) { left = reduce_op(left, right); };
  std::optional<Node> result = detail::canonical_reduce<Node>(n, load, combine, options);
  return result ? *result : identity;
}

}  // namespace detred
