#!/usr/bin/env bash
# The CPU test suite under ThreadSanitizer (CI: scripts/ci-checks.sh): the thread pool, 16 host threads at once
# (test_concurrency) and every parallel path. CPU only (no CUDA, and neither verify, the property suites nor the audit, so no OpenMP baseline): a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDETRED_SANITIZE=thread -DDETRED_CUDA=OFF \
  -DDETRED_BUILD_VERIFY=OFF -DDETRED_BUILD_BENCHMARKS=OFF -DDETRED_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan  # everything this configuration defines: every CPU test program without verify/
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" -LE "package|gpu"
