// The scattered and segmented sums of bfloat16 values (detred/cuda/scatter.hpp), both index types.
#include "src/cuda/scatter/scatter_host.cuh"

DETRED_CUDA_SCATTER_INSTANTIATE(detred::bfloat16)
