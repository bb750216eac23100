// cuda::dot, nrm2, asum (include/detred/cuda/blas.hpp): the generic engine with the map fused into the loads and the
// CPU's operators (detail/reduce_ops.hpp). Instantiated per input type by blas_<type>.cu.
#pragma once

#include "detred/cuda/blas.hpp"
#include "detred/cuda/detail/generic_reduce_engine.cuh"
#include "src/cuda/reduce/typed_maps.cuh"

namespace detred::cuda::detail {

template <class A, class T>
void blas_on_device(void* d_workspace, std::size_t& workspace_bytes, const T* d_x, const T* d_y, A* d_out,
                    std::uint64_t n, blas_kind kind, cudaStream_t stream, const reduce_options& options) {
  namespace ops = detred::detail;
  const no_input* none = nullptr;
  switch (kind) {
    case blas_kind::dot:
      return generic_reduce<A, T, T>(d_workspace, workspace_bytes, d_x, d_y, d_out, n, dot_map<A>{}, ops::plus_op<A>{},
                                     value_or<A>{negative_zero<A>()}, stream, options, "cuda::dot");
    case blas_kind::nrm2:
      return generic_reduce<ops::nrm2_node<A>, T, no_input>(d_workspace, workspace_bytes, d_x, none, d_out, n,
                                                            nrm2_map<A>{}, ops::nrm2_op<A>{}, nrm2_finalize<A>{},
                                                            stream, options, "cuda::nrm2");
    case blas_kind::asum:
      return generic_reduce<A, T, no_input>(d_workspace, workspace_bytes, d_x, none, d_out, n, abs_map<A>{},
                                            ops::plus_op<A>{}, value_or<A>{A(0)}, stream, options, "cuda::asum");
  }
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_BLAS(A, T)                                                                             \
  template void detred::cuda::detail::blas_on_device<A, T>(void*, std::size_t&, const T*, const T*, A*, std::uint64_t, \
                                                           detred::cuda::detail::blas_kind, cudaStream_t,              \
                                                           const detred::cuda::reduce_options&);
