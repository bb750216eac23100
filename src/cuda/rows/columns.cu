// Column sums of half, bfloat16 and float inputs (src/cuda/rows/columns.cuh).
#include "src/cuda/rows/columns.cuh"

#define DETRED_INSTANTIATE_COLUMNS(T)                                                                        \
  template void detred::cuda::column_sum<T>(void*, std::size_t&, const T*, float*, const detred::row_shape&, \
                                            cudaStream_t, const detred::cuda::column_options&);
DETRED_INSTANTIATE_COLUMNS(float)
DETRED_INSTANTIATE_COLUMNS(detred::bfloat16)
DETRED_INSTANTIATE_COLUMNS(detred::half)
