// cuda::product (include/detred/cuda/reduce.hpp): the generic engine with exact widening and plain multiplication.
// Instantiated per input type by product_<type>.cu.
#pragma once

#include "detred/cuda/detail/generic_reduce_engine.cuh"
#include "detred/cuda/reduce.hpp"
#include "src/cuda/reduce/typed_maps.cuh"

namespace detred::cuda::detail {

template <class A, class T>
void product_on_device(void* d_workspace, std::size_t& workspace_bytes, const T* d_in, A* d_out, std::uint64_t n,
                       cudaStream_t stream, const reduce_options& options) {
  generic_reduce<A, T, no_input>(d_workspace, workspace_bytes, d_in, static_cast<const no_input*>(nullptr), d_out, n,
                                 widen_map<A>{}, detred::detail::multiply_op<A>{}, value_or<A>{A(1)}, stream, options,
                                 "cuda::product");
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_PRODUCT(A, T)                                                                   \
  template void detred::cuda::detail::product_on_device<A, T>(void*, std::size_t&, const T*, A*, std::uint64_t, \
                                                              cudaStream_t, const detred::cuda::reduce_options&);
