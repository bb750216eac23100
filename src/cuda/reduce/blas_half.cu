// cuda::dot, nrm2, asum for half inputs (blas.cuh).
#include "src/cuda/reduce/blas.cuh"

DETRED_INSTANTIATE_CUDA_BLAS(float, detred::half)
DETRED_INSTANTIATE_CUDA_BLAS(double, detred::half)
