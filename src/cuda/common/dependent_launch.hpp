// Programmatic dependent launch (Hopper) of a one-block finishing kernel: its launch overlaps the tail of the kernel
// before it on the stream. The finishing kernel must call cudaGridDependencySynchronize() before it reads what the
// earlier kernel wrote, and the earlier kernel may call cudaTriggerProgrammaticLaunchCompletion() to let it be
// scheduled early. Shared by the canonical sum and the exact sum.
#pragma once

#include <cuda_runtime.h>

#include "detred/cuda/error.hpp"

namespace detred::cuda::detail {

// Launches kernel<<<1, threads, 0, stream>>>(args...) with programmatic stream serialization; `what` names the launch
// in the error thrown if it fails. Each argument is converted to the kernel's parameter type.
template <class... Params, class... Args>
void launch_dependent_block(void (*kernel)(Params...), int threads, cudaStream_t stream, const char* what,
                            Args... args) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(unsigned(threads));
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  check(cudaLaunchKernelEx(&config, kernel, Params(args)...), what);
  check(cudaGetLastError(), what);
}

}  // namespace detred::cuda::detail
