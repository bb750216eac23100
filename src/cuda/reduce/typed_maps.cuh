// The maps and finalizers that turn the generic engine (detred/cuda/detail/generic_reduce_engine.cuh) into product
// and BLAS-1 reductions with the CPU's operators (detail/reduce_ops.hpp) and the CPU's empty-input and NaN rules.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "detred/detail/reduce_ops.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda::detail {

// Exact widening; half through the hardware conversion (exact, like widen, one instruction).
template <class A, class T>
__device__ __forceinline__ A widen_on_device(T x) {
  if constexpr (std::is_same_v<T, half>)
    return A(__half2float(__ushort_as_half(x.bits)));
  else
    return widen<A>(x);
}

template <class A>
struct widen_map {
  template <class T>
  __device__ A operator()(T x) const {
    return widen_on_device<A>(x);
  }
};
template <class A>
struct dot_map {
  template <class T>
  __device__ A operator()(T x, T y) const {
    return widen_on_device<A>(x) * widen_on_device<A>(y);
  }
};
template <class A>
struct abs_map {
  template <class T>
  __device__ A operator()(T x) const {
    return detred::magnitude(widen_on_device<A>(x));
  }
};
template <class A>
struct nrm2_map {
  template <class T>
  __device__ detred::detail::nrm2_node<A> operator()(T x) const {
    return detred::detail::nrm2_leaf(widen_on_device<A>(x));
  }
};

// Result rules: the empty result, NaN canonicalised.
template <class A>
struct value_or {
  A empty_value;
  __device__ A operator()(bool empty, A root) const { return empty ? empty_value : canonicalize_nan(root); }
};
template <class A>
struct nrm2_finalize {
  __device__ A operator()(bool empty, detred::detail::nrm2_node<A> root) const {
    if (empty) return A(0);
    return canonicalize_nan(A(root.scale * sqrt(root.ssq)));
  }
};

}  // namespace detred::cuda::detail
