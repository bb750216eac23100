// cuda::product (include/detred/cuda/reduce.hpp): the generic engine with exact widening and plain multiplication.
// Instantiated per input type by product_<type>.cu.
#pragma once

#include "detred/cuda/reduce.hpp"
#include "detred/cuda/transform_reduce.cuh"
#include "src/cuda/reduce/typed_maps.cuh"

namespace detred::cuda::detail {

template <class A, class T>
void product_on_device(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, std::size_t workspace_bytes,
                       cudaStream_t stream, const launch_config& config) {
  transform_reduce_finalized<A, T, no_input>(d_in, static_cast<const no_input*>(nullptr), n, d_out, d_workspace,
                                             workspace_bytes, stream, widen_map<A>{}, detred::detail::multiply_op<A>{},
                                             value_or<A>{A(1)}, config, "cuda::product");
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_PRODUCT(A, T)                                                                  \
  template void detred::cuda::detail::product_on_device<A, T>(const T*, std::uint64_t, A*, void*, std::size_t, \
                                                              cudaStream_t, const detred::cuda::launch_config&);
