// cuda sum scans of float inputs (sum_scan.cuh).
#include "src/cuda/scan/sum_scan.cuh"

DETRED_INSTANTIATE_CUDA_SUM_SCAN(float, float)
DETRED_INSTANTIATE_CUDA_SUM_SCAN(double, float)
