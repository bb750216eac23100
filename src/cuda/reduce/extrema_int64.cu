// cuda::min, max, argmin, argmax for std::int64_t inputs (extrema.cuh).
#include "src/cuda/reduce/extrema.cuh"

DETRED_INSTANTIATE_CUDA_EXTREMA(std::int64_t)
