#!/usr/bin/env bash
# One GPU run for issue 14's generic-engine variants (docs/PERFORMANCE.md, "GPU: the reduce family"): the engine
# sweep (every DETRED_GENERIC_ENGINE variant for reduce<plus<float>>, product<f32>, dot<f32> against CUB in the same
# rounds, with a bit check), the full bench twice, then the two GPU test programs (every variant against the CPU's
# bits). Binaries (built here, stripped) come as carry/i14/bins.tar.xz next to this script; logs to $OUT; a short
# summary on stdout. About 3-4 minutes on an H100.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/i14-out}
mkdir -p "$OUT" /tmp/i14x
python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$here/bins.tar.xz" /tmp/i14x || exit 1
cd /tmp/i14x || exit 1
begin=$(date +%s)
elapsed() { echo $(( $(date +%s) - begin )); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/summary.txt"
timeout 100 ./bench_cuda_reduce --reps 30 --engine-sweep 5 > "$OUT/engine-sweep.txt" 2>&1
echo "engine-sweep rc=$? (0: all variants same bits; 2: a mismatch) $(elapsed)s" | tee -a "$OUT/summary.txt"
sed -n '/engine-sweep summary/,$p' "$OUT/engine-sweep.txt" | tee -a "$OUT/summary.txt"
for r in 1 2; do
  timeout 80 ./bench_cuda_reduce --reps 30 > "$OUT/bench-run$r.txt" 2>&1
  echo "bench run $r rc=$? $(elapsed)s" | tee -a "$OUT/summary.txt"
  grep -E "read ceiling|cub/sum|dc::sum|reduce<plus|product|cub/reduce|dot/f32|transform_reduce\(dot\)/f32" \
    "$OUT/bench-run$r.txt" | tee -a "$OUT/summary.txt"
done
run_test() {  # name [gtest filter]
  local start=$(date +%s)
  timeout 120 ./$1 ${2:+--gtest_filter=$2} > "$OUT/$1${2:+-part}.txt" 2>&1
  echo "$1 ${2:-} rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/$1${2:+-part}.txt" | tr '\n' ' ')" |
    tee -a "$OUT/summary.txt"
  grep -E "^\[  FAILED|Failure|engine=" "$OUT/$1${2:+-part}.txt" | head -5 | tee -a "$OUT/summary.txt"
}
run_test test_cuda_generic_reduce
run_test test_cuda_reduce_family '-*MoreThanTwoToThe31*'
if [ "$(elapsed)" -lt 170 ]; then
  start=$(date +%s)
  timeout 60 ./test_cuda_reduce_family --gtest_filter='*MoreThanTwoToThe31*' > "$OUT/test_cuda_reduce_family-2e31.txt" 2>&1
  echo "test_cuda_reduce_family 2^31 rc=$? $(( $(date +%s) - start ))s" | tee -a "$OUT/summary.txt"
else
  echo "test_cuda_reduce_family 2^31: skipped (time; $(elapsed)s used)" | tee -a "$OUT/summary.txt"
fi
echo "total $(elapsed)s" | tee -a "$OUT/summary.txt"
