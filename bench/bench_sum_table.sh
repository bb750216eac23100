#!/usr/bin/env bash
# Reproduces docs/PERFORMANCE.md's GPU table: runs bench_sum (median of 30 CUDA-event timings per row) and
# prints every detred row as GB/s, as a ratio to its CUB peer on the same bytes, and as a fraction of the read
# ceiling measured in the same run.
#   usage: bench/bench_sum_table.sh [path/to/bench_sum [raw.json]]   (default: build/bench/bench_sum)
# Build here for sm_90 (cmake -S . -B build -DDETRED_CUDA=ON && cmake --build build --target bench_sum), carry
# the binary and libbenchmark.so.1* to the GPU machine, and run it there with LD_LIBRARY_PATH set (docs/TESTING.md).
set -euo pipefail
bench=${1:-build/bench/bench_sum}
json=${2:-$(mktemp)}
"$bench" --benchmark_filter='^(read_ceiling|cub/|detred/)' --benchmark_format=json >"$json"
python3 - "$json" <<'PY'
import json, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name = b["run_name"].replace("/iterations:1/repeats:30/manual_time", "")
    rows[name] = (b["real_time"], b["bytes_per_second"] / 1e9)
ceiling = next(v[1] for k, v in rows.items() if k.startswith("read_ceiling"))
print(f"read ceiling: {ceiling:.0f} GB/s\n")
print("| kernel | n | time (us) | GB/s | CUB peer GB/s | ratio to CUB | of read ceiling |")
print("|---|---|---|---|---|---|---|")
for name, (us, gbs) in rows.items():
    if not name.startswith("detred/"):
        continue
    _, method, dtype, n, *_ = name.split("/")
    peer_type = dtype if dtype in ("f32", "f64", "f16@f32", "bf16@f32") else dtype.split("@")[0]
    peer = rows.get(f"cub/sum/{peer_type}/{n}")
    ratio = f"{gbs / peer[1]:.3f}" if peer else "-"
    peer_gbs = f"{peer[1]:.0f}" if peer else "-"
    print(f"| {method} {dtype} | {n} | {us:.1f} | {gbs:.0f} | {peer_gbs} | {ratio} | {gbs / ceiling:.3f} |")
PY
[ -n "${2:-}" ] || rm -f "$json"
