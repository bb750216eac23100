// cuda::sum's entry point behind the header (include/detred/cuda/sum.hpp): argument checks, then the method's
// accumulator. Instantiated per input type by canonical_sum_<type>.cu, so the type pairs compile in parallel.
#pragma once

#include <string>

#include "detred/cuda/sum.hpp"
#include "src/cuda/exact/exact_sum.hpp"
#include "src/cuda/sum/canonical_sum_kernels.cuh"

namespace detred::cuda::detail {

template <class A, class T>
void sum_on_device(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, std::size_t workspace_bytes,
                   cudaStream_t stream, sum_method method, const launch_config& config) {
  validate(config);
  if (d_in == nullptr && n > 0) detred::detail::throw_invalid("cuda::sum", "d_in is null but n > 0");
  if (reinterpret_cast<std::uintptr_t>(d_in) % alignof(T) != 0)
    detred::detail::throw_invalid("cuda::sum", "d_in is not aligned to its element type");
  if (d_out == nullptr) detred::detail::throw_invalid("cuda::sum", "d_out is null");
  if (d_workspace == nullptr || reinterpret_cast<std::uintptr_t>(d_workspace) % 16 != 0)
    detred::detail::throw_invalid("cuda::sum", "d_workspace must be a 16-byte aligned device pointer");
  if (workspace_bytes < workspace_bytes_for(n))
    detred::detail::throw_invalid("cuda::sum", "workspace too small: " + std::to_string(workspace_bytes) + " bytes, " +
                                                   std::to_string(workspace_bytes_for(n)) +
                                                   " needed (sum_workspace_bytes)");
  switch (method) {
    case sum_method::tree:
      return launch_canonical_sum<plain_accumulator<A>>(d_in, n, d_out, d_workspace, stream, config);
    case sum_method::tree_neumaier:
      return launch_canonical_sum<neumaier_accumulator<A>>(d_in, n, d_out, d_workspace, stream, config);
    case sum_method::exact:  // src/cuda/exact/: launch_config changes nothing (the bits cannot depend on it)
      return launch_exact_sum<A>(d_in, n, d_out, d_workspace, stream);
    default:
      detred::detail::throw_invalid("cuda::sum",
                                    std::string("sum_method::") + std::string(to_string(method)) +
                                        " is sequential and has no GPU version; use tree, tree_neumaier or exact");
  }
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_SUM(A, T)                                                                  \
  template void detred::cuda::detail::sum_on_device<A, T>(const T*, std::uint64_t, A*, void*, std::size_t, \
                                                          cudaStream_t, detred::sum_method,                \
                                                          const detred::cuda::launch_config&);
