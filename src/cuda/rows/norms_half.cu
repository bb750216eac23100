// LayerNorm, RMSNorm (forward and backward) and softmax of half inputs (src/cuda/rows/norms.cuh), compiled apart so the
// types build in parallel.
#include "src/cuda/rows/norms.cuh"
#include "src/cuda/rows/rmsnorm_backward.cuh"

DETRED_INSTANTIATE_NORMS(detred::half)
