#!/usr/bin/env bash
# One GPU run for detred::nccl (docs/TESTING.md and docs/PERFORMANCE.md, "Distributed"), on the 2-GPU H200 machine:
# the NCCL tests (1 and 2 GPUs against the CPU), then the benchmark. Run from the carried folder; logs to $OUT.
# NCCL comes from the nvidia-nccl-cu13 Python package there; NVLink multicast stays off.
set -u
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=${NCCL_DEBUG:-WARN}
nccl_dir=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)
export LD_LIBRARY_PATH=$PWD:$nccl_dir/lib:${LD_LIBRARY_PATH:-}
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvidia-smi topo -m
  echo "NCCL: $nccl_dir/lib: $(ls $nccl_dir/lib 2>&1 | tr '\n' ' ')"
} > $OUT/summary.txt 2>&1
# The exact kernels gained a state-producing finish (src/cuda/exact/): their own test first.
start=$(date +%s); timeout 90 ./test_cuda_exact_sum > $OUT/test_cuda_exact_sum.txt 2>&1; rc=$?
echo "test_cuda_exact_sum rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) ' $OUT/test_cuda_exact_sum.txt | tr '\n' ' ')" | tee -a $OUT/summary.txt
start=$(date +%s); timeout ${TEST_TIMEOUT:-120} ./test_nccl > $OUT/test_nccl.txt 2>&1; rc=$?
echo "test_nccl rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) ' $OUT/test_nccl.txt | tr '\n' ' ')" | tee -a $OUT/summary.txt
start=$(date +%s); timeout ${BENCH_TIMEOUT:-150} ./bench_nccl ${ITERATIONS:-30} > $OUT/bench_nccl.txt 2>&1; rc=$?
echo "bench_nccl rc=$rc $(( $(date +%s) - start ))s" | tee -a $OUT/summary.txt
cat $OUT/bench_nccl.txt
