// cuda::sum, sum_method::exact, for half inputs (exact_sum_kernels.cuh).
#include "src/cuda/exact/exact_sum_kernels.cuh"

DETRED_INSTANTIATE_EXACT_SUM(float, detred::half)
DETRED_INSTANTIATE_EXACT_SUM(double, detred::half)
DETRED_INSTANTIATE_EXACT_STATE(detred::half)
