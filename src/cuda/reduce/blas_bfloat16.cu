// cuda::dot, nrm2, asum for bfloat16 inputs (blas.cuh).
#include "src/cuda/reduce/blas.cuh"

DETRED_INSTANTIATE_CUDA_BLAS(float, detred::bfloat16)
DETRED_INSTANTIATE_CUDA_BLAS(double, detred::bfloat16)
