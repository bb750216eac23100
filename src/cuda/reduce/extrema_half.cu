// cuda::min, max, argmin, argmax for half inputs (extrema.cuh).
#include "src/cuda/reduce/extrema.cuh"

DETRED_INSTANTIATE_CUDA_EXTREMA(detred::half)
