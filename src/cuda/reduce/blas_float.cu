// cuda::dot, nrm2, asum for float inputs (blas.cuh).
#include "src/cuda/reduce/blas.cuh"

DETRED_INSTANTIATE_CUDA_BLAS(float, float)
DETRED_INSTANTIATE_CUDA_BLAS(double, float)
