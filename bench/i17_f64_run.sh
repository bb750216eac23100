#!/usr/bin/env bash
# One GPU run for binary64's adjacent windows (issue 17; docs/EXACT.md "Adjacent windows for binary64"). Run from the
# repository root on the GPU machine, the built binaries in the folder $1 (bench_cuda_exact, test_cuda_exact_sum, each
# either in $1 itself or where a build tree has them, $1/bench and $1/tests):
#   bench/i17_f64_run.sh carry-f64/
#   bench/i17_f64_run.sh build      (carrying build/bench/bench_cuda_exact and build/tests/test_cuda_exact_sum, 54 MB)
# Writes two files under $OUT: i17-f64.txt (the GPU exact tests, `bench_cuda_exact 15 --variants` with every tuning's
# bits checked against the exact accumulator, a compute-sanitizer memcheck of every binary64 tuning, and a summary: one
# line per figure) and i17-f64-ncu.txt (ncu on 2^24 binary64 terms, uniform, full range and ill-conditioned, the default and
# every variant, one launch each: SpeedOfLight, Occupancy, WarpStateStats, LaunchStats). Worst case by the timeouts
# below: 30 + 80 + 45 + 75 s = under 4 minutes; expected about 2.
set -u
BIN=${1:?usage: bench/i17_f64_run.sh <folder with bench_cuda_exact and test_cuda_exact_sum>}
BIN=${BIN%/}
find_bin() { for d in "$BIN" "$BIN/bench" "$BIN/tests"; do [ -x "$d/$1" ] && { echo "$d/$1"; return; }; done; echo "$BIN/$1"; }
BENCH=$(find_bin bench_cuda_exact)
TEST=$(find_bin test_cuda_exact_sum)
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
R=$OUT/i17-f64.txt
P=$OUT/i17-f64-ncu.txt
{
  echo "== $(date -u +%FT%TZ) gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
  echo "== commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -x "$TEST" ]; then
    start=$(date +%s)
    timeout -k 5 30 "$TEST" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure' | head -20
    echo "== test_cuda_exact_sum rc=${PIPESTATUS[0]} $(( $(date +%s) - start ))s"
  fi
  echo "== bench_cuda_exact 15 --variants"
  start=$(date +%s)
  timeout -k 5 80 "$BENCH" 15 --variants > "$OUT/.bench.tmp" 2>&1
  echo "== bench rc=$? $(( $(date +%s) - start ))s"
  cat "$OUT/.bench.tmp"
  echo "== summary: type data-set algorithm tuning GB/s xCUB bits-equal"
  awk '/ n=/ && !/latency/ { t=$1; d=$2; for (i=1;i<=NF;i++) { if ($i=="exact") ex=$(i+1); if ($i=="exact/CUB") r=$(i+1); if ($i=="exact==ref") ok=$(i+1) }; def=$5; gsub(/\]/,"",def); printf "%-4s %-10s default(%-7s)                                   %7s GB/s %s xCUB ref=%s\n", t, d, def, ex, r, ok }
       /variant/ { tune=""; for (i=3;i<=NF;i++) { if ($i ~ /^(unroll|columns|atomic|windows|threads|slow|outlined|levels|steptest)=/) tune=tune " " $i; if ($i=="/CUB") r=$(i+1); if ($i=="exact==ref") ok=$(i+1) }; gb=$0; sub(/.*: */,"",gb); sub(/ GB\/s.*/,"",gb); printf "%-4s %-10s %-8s%-50s %7s GB/s %s xCUB ref=%s\n", t, d, $2, tune, gb, r, ok }' "$OUT/.bench.tmp" | grep -E '^f64|^f32 '
  rm -f "$OUT/.bench.tmp"
  if command -v compute-sanitizer > /dev/null; then
    echo "== compute-sanitizer memcheck: bench_cuda_exact profile 22 (every binary64 tuning, one launch each)"
    start=$(date +%s)
    timeout -k 5 45 compute-sanitizer --tool memcheck --error-exitcode 9 "$BENCH" profile 22 2>&1 |
      grep -E 'ERROR SUMMARY|exact results|NO$|Invalid' | head -20
    echo "== memcheck rc=${PIPESTATUS[0]} $(( $(date +%s) - start ))s"
  fi
} > "$R" 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{
  echo "== ncu: bench_cuda_exact profile 24 (launch order: the program's 'profile launch' lines)"
  start=$(date +%s)
  timeout -k 5 75 "$NCU" --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section LaunchStats -k regex:exact_block -c 30 "$BENCH" profile 24 2>&1
  echo "== ncu rc=$? $(( $(date +%s) - start ))s"
} > "$P" 2>&1
tail -n 60 "$R"
