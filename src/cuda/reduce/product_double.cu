// cuda::product for double inputs (product.cuh).
#include "src/cuda/reduce/product.cuh"

DETRED_INSTANTIATE_CUDA_PRODUCT(double, double)
