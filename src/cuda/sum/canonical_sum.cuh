// cuda::sum's entry point behind the header (include/detred/cuda/sum.hpp): argument checks, then the method's
// launcher. Instantiated per input type by canonical_sum_<type>.cu, so the type pairs compile in parallel.
#pragma once

#include <cstdint>
#include <string>

#include "detred/cuda/sum.hpp"
#include "src/cuda/common/workspace.hpp"
#include "src/cuda/exact/exact_sum.hpp"
#include "src/cuda/sum/canonical_sum_kernels.cuh"

namespace detred::cuda::detail {

template <class A, class T>
void sum_on_device(void* d_workspace, std::size_t workspace_bytes, const T* d_in, A* d_out, std::uint64_t n,
                   cudaStream_t stream, const sum_options& options) {
  const std::size_t needed = sum_workspace_size(n, options);  // also checks the options
  if (d_in == nullptr && n > 0) detred::detail::throw_invalid("cuda::sum", "d_in is null but n > 0");
  if (reinterpret_cast<std::uintptr_t>(d_in) % alignof(T) != 0)
    detred::detail::throw_invalid("cuda::sum", "d_in is not aligned to its element type");
  if (d_out == nullptr) detred::detail::throw_invalid("cuda::sum", "d_out is null");
  if (d_workspace == nullptr || reinterpret_cast<std::uintptr_t>(d_workspace) % 16 != 0)
    detred::detail::throw_invalid("cuda::sum", "d_workspace must be a 16-byte aligned device pointer");
  if (workspace_bytes < needed)
    detred::detail::throw_invalid("cuda::sum", "workspace_bytes is " + std::to_string(workspace_bytes) + ", " +
                                                   std::to_string(needed) + " needed (the size query's answer)");
  switch (options.method) {
    case sum_method::tree:
      return launch_canonical_sum<plain_accumulator<A>>(d_in, n, d_out, d_workspace, stream, options);
    case sum_method::tree_neumaier:
      return launch_canonical_sum<neumaier_accumulator<A>>(d_in, n, d_out, d_workspace, stream, options);
    default:  // sum_workspace_size let only exact through besides the two above
      return launch_exact_sum<A>(d_in, n, d_out, d_workspace, stream);
  }
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_CUDA_SUM(A, T)                                                                  \
  template void detred::cuda::detail::sum_on_device<A, T>(void*, std::size_t, const T*, A*, std::uint64_t, \
                                                          cudaStream_t, const detred::cuda::sum_options&);
