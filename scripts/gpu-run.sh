#!/usr/bin/env bash
# Runs GPU suites on the GPU machine, from the repository root, with the programs scripts/gpu-carry.sh packed into
# carry/ (docs/TESTING.md, "GPU runs"). Usage: scripts/gpu-run.sh SUITE...
#
#   tests        every ctest test labelled gpu (carry/gpu-tests.tsv), then compute-sanitizer on the canonical sum's,
#                the scans' and the reduce family's test programs in their quick mode (DETRED_GPU_TEST_QUICK=1, the
#                cases beyond 2^31 elements left out); tools: $SANITIZERS (default memcheck)
#   bars-sum     the canonical sum's bars: bench_sum_bars bars twice and tune 31 once (CUB in the same program), then
#                bench_sum's 1 GiB table (tree_neumaier and the 16-bit inputs against CUB) by bench/bench_sum_table.sh
#   bars-exact   bench_exact 15: the exact sum on four data sets against CUB, and its 2^16 and 2^20 latency; then
#                exact_vs_cub 20, the plain cross-check (the two public calls interleaved, nothing else)
#   bars-scan    bench_scan 30, then bench_scan 25 tune (CUB and the copy interleaved with the candidates)
#   bars-reduce  bench_reduce --reps 30 (CUB, and cuBLAS's dot where the machine has libcublas)
#   bars-rows    bench_rows 30 (CUB's segmented reduce, the read and copy ceilings, the two-stage norm kernels)
#   bars-scatter bench_scatter 20 (float atomics and CUB's segmented reduce), then, where the Python package is
#                importable (PYTHONPATH), python/benchmarks/bench_scatter_torch.py (PyTorch's index_add_ and scatter_add_)
#   bars         the six bars suites above
#   nccl         test_nccl, bench_nccl 30, and its NCCL-only sizes again with NCCL pinned (two GPUs for the bars;
#                NVLink multicast stays off)
#   nccl4        the collectives on a 4-GPU machine: test_nccl with all GPUs visible (its 1-, 2-, 3- and 4-GPU tests),
#                again under CUDA_VISIBLE_DEVICES subsets of 3 and 2 GPUs; bench_nccl 30 on 4 GPUs (bars, sizes with one-
#                and two-shot, shards, sums on 1, 2, 4 GPUs) and on 2 (bars sizes shards), each followed by the NCCL-only
#                sizes pinned in a process of its own; where carry/pydetred.tar.xz is carried (scripts/python-carry.sh
#                after gpu-carry.sh nccl4), python/tests/test_torch_distributed.py on 4 GPUs. Log: nccl4.txt
#   nccl4-quick  the 4-GPU check in under 300 s: test_nccl's 4-GPU tests and NcclErrors with all GPUs visible, its
#                2-GPU tests and NcclErrors under CUDA_VISIBLE_DEVICES=2,3, bench_nccl 30 bars sizes shards on all GPUs.
#                Log: nccl4-quick.txt
#   nccl4-sweep  the peer kernels' shapes: test_nccl's 4-GPU tests and NcclErrors, its 2-GPU tests and NcclErrors
#                (CUDA_VISIBLE_DEVICES=2,3), bench_nccl 30 sweep (chunk sizes and block counts against NCCL) on 4 GPUs
#                and on 2 (CUDA_VISIBLE_DEVICES=0,1). Log: nccl4-sweep.txt
#   nccl4-bars   the collectives' bars on 4 and 2 GPUs: the same tests, bench_nccl 30 bars sizes shards and the pinned
#                NCCL sizes on 4 GPUs, then both again on 2 (CUDA_VISIBLE_DEVICES=0,1). Log: nccl4-bars.txt
#   all          tests, bars, and nccl where two GPUs are visible
#
# Output: one log per suite under $OUT (tests.txt, bars-sum.txt, ..., nccl.txt) and summary.txt, a line per step
# (also on stdout): at most 8 files, as a device call returns. Every step has its own time limit, and the whole run
# stops starting steps once $GPU_RUN_BUDGET seconds (default 560: a call may run 600) are spent, naming each step
# it skipped. Exit status: 0 when every step that ran exited 0, else 1; 2 for a usage error.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-run}
mkdir -p "$OUT"
budget=${GPU_RUN_BUDGET:-560}
begin=$SECONDS
status=0
summary=$OUT/summary.txt

note() { echo "$*" | tee -a "$summary"; }

# The programs: carry/bin/ as carried, or carry/bin.tar.xz unpacked outside the working tree.
if [ -d carry/bin ]; then
  BIN=$PWD/carry/bin
elif [ -f carry/bin.tar.xz ]; then
  mkdir -p /tmp/detred-gpu && tar -C /tmp/detred-gpu -xJf carry/bin.tar.xz || { echo "cannot unpack carry/bin.tar.xz" >&2; exit 2; }
  BIN=/tmp/detred-gpu/bin
else
  echo "gpu-run.sh: no carry/bin or carry/bin.tar.xz: run scripts/gpu-carry.sh here first and carry 'carry'" >&2
  exit 2
fi
SCRATCH=/tmp/detred-gpu/scratch
mkdir -p "$SCRATCH"
# NCCL from the machine's Python package (nvidia-nccl-cu13) where there is one, else the system's libnccl.so.2.
nccl_lib=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null || true)
export LD_LIBRARY_PATH=$BIN${nccl_lib:+:$nccl_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=${NCCL_DEBUG:-WARN}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)

header() {  # header <log>: what ran, where, built from what
  {
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) scripts/gpu-run.sh, $(cat carry/build-info.txt 2>/dev/null | tr '\n' ' ')"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv,noheader 2>&1
  } >>"$1"
}

# step <log> <limit in s> <label> <command...>: appends the command's output to <log>, and a line to the summary with
# its exit status, time and gtest verdicts. Skipped, saying so, when the budget is spent.
step() {
  local log=$1 limit=$2 label=$3
  shift 3
  local left=$((budget - (SECONDS - begin)))
  if [ $left -le 5 ]; then
    note "SKIPPED (budget of ${budget}s spent): $label"
    status=1
    return
  fi
  [ "$limit" -le "$left" ] || limit=$left
  local start=$SECONDS mark
  mark=$(wc -l <"$log")
  echo "## $label" >>"$log"
  timeout -k 5 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || status=1
  local verdict
  verdict=$(tail -n +"$((mark + 1))" "$log" |
    grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test|ERROR SUMMARY|RACECHECK SUMMARY|bits identical|every promise kept' |
    tr -s ' ' | tr '\n' ' ')
  note "$label: rc=$rc $((SECONDS - start))s${verdict:+ $verdict}$([ $rc -eq 124 ] && echo " (stopped at ${limit}s)")"
}

have() { [ -x "$BIN/$1" ] || { note "$1: not carried (scripts/gpu-carry.sh with this suite)"; status=1; return 1; }; }

suite_tests() {
  local log=$OUT/tests.txt
  header "$log"
  if [ ! -s carry/gpu-tests.tsv ]; then
    note "tests: carry/gpu-tests.tsv is empty (scripts/gpu-carry.sh tests)"
    status=1
    return
  fi
  local name cmd
  while IFS=$'\t' read -r name cmd; do
    cmd=${cmd//@BIN@/$BIN}
    cmd=${cmd//@SCRATCH@/$SCRATCH}
    step "$log" "${TEST_LIMIT:-300}" "$name" bash -c "$cmd"
  done <carry/gpu-tests.tsv
  local t tool
  for t in test_cuda_canonical_sum test_cuda_generic_scan test_cuda_reduce_family; do
    [ -x "$BIN/$t" ] || continue
    for tool in ${SANITIZERS:-memcheck}; do
      step "$log" 240 "compute-sanitizer $tool $t (quick)" env DETRED_GPU_TEST_QUICK=1 \
        compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN/$t" \
        --gtest_filter='-*MoreThanTwoToThe31*:*BeyondTwoToThe31*:*TwoToTheThirtyOne*'
    done
  done
}

suite_bars_sum() {
  local log=$OUT/bars-sum.txt
  header "$log"
  if have bench_sum_bars; then
    step "$log" 90 "bench_sum_bars bars (1)" "$BIN/bench_sum_bars" bars
    step "$log" 90 "bench_sum_bars bars (2)" "$BIN/bench_sum_bars" bars
    step "$log" 90 "bench_sum_bars tune 31" "$BIN/bench_sum_bars" tune 31
  fi
  if have bench_sum; then
    step "$log" 150 "bench/bench_sum_table.sh bench_sum" bash bench/bench_sum_table.sh "$BIN/bench_sum"
  fi
}

suite_bars_exact() {
  local log=$OUT/bars-exact.txt
  header "$log"
  have bench_exact && step "$log" 200 "bench_exact 15" "$BIN/bench_exact" 15
  have exact_vs_cub && step "$log" 200 "exact_vs_cub 20" "$BIN/exact_vs_cub" 20
}

suite_bars_scan() {
  local log=$OUT/bars-scan.txt
  header "$log"
  if have bench_scan; then
    step "$log" 90 "bench_scan 30" "$BIN/bench_scan" 30
    step "$log" 90 "bench_scan 25 tune" "$BIN/bench_scan" 25 tune
  fi
}

suite_bars_reduce() {
  local log=$OUT/bars-reduce.txt
  header "$log"
  local cublas
  cublas=$(find / -xdev -name 'libcublas.so.1[0-9]*' -not -name '*Lt*' 2>/dev/null | head -1)
  echo "cuBLAS for the dot peers: ${cublas:-none found}" >>"$log"
  have bench_reduce && step "$log" 150 "bench_reduce --reps 30" env DETRED_CUBLAS="$cublas" "$BIN/bench_reduce" --reps 30
}

suite_bars_rows() {
  local log=$OUT/bars-rows.txt
  header "$log"
  have bench_rows && step "$log" 120 "bench_rows 30" "$BIN/bench_rows" 30
}

suite_bars_scatter() {
  local log=$OUT/bars-scatter.txt
  header "$log"
  have bench_scatter && step "$log" 120 "bench_scatter 20" "$BIN/bench_scatter" 20
  if python3 -c 'import detred, torch' 2>/dev/null; then
    step "$log" 150 "python/benchmarks/bench_scatter_torch.py" python3 python/benchmarks/bench_scatter_torch.py
  else
    note "bars-scatter: detred or torch not importable: the PyTorch peers are not measured"
  fi
}

suite_nccl() {
  local log=$OUT/nccl.txt
  header "$log"
  {
    nvidia-smi topo -m 2>&1
    echo "NCCL library: ${nccl_lib:-libnccl.so.2 from the system}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE; GPUs: $gpus"
  } >>"$log"
  [ "$gpus" -ge 2 ] || note "nccl: $gpus GPU visible: the two-GPU tests skip and the all-reduce bar is not measured"
  have test_nccl && step "$log" 180 "test_nccl" "$BIN/test_nccl"
  have bench_nccl && step "$log" 240 "bench_nccl 30" "$BIN/bench_nccl" 30
  # NCCL pinned to the deterministic configuration inference stacks use; read when communicators are made, so in a
  # process of its own.
  have bench_nccl && step "$log" 150 "bench_nccl 30 nccl-sizes (NCCL pinned: tree, Simple, one channel)" \
    env NCCL_ALGO=allreduce:tree NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 "$BIN/bench_nccl" 30 nccl-sizes
}

suite_nccl4() {
  local log=$OUT/nccl4.txt
  header "$log"
  {
    nvidia-smi topo -m 2>&1
    echo "NCCL library: ${nccl_lib:-libnccl.so.2 from the system}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE; GPUs: $gpus"
  } >>"$log"
  [ "$gpus" -ge 4 ] || note "nccl4: $gpus GPU(s) visible: the 3- and 4-GPU steps skip or measure fewer GPUs"
  local pinned=(env NCCL_ALGO=allreduce:tree NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1)
  if have test_nccl; then
    step "$log" 150 "test_nccl ($gpus GPUs visible: the 1- to 4-GPU tests)" "$BIN/test_nccl"
  fi
  if have bench_nccl; then
    step "$log" 150 "bench_nccl 30 ($gpus GPUs: bars sizes shards sums)" "$BIN/bench_nccl" 30
    step "$log" 60 "bench_nccl 30 nccl-sizes ($gpus GPUs, NCCL pinned: tree, Simple, one channel)" \
      "${pinned[@]}" "$BIN/bench_nccl" 30 nccl-sizes
  fi
  if [ -f carry/pydetred.tar.xz ]; then
    mkdir -p /tmp/pydetred && tar -C /tmp/pydetred -xJf carry/pydetred.tar.xz
    step "$log" 200 "pytest python/tests/test_torch_distributed.py ($gpus GPUs visible)" \
      env PYTHONPATH=/tmp/pydetred${PYTHONPATH:+:$PYTHONPATH} python3 -m pytest -q -rs -p no:cacheprovider \
      python/tests/test_torch_distributed.py
  else
    note "nccl4: no carry/pydetred.tar.xz: the PyTorch distributed tests are not run"
  fi
  if have test_nccl && [ "$gpus" -ge 4 ]; then
    step "$log" 60 "test_nccl on 3 GPUs (CUDA_VISIBLE_DEVICES=1,2,3)" env CUDA_VISIBLE_DEVICES=1,2,3 "$BIN/test_nccl" \
      --gtest_filter='*Three*:NcclSum.Plain*:NcclMicroBatches.*'
    step "$log" 60 "test_nccl on 2 GPUs (CUDA_VISIBLE_DEVICES=2,3)" env CUDA_VISIBLE_DEVICES=2,3 "$BIN/test_nccl" \
      --gtest_filter='*Two*:NcclErrors.*:NcclMicroBatches.*'
  fi
  if have bench_nccl && [ "$gpus" -ge 4 ]; then
    step "$log" 90 "bench_nccl 30 bars sizes shards (2 GPUs: CUDA_VISIBLE_DEVICES=0,1)" \
      env CUDA_VISIBLE_DEVICES=0,1 "$BIN/bench_nccl" 30 bars sizes shards
    step "$log" 45 "bench_nccl 30 nccl-sizes (2 GPUs, NCCL pinned)" env CUDA_VISIBLE_DEVICES=0,1 "${pinned[@]}" \
      "$BIN/bench_nccl" 30 nccl-sizes
  fi
}

suite_nccl4_quick() {
  local log=$OUT/nccl4-quick.txt
  header "$log"
  echo "NCCL library: ${nccl_lib:-libnccl.so.2 from the system}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE; GPUs: $gpus" >>"$log"
  if have test_nccl; then
    step "$log" 90 "test_nccl 4-GPU tests and NcclErrors ($gpus GPUs visible)" "$BIN/test_nccl" \
      --gtest_filter='*Four*:NcclErrors.*'
    [ "$gpus" -lt 4 ] || step "$log" 60 "test_nccl 2-GPU tests and NcclErrors (CUDA_VISIBLE_DEVICES=2,3)" \
      env CUDA_VISIBLE_DEVICES=2,3 "$BIN/test_nccl" --gtest_filter='*Two*:NcclErrors.*'
  fi
  if have bench_nccl; then
    step "$log" 120 "bench_nccl 30 bars sizes shards ($gpus GPUs)" "$BIN/bench_nccl" 30 bars sizes shards
  fi
}

# The 4- and 2-GPU tests of the collectives (test_nccl), for the suites below.
nccl_tests_4_2() {
  step "$1" 90 "test_nccl 4-GPU tests and NcclErrors ($gpus GPUs visible)" "$BIN/test_nccl" \
    --gtest_filter='*Four*:NcclErrors.*'
  [ "$gpus" -lt 4 ] || step "$1" 60 "test_nccl 2-GPU tests and NcclErrors (CUDA_VISIBLE_DEVICES=2,3)" \
    env CUDA_VISIBLE_DEVICES=2,3 "$BIN/test_nccl" --gtest_filter='*Two*:NcclErrors.*'
}

suite_nccl4_sweep() {
  local log=$OUT/nccl4-sweep.txt
  header "$log"
  echo "NCCL library: ${nccl_lib:-libnccl.so.2 from the system}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE; GPUs: $gpus" >>"$log"
  have test_nccl && nccl_tests_4_2 "$log"
  if have bench_nccl; then
    step "$log" 120 "bench_nccl 30 sweep ($gpus GPUs)" "$BIN/bench_nccl" 30 sweep
    [ "$gpus" -lt 4 ] || step "$log" 90 "bench_nccl 30 sweep (2 GPUs: CUDA_VISIBLE_DEVICES=0,1)" \
      env CUDA_VISIBLE_DEVICES=0,1 "$BIN/bench_nccl" 30 sweep
  fi
}

suite_nccl4_bars() {
  local log=$OUT/nccl4-bars.txt
  header "$log"
  echo "NCCL library: ${nccl_lib:-libnccl.so.2 from the system}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE; GPUs: $gpus" >>"$log"
  local pinned=(env NCCL_ALGO=allreduce:tree NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1)
  have test_nccl && nccl_tests_4_2 "$log"
  if have bench_nccl; then
    step "$log" 120 "bench_nccl 30 bars sizes shards ($gpus GPUs)" "$BIN/bench_nccl" 30 bars sizes shards
    step "$log" 60 "bench_nccl 30 nccl-sizes ($gpus GPUs, NCCL pinned: tree, Simple, one channel)" \
      "${pinned[@]}" "$BIN/bench_nccl" 30 nccl-sizes
    if [ "$gpus" -ge 4 ]; then
      step "$log" 90 "bench_nccl 30 bars sizes shards (2 GPUs: CUDA_VISIBLE_DEVICES=0,1)" \
        env CUDA_VISIBLE_DEVICES=0,1 "$BIN/bench_nccl" 30 bars sizes shards
      step "$log" 45 "bench_nccl 30 nccl-sizes (2 GPUs, NCCL pinned)" env CUDA_VISIBLE_DEVICES=0,1 "${pinned[@]}" \
        "$BIN/bench_nccl" 30 nccl-sizes
    fi
  fi
}

[ $# -gt 0 ] || { sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
suites=()
for s in "$@"; do
  case $s in
    tests | bars-sum | bars-exact | bars-scan | bars-reduce | bars-rows | bars-scatter | nccl | nccl4 | nccl4-quick | nccl4-sweep | nccl4-bars) suites+=("$s") ;;
    bars) suites+=(bars-sum bars-exact bars-scan bars-reduce bars-rows bars-scatter) ;;
    all)
      suites+=(tests bars-sum bars-exact bars-scan bars-reduce bars-rows bars-scatter)
      [ "$gpus" -lt 2 ] || suites+=(nccl)
      ;;
    *) echo "gpu-run.sh: unknown suite '$s'" >&2; exit 2 ;;
  esac
done
note "# scripts/gpu-run.sh ${suites[*]}: $gpus GPU(s), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); $(cat carry/build-info.txt 2>/dev/null | head -1)"
for s in "${suites[@]}"; do
  "suite_${s//-/_}"
done
note "# done in $((SECONDS - begin))s, exit $status"
exit $status
