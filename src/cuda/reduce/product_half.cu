// cuda::product for half inputs (product.cuh).
#include "src/cuda/reduce/product.cuh"

DETRED_INSTANTIATE_CUDA_PRODUCT(float, detred::half)
DETRED_INSTANTIATE_CUDA_PRODUCT(double, detred::half)
