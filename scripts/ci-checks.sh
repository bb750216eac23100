#!/usr/bin/env bash
# CI's checks beyond the README's test command: formatting, paths named in comments and docs that do not exist
# (scripts/check-paths.sh), the CPU test suite under AddressSanitizer and
# UndefinedBehaviorSanitizer (any report fails the run: -fno-sanitize-recover=all, ASan aborts on its first error), and
# a bounded libFuzzer run over detred-audit's file parsers, and the CPU suite under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { apt-get update -qq && apt-get install -y -qq clang-format >/dev/null; }
git ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh' | xargs clang-format --dry-run --Werror
echo "format: clean"
scripts/check-paths.sh
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDETRED_SANITIZE=address,undefined \
  -DDETRED_CUDA=OFF -DDETRED_BUILD_BENCHMARKS=OFF -DDETRED_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-sanitize
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" -LE package
# detred-audit's file parsers under libFuzzer (with ASan, UBSan and leak checks) for a bounded time, from the seed
# corpus in tests/audit/corpus/: any crash, leak or sanitizer report fails CI.
scripts/fuzz-audit.sh 60
# The CPU suite under ThreadSanitizer (the thread pool; 16 host threads at once): about 4 minutes on 2 shared cores.
scripts/tsan-cpu.sh
