// cuda::dot, nrm2, asum for double inputs (blas.cuh).
#include "src/cuda/reduce/blas.cuh"

DETRED_INSTANTIATE_CUDA_BLAS(double, double)
