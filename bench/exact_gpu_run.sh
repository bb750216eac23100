#!/usr/bin/env bash
# One GPU run for the exact sum (docs/TESTING.md, "GPU exact sum"; docs/PERFORMANCE.md, "Exact sum"): the CPU exact
# tests, the host emulation of the kernel, the GPU exact tests, the GPU property suite's exact and sum cases, the
# benchmark, then compute-sanitizer memcheck and racecheck (DETRED_GPU_TEST_QUICK=1). Run from the carried folder
# holding the binaries; logs to $OUT, a summary on stdout.
set -u
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/summary.txt
run_test() {  # name timeout [args]
  local t=$1 limit=$2; shift 2
  [ -x ./$t ] || { echo "$t missing" | tee -a $OUT/summary.txt; return; }
  local start=$(date +%s); timeout $limit ./$t "$@" > $OUT/$t.txt 2>&1; local rc=$?
  echo "$t rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) |^\[  SKIPPED \] [0-9]' $OUT/$t.txt | tr '\n' ' ')" | tee -a $OUT/summary.txt
}
run_test test_exact_kernel_on_host 60
run_test test_exact 120
run_test test_cuda_exact_sum 150
run_test test_properties_cuda 120 --gtest_filter='*Exact*:*SumProperties*'
start=$(date +%s); timeout 200 ./bench_cuda_exact 15 ${BENCH_ARGS:-} > $OUT/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - start ))s" | tee -a $OUT/summary.txt
run_sanitizer() {  # tool filter
  local start=$(date +%s)
  DETRED_GPU_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $1 --error-exitcode 9 ./test_cuda_exact_sum \
    --gtest_filter=$2 > $OUT/san-$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - start ))s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  PASSED|^\[  FAILED' $OUT/san-$1.txt | tr '\n' ' ')" | tee -a $OUT/summary.txt
}
run_sanitizer memcheck '*EdgeCases*:*Window*:*Cancellation*:*Empty*'
run_sanitizer racecheck '*EdgeCases*'
cat $OUT/bench.txt
