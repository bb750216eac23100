// cuda::sum for float inputs (canonical_sum.cuh).
#include "src/cuda/sum/canonical_sum.cuh"

DETRED_INSTANTIATE_CUDA_SUM(float, float)
DETRED_INSTANTIATE_CUDA_SUM(double, float)
