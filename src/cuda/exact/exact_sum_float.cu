// cuda::sum, sum_method::exact, for float inputs (exact_sum_kernels.cuh).
#include "src/cuda/exact/exact_sum_kernels.cuh"

DETRED_INSTANTIATE_EXACT_SUM(float, float)
DETRED_INSTANTIATE_EXACT_SUM(double, float)
DETRED_INSTANTIATE_EXACT_STATE(float)
