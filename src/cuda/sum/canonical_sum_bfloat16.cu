// cuda::sum for bfloat16 inputs (canonical_sum.cuh).
#include "src/cuda/sum/canonical_sum.cuh"

DETRED_INSTANTIATE_CUDA_SUM(float, detred::bfloat16)
DETRED_INSTANTIATE_CUDA_SUM(double, detred::bfloat16)
