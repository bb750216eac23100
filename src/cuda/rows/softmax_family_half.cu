// Log-softmax forward and the softmax family's backward calls of half inputs (src/cuda/rows/softmax_family.cuh),
// compiled apart so the types build in parallel.
#include "src/cuda/rows/softmax_family.cuh"

DETRED_INSTANTIATE_SOFTMAX_FAMILY(detred::half)
