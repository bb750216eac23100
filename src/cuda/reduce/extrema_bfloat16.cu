// cuda::min, max, argmin, argmax for bfloat16 inputs (extrema.cuh).
#include "src/cuda/reduce/extrema.cuh"

DETRED_INSTANTIATE_CUDA_EXTREMA(detred::bfloat16)
