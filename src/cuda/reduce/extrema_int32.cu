// cuda::min, max, argmin, argmax for std::int32_t inputs (extrema.cuh).
#include "src/cuda/reduce/extrema.cuh"

DETRED_INSTANTIATE_CUDA_EXTREMA(std::int32_t)
