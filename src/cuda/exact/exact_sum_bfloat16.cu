// cuda::sum, sum_method::exact, for bfloat16 inputs (exact_sum_kernels.cuh).
#include "src/cuda/exact/exact_sum_kernels.cuh"

DETRED_INSTANTIATE_EXACT_SUM(float, detred::bfloat16)
DETRED_INSTANTIATE_EXACT_SUM(double, detred::bfloat16)
DETRED_INSTANTIATE_EXACT_STATE(detred::bfloat16)
