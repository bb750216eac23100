#!/usr/bin/env bash
# Runs on the GPU machine from the folder scripts/gpu-carry.sh filled (one device call; output under $OUT):
# every GPU test program, compute-sanitizer memcheck and racecheck on the quick configurations of the main programs,
# and the audit tool on the GPU. Usage: gpu-verify.sh [tests|sanitize|audit]... (default: all three).
set -uo pipefail
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/gpu-verify}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader
status=0
run_tests() {
  for t in test_*; do
    [ -x "$t" ] || continue
    local start=$SECONDS
    ./"$t" >"$OUT/$t.txt" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || status=1
    echo "$t rc=$rc $((SECONDS - start))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/$t.txt" | tr '\n' ' ')"
  done
}
run_sanitizers() {
  for t in test_cuda_canonical_sum test_cuda_reduce_family test_cuda_generic_scan test_cuda_exact_sum test_rows_cuda \
    test_norms_cuda test_baselines_gpu; do
    [ -x "$t" ] || continue
    for tool in memcheck racecheck; do
      DETRED_GPU_TEST_QUICK=1 compute-sanitizer --tool $tool --error-exitcode 9 ./"$t" >"$OUT/$t.$tool.txt" 2>&1
      local rc=$?
      [ $rc -eq 0 ] || status=1
      echo "$tool $t rc=$rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazards displayed' "$OUT/$t.$tool.txt" | tail -1)"
    done
  done
}
run_audit() {
  ./detred-audit --device all >"$OUT/audit-default.txt" 2>&1
  echo "detred-audit --device all rc=$? $(tail -1 "$OUT/audit-default.txt")"
  ./detred-audit --device all --gen ill --n 100000000 --dtype f32 >"$OUT/audit-ill.txt" 2>&1
  echo "detred-audit --device all --gen ill 1e8 f32 rc=$? $(tail -1 "$OUT/audit-ill.txt")"
}
[ $# -gt 0 ] || set -- tests sanitize audit
for what in "$@"; do
  case $what in
    tests) run_tests ;;
    sanitize) run_sanitizers ;;
    audit) run_audit ;;
    *) echo "unknown: $what" >&2; exit 2 ;;
  esac
done
exit $status
