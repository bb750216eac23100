#!/usr/bin/env bash
# Build here, run on the GPU machine: builds the tree (CUDA for sm_90, static CUDA runtime) and copies every GPU test
# binary into carry/ (ignored by git), the folder a `device` run names in `carry`. On the GPU machine:
#   for t in carry/test_cuda_*; do "$t" || exit 1; done
#   compute-sanitizer --tool memcheck carry/test_cuda_accumulators   (and racecheck, initcheck, synccheck)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDETRED_CUDA=ON >/dev/null
cmake --build build
mkdir -p carry
find build/tests -maxdepth 1 -type f -name "test_cuda_*" -perm -u+x -exec cp {} carry/ \;
ls -l carry/
