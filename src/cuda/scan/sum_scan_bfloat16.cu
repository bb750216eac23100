// cuda sum scans of bfloat16 inputs (sum_scan.cuh).
#include "src/cuda/scan/sum_scan.cuh"

DETRED_INSTANTIATE_CUDA_SUM_SCAN(float, detred::bfloat16)
