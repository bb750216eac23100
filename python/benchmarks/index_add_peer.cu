// A C entry point to detred::cuda::index_add for bench_index_add_peer.py, so that detred's index_add and PyTorch's
// index_add_ run in one process on the same tensors. Build (sm_90, from the repository root, after the CUDA library):
//   nvcc -shared -std=c++20 -arch=sm_90 -Xcompiler -fPIC -I include -I . python/benchmarks/index_add_peer.cu \
//        -L build/src/cuda -ldetred_cuda -cudart static -o index_add_peer.so
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <iostream>

#include "detred/cuda/scatter.hpp"
#include "detred/types/bfloat16.hpp"

// out[index[i], :] += source[i, :] for bf16 rows [n x d] into fp32 [m x d], on the legacy default stream. The workspace
// size when workspace is null. Returns 0, or 1 after printing the error.
extern "C" int detred_index_add_bf16(void* workspace, std::size_t* bytes, const void* source, const std::int64_t* index,
                                     float* out, std::uint64_t n, std::uint64_t m, std::uint64_t d) {
  try {
    detred::cuda::index_add(workspace, *bytes, static_cast<const detred::bfloat16*>(source), index, out, n, m, d,
                            cudaStream_t{});
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
