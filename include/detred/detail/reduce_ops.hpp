// The operators behind product, min/max/argmin/argmax, dot, nrm2 and asum, shared by the CPU and CUDA backends
// (DETRED_HD): the same operator in the same canonical order gives the same bits on both.
#pragma once

#include <cstdint>
#include <type_traits>

#include "detred/config.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::detail {

template <class A>
struct multiply_op {
  DETRED_HD A operator()(A left, A right) const { return left * right; }
};
template <class A>
struct plus_op {
  DETRED_HD A operator()(A left, A right) const { return left + right; }
};

// The comparison type of an input: float for 16-bit inputs (exact widening), else the input type.
template <class T>
using compare_type = std::conditional_t<(sizeof(T) == 2), float, T>;

template <class T>
DETRED_HD bool negative_sign(T x) {
  return (bits_of(x) >> (8 * sizeof(T) - 1)) != 0;
}

// True when x beats best under IEEE 754-2019 minimum (Min) or maximum, neither being NaN: strictly better, or the
// better-signed zero (-0 for minimum, +0 for maximum).
template <bool Min, class T>
DETRED_HD bool better_than(T x, T best) {
  const compare_type<T> v = widen<compare_type<T>>(x), b = widen<compare_type<T>>(best);
  if (Min ? v < b : v > b) return true;
  return v == 0 && b == 0 && negative_sign(x) == Min && negative_sign(best) != Min;
}

// IEEE 754-2019 minimum (Min) / maximum: NaN if either operand is NaN (the left one's when both are), -0 < +0.
// Exact, associative and commutative; the result is canonicalised (canonicalize_nan) at the end.
template <bool Min, class T>
struct extremum_op {
  DETRED_HD T operator()(T left, T right) const {
    const compare_type<T> a = widen<compare_type<T>>(left), b = widen<compare_type<T>>(right);
    if (a != a) return left;
    if (b != b) return right;
    if (Min ? b < a : b > a) return right;
    // Equal values: the same bits, except for zeros, where minimum wants -0 and maximum +0.
    return (a == b && negative_sign(right) == Min) ? right : left;
  }
};

// argmin / argmax: a value and its index. The left operand always covers lower indices (canonical order), so keeping
// the left one on ties and the first NaN gives the lowest index of the extreme, or of the first NaN.
template <class T>
struct arg_node {
  T value;
  std::uint64_t index;
};
template <bool Min, class T>
struct arg_extremum_op {
  DETRED_HD arg_node<T> operator()(arg_node<T> left, arg_node<T> right) const {
    if (is_nan(left.value)) return left;
    if (is_nan(right.value)) return right;
    return better_than<Min>(right.value, left.value) ? right : left;
  }
};

template <class A>
DETRED_HD A magnitude(A x) {
  return detred::bit_cast<A>(bits_of(x) & ~(typename float_traits<A>::bits_type{1} << (8 * sizeof(A) - 1)));
}

// nrm2 as a scaled sum of squares (LAPACK's idea, in the canonical order): the node (scale, ssq) stands for
// scale^2 * ssq with scale = the largest |x| of its subtree, so no square overflows or underflows to zero before it
// must. Leaves: (|x|, 1), or (0, 0) for zeros. A merge rescales the smaller side by (s_small / s_big)^2 <= 1.
// NaN anywhere gives NaN; otherwise an infinite |x| gives +Inf. Result: scale * sqrt(ssq).
template <class A>
struct nrm2_node {
  A scale;
  A ssq;
};
template <class A>
DETRED_HD nrm2_node<A> nrm2_leaf(A x) {
  const A a = magnitude(x);
  return {a, a == A(0) ? A(0) : A(1)};
}
template <class A>
struct nrm2_op {
  DETRED_HD nrm2_node<A> operator()(nrm2_node<A> l, nrm2_node<A> r) const {
    if (l.scale != l.scale) return l;
    if (r.scale != r.scale) return r;
    const A big = l.scale < r.scale ? r.scale : l.scale;
    if (big == A(0)) return {A(0), A(0)};
    if (!is_finite(big)) return {big, A(1)};
    A ql = l.ssq, qr = r.ssq;
    if (l.scale != big) {
      const A ratio = l.scale / big;
      ql = (ratio * ratio) * ql;
    }
    if (r.scale != big) {
      const A ratio = r.scale / big;
      qr = (ratio * ratio) * qr;
    }
    return {big, ql + qr};
  }
};

}  // namespace detred::detail
