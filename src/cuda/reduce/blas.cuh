// cuda::dot, nrm2, asum (include/detred/cuda/blas.hpp): the generic engine with the map fused into the loads and the
// CPU's operators (detail/reduce_ops.hpp). Instantiated per input type by blas_<type>.cu.
#pragma once

#include "detred/cuda/blas.hpp"
#include "detred/cuda/transform_reduce.cuh"
#include "src/cuda/reduce/typed_maps.cuh"

namespace detred::cuda::detail {

template <class A, class T>
void blas_on_device(const T* d_x, const T* d_y, std::uint64_t n, A* d_out, blas_kind kind, void* d_workspace,
                    std::size_t workspace_bytes, cudaStream_t stream, const launch_config& config) {
  namespace ops = detred::detail;
  const no_input* none = nullptr;
  switch (kind) {
    case blas_kind::dot:
      return transform_reduce_finalized<A, T, T>(d_x, d_y, n, d_out, d_workspace, workspace_bytes, stream, dot_map<A>{},
                                                 ops::plus_op<A>{}, value_or<A>{negative_zero<A>()}, config,
                                                 "cuda::dot");
    case blas_kind::nrm2:
      return transform_reduce_finalized<ops::nrm2_node<A>, T, no_input>(
          d_x, none, n, d_out, d_workspace, workspace_bytes, stream, nrm2_map<A>{}, ops::nrm2_op<A>{},
          nrm2_finalize<A>{}, config, "cuda::nrm2");
    case blas_kind::asum:
      return transform_reduce_finalized<A, T, no_input>(d_x, none, n, d_out, d_workspace, workspace_bytes, stream,
                                                        abs_map<A>{}, ops::plus_op<A>{}, value_or<A>{A(0)}, config,
                                                        "cuda::asum");
  }
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_BLAS(A, T)                                                                            \
  template void detred::cuda::detail::blas_on_device<A, T>(const T*, const T*, std::uint64_t, A*,                     \
                                                           detred::cuda::blas_kind, void*, std::size_t, cudaStream_t, \
                                                           const detred::cuda::launch_config&);
