// cuda::product for float inputs (product.cuh).
#include "src/cuda/reduce/product.cuh"

DETRED_INSTANTIATE_CUDA_PRODUCT(float, float)
DETRED_INSTANTIATE_CUDA_PRODUCT(double, float)
