#!/usr/bin/env bash
# Build here, run on the GPU machine (docs/TESTING.md, "The GPU workflow"): builds build/ for sm_90 with the static
# CUDA runtime and copies into carry/ (ignored by git) every GPU test binary, the GPU benchmark with its table script,
# the audit tool, and Debian's libbenchmark.so.1* (the GPU machine lacks it). Name carry/ in the device run's `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDETRED_CUDA=ON >/dev/null
cmake --build build
rm -rf carry && mkdir -p carry
find build/tests -type f \( -name "test_cuda_*" -o -name "test_properties_cuda" -o -name "test_*_gpu" \) -perm -u+x \
  -exec cp {} carry/ \;
for f in build/bench/bench_cuda_sum build/bench/bench_cuda_reduce build/examples/detred-worked-examples \
  build/verify/audit/detred-audit; do [ -x "$f" ] && cp "$f" carry/; done
cp bench/cuda_sum_table.sh carry/
cp /usr/lib/x86_64-linux-gnu/libbenchmark.so.1* carry/ 2>/dev/null || true
ls -l carry/
