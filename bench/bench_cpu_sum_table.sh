#!/usr/bin/env bash
# Reproduces the CPU table of docs/PERFORMANCE.md: 20 randomly interleaved repetitions of every benchmark (so that
# drift in a shared machine's memory bandwidth hits every row alike), medians in GB/s, ratios to the 8-accumulator
# loop of the same type. Usage: bench/bench_cpu_sum_table.sh [build-dir]
set -euo pipefail
build=${1:-build}
"$build/bench/bench_cpu_sum" --benchmark_repetitions=20 --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null |
  python3 -c '
import csv, sys, re
rows = [r for r in csv.reader(sys.stdin) if r and r[0].endswith("_median")]
gbs = {}
for r in rows:
    name = r[0].replace("/real_time_median", "")
    gbs[name] = float(r[5]) / 1e9  # bytes_per_second column
for t in ("float", "double"):
    peer = gbs[f"BM_eight_accumulators<{t}>"]
    for name, v in gbs.items():
        if f"<{t}>" in name:
            print(f"| {name} | {v:.2f} | {v / peer:.2f} |")
'
