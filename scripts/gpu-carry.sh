#!/usr/bin/env bash
# Build here, run on the GPU machine (docs/TESTING.md, "The GPU workflow"): builds build/ for sm_90 with the static
# CUDA runtime and copies into carry/ (ignored by git) every GPU test binary (every program with label gpu), the GPU
# benchmarks, the audit tool, scripts/gpu-verify.sh (what to run there) and Debian's libbenchmark.so.1* (the GPU
# machine lacks it). Name carry/ in the device run's `carry`, then run `carry/gpu-verify.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDETRED_CUDA=ON >/dev/null
cmake --build build
cmake --build build --target bench_cuda_scan
rm -rf carry && mkdir -p carry
# The programs ctest runs with label gpu (the audit's gpu case runs the audit tool itself, carried below).
ctest --test-dir build -L gpu -N -V | sed -n 's/^[0-9]*: Test command: \([^ ]*\).*/\1/p' | sort -u |
  while read -r exe; do [ -x "$exe" ] && cp "$exe" carry/; done
for f in build/bench/bench_cuda_sum build/bench/bench_cuda_reduce build/bench/bench_cuda_scan build/bench/bench_baselines \
  build/bench/bench_rows build/examples/detred-worked-examples build/examples/linear_recurrence \
  build/verify/audit/detred-audit; do [ -x "$f" ] && cp "$f" carry/; done
cp bench/cuda_sum_table.sh scripts/gpu-verify.sh carry/
cp /usr/lib/x86_64-linux-gnu/libbenchmark.so.1* carry/ 2>/dev/null || true
du -sh carry/ && ls carry/
