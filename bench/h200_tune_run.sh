#!/usr/bin/env bash
# One H200 tuning run for issues 15 and 16 (docs/PERFORMANCE.md): the existing bar lines, then every launch candidate
# of the canonical sum and the scans (src/cuda/common/device_tuning.hpp), each checked bit for bit against the
# default's result. Run on the GPU machine from the repository root:
#   bash bench/h200_tune_run.sh <folder with bench_baselines and bench_cuda_scan>
# Writes two files under $OUT: h200-tune-sum.txt (bench_baselines bars, then tune twice) and h200-tune-scan.txt
# (bench_cuda_scan 30, then tune twice). Where the folder also holds test_cuda_canonical_sum and
# test_cuda_generic_scan, their tuning tests (every knob against the CPU bits, many sizes and alignments) run last,
# into the same two files. Every step has its own time limit; the limits add up to 350 s (the run itself should take
# 1-2 minutes). Repeating each tune in a second process shows which differences survive a rerun.
set -u
bin=${1:?usage: bash bench/h200_tune_run.sh <folder with the built benchmarks>}
out=${OUT:?OUT must name the output folder}
sum=$out/h200-tune-sum.txt
scan=$out/h200-tune-scan.txt

header() {
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,clocks.max.sm --format=csv,noheader 2>&1
}

# step <file> <limit in s> <command...>: appends the command's output and its exit status and time to <file>.
step() {
  local file=$1 limit=$2
  shift 2
  local start=$(date +%s)
  echo "## $*" >> "$file"
  timeout "$limit" "$@" >> "$file" 2>&1
  local rc=$?
  echo "## rc=$rc $(( $(date +%s) - start ))s: $*" | tee -a "$file"
}

header > "$sum"
header > "$scan"
step "$sum" 50 "$bin/bench_baselines" bars
step "$sum" 50 "$bin/bench_baselines" tune 31
step "$sum" 50 "$bin/bench_baselines" tune 31
step "$scan" 50 "$bin/bench_cuda_scan" 30
step "$scan" 40 "$bin/bench_cuda_scan" 25 tune
step "$scan" 40 "$bin/bench_cuda_scan" 25 tune
if [ -x "$bin/test_cuda_canonical_sum" ]; then
  step "$sum" 40 "$bin/test_cuda_canonical_sum" --gtest_filter='*EveryTuningKeepsTheCpuBits*'
fi
if [ -x "$bin/test_cuda_generic_scan" ]; then
  step "$scan" 30 "$bin/test_cuda_generic_scan" --gtest_filter='*DynamicSharedTilesAndEveryScanTuning*'
fi
grep -h "bits identical\|^bar \|affine-map scan 1 GiB: detred\|^fp32 n = 2^20: per call\|^\[  \(PASSED\|FAILED\) " \
  "$sum" "$scan"
