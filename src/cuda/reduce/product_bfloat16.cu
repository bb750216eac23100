// cuda::product for bfloat16 inputs (product.cuh).
#include "src/cuda/reduce/product.cuh"

DETRED_INSTANTIATE_CUDA_PRODUCT(float, detred::bfloat16)
DETRED_INSTANTIATE_CUDA_PRODUCT(double, detred::bfloat16)
