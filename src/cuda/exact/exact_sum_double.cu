// cuda::sum, sum_method::exact, for double inputs (exact_sum_kernels.cuh).
#include "src/cuda/exact/exact_sum_kernels.cuh"

DETRED_INSTANTIATE_EXACT_SUM(double, double)
DETRED_INSTANTIATE_EXACT_STATE(double)
