#!/usr/bin/env bash
# One GPU run for the exact sum's exponent bins (issue 17; docs/EXACT.md "The exponent_bins algorithm"): the host
# emulation of the kernel, the CPU exact tests, the GPU exact tests, the benchmark with --variants (the default beside
# the former register-window default and other tunings, every data set, fp32/fp64/fp16/bf16, 1 GiB, then the 2^16
# latency), and compute-sanitizer memcheck and racecheck on a quick filter (DETRED_GPU_TEST_QUICK=1). Run from the
# carried folder (binaries, or bins.tar.xz holding them); logs to $OUT, one line per item on stdout. Worst case by the
# timeouts below: 7 minutes (40+50+90+150+55+55 s); expected under 3.
set -u
cd "$(dirname "$0")"
[ -f bins.tar.xz ] && { tar -xJf bins.tar.xz -C "${TMPDIR:-/tmp}" && cd "${TMPDIR:-/tmp}/i17-bins" || exit 3; }
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1)" | tee "$OUT/summary.txt"
run_test() {  # name timeout [args]
  local t=$1 limit=$2; shift 2
  [ -x ./$t ] || { echo "$t missing" | tee -a "$OUT/summary.txt"; return; }
  local start=$(date +%s); timeout -k 5 $limit ./$t "$@" > "$OUT/$t.txt" 2>&1; local rc=$?
  echo "$t rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) |^\[  SKIPPED \] [0-9]' "$OUT/$t.txt" | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
}
run_test test_exact_kernel_on_host 40
run_test test_exact 50
run_test test_cuda_exact_sum 90
start=$(date +%s); timeout -k 5 150 ./bench_cuda_exact 15 --variants > "$OUT/bench.txt" 2>&1
echo "bench rc=$? $(( $(date +%s) - start ))s $(tail -1 "$OUT/bench.txt")" | tee -a "$OUT/summary.txt"
# One line per timed figure: type, data set, GB/s, ratio to CUB, bits equal to the reference.
awk '/ n=/ && !/latency/ { t=$1; d=$2; for (i=1;i<=NF;i++) { if ($i=="CUB") cub=$(i+1); if ($i=="exact") ex=$(i+1); if ($i=="exact/CUB") r=$(i+1); if ($i=="exact==ref") ok=$(i+1) }; def=$5; gsub(/\]/,"",def); printf "%-4s %-10s default(%s) %7s GB/s %s xCUB ref=%s (CUB %s)\n", t, d, def, ex, r, ok, cub }
     /variant/ { for (i=1;i<=NF;i++) { if ($i ~ /^unroll=/) u=$i; if ($i ~ /^columns=/) c=$i; if ($i=="/CUB") r=$(i+1); if ($i=="exact==ref") ok=$(i+1) }; gb=$0; sub(/.*: */,"",gb); sub(/ GB\/s.*/,"",gb); printf "%-4s %-10s   %-6s %s %s %7s GB/s %s xCUB ref=%s\n", t, d, $2, u, c, gb, r, ok }
     /latency/ { print }' "$OUT/bench.txt" | tee -a "$OUT/summary.txt"
run_sanitizer() {  # tool filter
  local start=$(date +%s)
  DETRED_GPU_TEST_QUICK=1 timeout -k 5 55 compute-sanitizer --tool $1 --error-exitcode 9 ./test_cuda_exact_sum \
    --gtest_filter=$2 > "$OUT/san-$1.txt" 2>&1
  echo "$1 rc=$? $(( $(date +%s) - start ))s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  PASSED|^\[  FAILED' "$OUT/san-$1.txt" | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
}
run_sanitizer memcheck '*EdgeCases*:*Window*:*Cancellation*:*Empty*'
run_sanitizer racecheck '*EdgeCases*'
