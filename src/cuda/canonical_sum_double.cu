// cuda::sum for double inputs (canonical_sum.cuh).
#include "src/cuda/canonical_sum.cuh"

DETRED_INSTANTIATE_CUDA_SUM(double, double)
