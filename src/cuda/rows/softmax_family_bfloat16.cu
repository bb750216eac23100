// Log-softmax forward and the softmax family's backward calls of bfloat16 inputs (src/cuda/rows/softmax_family.cuh),
// compiled apart so the types build in parallel.
#include "src/cuda/rows/softmax_family.cuh"

DETRED_INSTANTIATE_SOFTMAX_FAMILY(detred::bfloat16)
