#!/usr/bin/env bash
# One GPU run for the reduce family (docs/TESTING.md, "GPU reduce family"): the GPU tests, the RapidCheck property
# suite, compute-sanitizer memcheck (DETRED_GPU_TEST_QUICK=1), the worked examples, the benchmark. Binaries (built
# here, stripped) come as carry/i14/bins.tar.xz; run from the repository root; logs to $OUT.
set -u
mkdir -p /tmp/i14 && tar -C /tmp/i14 -xJf carry/i14/bins.tar.xz && cd /tmp/i14 || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/summary.txt
for t in test_cuda_generic_reduce test_cuda_reduce_family test_reduce_properties_cuda; do
  start=$(date +%s); timeout ${T_LIMIT:-150} ./$t > $OUT/$t.txt 2>&1; rc=$?
  echo "$t rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) ' $OUT/$t.txt | tr '\n' ' ')" | tee -a $OUT/summary.txt
done
./detred-worked-examples >> $OUT/summary.txt 2>&1; echo "worked rc=$?" | tee -a $OUT/summary.txt
cublas=$(find / -xdev -name 'libcublas.so.1[0-9]*' -not -name '*Lt*' 2>/dev/null | head -1)
echo "cublas: ${cublas:-none}" | tee -a $OUT/summary.txt
DETRED_CUBLAS=$cublas timeout 120 ./bench_cuda_reduce --reps 30 ${BENCH_ARGS:-} > $OUT/bench.txt 2>&1
echo "bench rc=$?" | tee -a $OUT/summary.txt
# memcheck with DETRED_GPU_TEST_QUICK=1 (5 configurations, sizes up to two tiles), without the 8 GiB case.
run_sanitizer() {  # tool test filter
  DETRED_GPU_TEST_QUICK=1 timeout 100 compute-sanitizer --tool $1 --error-exitcode 9 ./$2 --gtest_filter=$3 \
    > $OUT/san-$1-$2.txt 2>&1
  echo "$1 $2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $OUT/san-$1-$2.txt | tr '\n' ' ')" | tee -a $OUT/summary.txt
}
run_sanitizer memcheck test_cuda_generic_reduce '*'
run_sanitizer memcheck test_cuda_reduce_family '-*MoreThanTwoToThe31*'
[ -n "${RACECHECK:-}" ] && run_sanitizer racecheck test_cuda_generic_reduce '*MaximumSegment*:*ByteString*'
true
