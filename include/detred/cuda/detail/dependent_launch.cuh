// Programmatic dependent launch (Hopper), host side: a kernel launched this way may be scheduled while the kernel
// before it on the stream is still running (its launch overlaps that kernel's tail). It must call
// cudaGridDependencySynchronize() before it reads what the earlier kernel wrote; the earlier kernel may call
// cudaTriggerProgrammaticLaunchCompletion() to let it be scheduled early. Used by every family's finishing kernels
// (sum, exact sum, generic reduce, extrema) and by the scans' early flag clearing.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "detred/cuda/error.hpp"

namespace detred::cuda::detail {

// Launches kernel<<<grid, block, dynamic_bytes, stream>>>(args...) with programmatic stream serialization; `what`
// names the launch in the error thrown if it fails.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t dynamic_bytes, cudaStream_t stream,
                      const char* what, Args... args) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = dynamic_bytes;
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  check(cudaLaunchKernelEx(&config, kernel, args...), what);
  check(cudaGetLastError(), what);
}

// A one-block finishing kernel of `threads` threads, launched as above.
template <class... Params, class... Args>
void launch_finishing_block(void (*kernel)(Params...), int threads, cudaStream_t stream, const char* what,
                            Args... args) {
  launch_dependent(kernel, dim3(1), dim3(unsigned(threads)), 0, stream, what, args...);
}

}  // namespace detred::cuda::detail
