// The row reductions of half inputs (src/cuda/rows/row_kernels.cuh), compiled apart so the types build in parallel.
#include "src/cuda/rows/row_kernels.cuh"

DETRED_INSTANTIATE_ROWS(detred::half)
