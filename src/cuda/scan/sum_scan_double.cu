// cuda sum scans of double inputs (sum_scan.cuh).
#include "src/cuda/scan/sum_scan.cuh"

DETRED_INSTANTIATE_CUDA_SUM_SCAN(double, double)
