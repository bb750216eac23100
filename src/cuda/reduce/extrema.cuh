// cuda::min, max, argmin, argmax (include/detred/cuda/extrema.hpp): the generic engine with the CPU's IEEE
// minimum/maximum operators (exact, so any association gives the CPU's bits; the canonical one is used anyway).
// argmin/argmax carry (value, index) nodes; the left operand covers lower indices, so ties keep the lowest index.
// Instantiated per input type by extrema_<type>.cu.
#pragma once

#include "detred/cuda/extrema.hpp"
#include "detred/cuda/transform_reduce.cuh"
#include "src/cuda/reduce/typed_maps.cuh"

namespace detred::cuda::detail {

template <class T>
void extremum_on_device(const T* d_in, std::uint64_t n, T* d_value_out, std::uint64_t* d_index_out, extremum_kind kind,
                        void* d_workspace, std::size_t workspace_bytes, cudaStream_t stream,
                        const launch_config& config) {
  namespace ops = detred::detail;
  const no_input* none = nullptr;
  switch (kind) {
    case extremum_kind::min:
      return transform_reduce_finalized<T, T, no_input>(d_in, none, n, d_value_out, d_workspace, workspace_bytes,
                                                        stream, same_map{}, ops::extremum_op<true, T>{},
                                                        value_or<T>{signed_infinity<T>(false)}, config, "cuda::min");
    case extremum_kind::max:
      return transform_reduce_finalized<T, T, no_input>(d_in, none, n, d_value_out, d_workspace, workspace_bytes,
                                                        stream, same_map{}, ops::extremum_op<false, T>{},
                                                        value_or<T>{signed_infinity<T>(true)}, config, "cuda::max");
    case extremum_kind::argmin:
      return transform_reduce_finalized<ops::arg_node<T>, T, no_input>(
          d_in, none, n, d_index_out, d_workspace, workspace_bytes, stream, arg_map<T>{},
          ops::arg_extremum_op<true, T>{}, index_or<T>{n}, config, "cuda::argmin");
    case extremum_kind::argmax:
      return transform_reduce_finalized<ops::arg_node<T>, T, no_input>(
          d_in, none, n, d_index_out, d_workspace, workspace_bytes, stream, arg_map<T>{},
          ops::arg_extremum_op<false, T>{}, index_or<T>{n}, config, "cuda::argmax");
  }
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_EXTREMA(T)                                                                   \
  template void detred::cuda::detail::extremum_on_device<T>(const T*, std::uint64_t, T*, std::uint64_t*,     \
                                                            detred::cuda::extremum_kind, void*, std::size_t, \
                                                            cudaStream_t, const detred::cuda::launch_config&);
