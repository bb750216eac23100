// The operators behind product, dot, nrm2 and asum, shared by the CPU and CUDA backends (DETRED_HD): the same
// operator in the same canonical order gives the same bits on both. min/max/argmin/argmax need no operator here:
// src/cpu/extrema.cpp and, on the GPU, src/cuda/reduce/extrema.cuh.
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
