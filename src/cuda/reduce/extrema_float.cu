// cuda::min, max, argmin, argmax for float inputs (extrema.cuh).
#include "src/cuda/reduce/extrema.cuh"

DETRED_INSTANTIATE_CUDA_EXTREMA(float)
