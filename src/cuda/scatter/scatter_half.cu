// The scattered and segmented sums of half values (detred/cuda/scatter.hpp), both index types.
#include "src/cuda/scatter/scatter_host.cuh"

DETRED_CUDA_SCATTER_INSTANTIATE(detred::half)
