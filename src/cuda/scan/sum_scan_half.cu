// cuda sum scans of half inputs (sum_scan.cuh).
#include "src/cuda/scan/sum_scan.cuh"

DETRED_INSTANTIATE_CUDA_SUM_SCAN(float, detred::half)
