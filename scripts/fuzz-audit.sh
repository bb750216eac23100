#!/usr/bin/env bash
# Builds detred-audit's parser fuzzer (libFuzzer with ASan, UBSan and leak checks; clang from Debian's packages) and
# runs it for a bounded time from the committed seed corpus. Any crash, leak, sanitizer report or broken reader
# contract fails the run. Usage: scripts/fuzz-audit.sh [seconds, default 60]. New inputs libFuzzer finds go to a
# scratch directory (build-fuzz/), never into tests/audit/corpus/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if ! command -v clang++ >/dev/null || ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "ok installed"; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi
out=build-fuzz
mkdir -p "$out/new-corpus" "$out/artifacts"
# The readers alone: header-only detred types, no Boost, no CUDA. The numerics flags of every detred target.
clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -ffp-contract=off \
  -fno-fast-math -Iinclude -Iverify/audit verify/audit/fuzz/fuzz_parsers.cpp verify/audit/dataset.cpp \
  verify/audit/byte_order.cpp verify/audit/npy_reader.cpp verify/audit/raw_reader.cpp verify/audit/text_reader.cpp \
  verify/audit/npy_writer.cpp -o "$out/fuzz_parsers"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "$out/fuzz_parsers" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/new-corpus" tests/audit/corpus
echo "fuzz: ${seconds} s without a crash, leak or sanitizer report"
