// LayerNorm backward of half inputs (src/cuda/rows/layernorm_backward.cuh), compiled apart so the types build in
// parallel.
#include "src/cuda/rows/layernorm_backward.cuh"

DETRED_INSTANTIATE_LAYERNORM_BACKWARD(detred::half)
