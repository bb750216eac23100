// cuda::inclusive_sum_scan / exclusive_sum_scan behind include/detred/cuda/scan.hpp: the generic Fenwick scan
// (include/detred/cuda/detail/scan_kernel.cuh) with exact widening, IEEE addition (round to nearest, no contraction)
// and canonical NaN outputs. Instantiated per input type by sum_scan_<type>.cu, so the type pairs compile in parallel.
#pragma once

#include "detred/cuda/detail/scan_kernel.cuh"
#include "detred/cuda/scan.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::cuda::detail {

template <class A>
struct widen_to {
  template <class T>
  __device__ __forceinline__ A operator()(const T& x) const {
    return widen<A>(x);
  }
};
struct ieee_add {
  __device__ __forceinline__ float operator()(float a, float b) const { return __fadd_rn(a, b); }
  __device__ __forceinline__ double operator()(double a, double b) const { return __dadd_rn(a, b); }
};
struct canonical_nan_output {
  template <class A>
  __device__ __forceinline__ A operator()(const A& x) const {
    return canonicalize_nan(x);
  }
};

template <class A, class T>
void sum_scan_on_device(void* d_workspace, const T* d_in, A* d_out, std::uint64_t n, bool exclusive,
                        cudaStream_t stream, const scan_options& options, const char* what) {
  run_fenwick_scan<A>(d_workspace, d_in, d_out, n, stream, options, widen_to<A>{}, ieee_add{}, canonical_nan_output{},
                      exclusive, negative_zero<A>(), what);
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_SUM_SCAN(A, T)                                                                         \
  template void detred::cuda::detail::sum_scan_on_device<A, T>(void*, const T*, A*, std::uint64_t, bool, cudaStream_t, \
                                                               const detred::cuda::scan_options&, const char*);
