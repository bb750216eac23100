// cuda::sum for half inputs (canonical_sum.cuh).
#include "src/cuda/sum/canonical_sum.cuh"

DETRED_INSTANTIATE_CUDA_SUM(float, detred::half)
DETRED_INSTANTIATE_CUDA_SUM(double, detred::half)
