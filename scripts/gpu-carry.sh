#!/usr/bin/env bash
# Builds here what scripts/gpu-run.sh runs on the GPU machine, and packs it into carry/ (ignored by git), the one path
# a device run carries. Usage: scripts/gpu-carry.sh [SUITE...]   (the suites of scripts/gpu-run.sh; default: all)
#
# The build is build/ (or $BUILD_DIR): configured here for sm_90 with the static CUDA runtime if it has no cache yet,
# so that the binaries need nothing from the GPU machine's toolkit. carry/ then holds:
#   bin/ or bin.tar.xz  the stripped programs the suites need, and Debian's libbenchmark.so.1 (absent there); packed
#                       as one xz archive when they are too large to travel as they are (a call carries 64 MiB at most)
#   gpu-tests.tsv       every ctest test labelled gpu, one line each: name, tab, its command with the build tree's
#                       programs replaced by @BIN@/<name> and the source tree's paths made relative to the repository
#                       root (where the device runs a command); tests that only select a gtest case are folded into
#                       one run of their program
#   build-info.txt      the commit and whether the working tree had changes when it was built
# Builds take the build lock where one is shared: DETRED_BUILD_LOCK=/path/to/lockfile scripts/gpu-carry.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD_DIR:-build}
[ $# -gt 0 ] || set -- all

# The benchmark programs each suite runs (targets of bench/CMakeLists.txt).
bench_for() {
  case $1 in
    bars-sum) echo bench_sum_bars bench_sum ;;
    bars-exact) echo bench_exact exact_vs_cub ;;
    bars-scan) echo bench_scan ;;
    bars-reduce) echo bench_reduce ;;
    bars-rows) echo bench_rows ;;
    bars-scatter) echo bench_scatter ;;
    nccl | nccl4 | nccl4-quick | nccl4-sweep | nccl4-bars) echo bench_nccl test_nccl ;;
    bars) for s in bars-sum bars-exact bars-scan bars-reduce bars-rows bars-scatter; do bench_for $s; done ;;
    all) bench_for bars; bench_for nccl ;;
    tests) ;;
    *) echo "gpu-carry.sh: unknown suite '$1' (tests bars-sum bars-exact bars-scan bars-reduce bars-rows bars-scatter bars nccl nccl4 nccl4-quick nccl4-sweep nccl4-bars all)" >&2
       exit 2 ;;
  esac
}
want_tests=0
targets=()
for suite in "$@"; do
  case $suite in tests | all) want_tests=1 ;; esac
  for t in $(bench_for "$suite"); do targets+=("$t"); done
done

locked() { if [ -n "${DETRED_BUILD_LOCK:-}" ]; then flock "$DETRED_BUILD_LOCK" "$@"; else "$@"; fi; }
if [ ! -f "$build/CMakeCache.txt" ]; then
  locked cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDETRED_CUDA=ON >/dev/null
fi
grep -q '^DETRED_CUDART_STATIC:FILEPATH=/' "$build/CMakeCache.txt" ||
  echo "gpu-carry.sh: warning: $build does not link the static CUDA runtime" >&2
if [ $want_tests = 1 ]; then
  locked cmake --build "$build"  # every test program (ctest lists the gpu ones only once they are built)
fi
# Targets this build does not define (bench_nccl without NCCL) are left out, saying so.
# The help target lists "name: phony" (Ninja) or "... name" (Makefiles).
known=$(locked cmake --build "$build" --target help | sed -n 's/^\(\.\.\. \)\{0,1\}\([A-Za-z0-9_.-]*\)\(:.*\)\{0,1\}$/\2/p')
present=()
for t in "${targets[@]}"; do
  if grep -qx "$t" <<<"$known"; then present+=("$t"); else echo "gpu-carry.sh: no target $t in $build: not carried" >&2; fi
done
[ ${#present[@]} -eq 0 ] || locked cmake --build "$build" --target "${present[@]}"

rm -rf carry && mkdir -p carry/bin
programs=()
for t in "${present[@]}"; do
  f=$(find "$build" -type f -name "$t" -perm -u+x | head -1)
  [ -n "$f" ] && programs+=("$f")
done
: >carry/gpu-tests.tsv
if [ $want_tests = 1 ]; then
  ctest --test-dir "$build" -L gpu --show-only=json-v1 >carry/.ctest.json
  # One line a test (or a program): its name and its command, build-tree programs as @BIN@/<name>, build-tree files as
  # @SCRATCH@/<path>, source-tree paths relative to the repository root; the programs to carry go to .programs.
  python3 - "$root" "$(cd "$build" && pwd)" carry/.ctest.json carry/gpu-tests.tsv carry/.programs <<'PY'
import json, os, re, shlex, sys
src, build, data, manifest, programs_out = sys.argv[1:]
programs = set()

def map_path(m):
    p = m.group(0)
    if p.startswith(build + "/"):
        if os.path.isfile(p) and os.access(p, os.X_OK):
            programs.add(p)
            return "@BIN@/" + os.path.basename(p)
        return "@SCRATCH@/" + os.path.relpath(p, build)
    return os.path.relpath(p, src)

def quote(a):
    # One line a test: newlines and tabs inside an argument (a regular expression) as bash's $'...' escapes.
    if "\n" in a or "\t" in a:
        e = a.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\t", "\\t")
        return "$'" + e + "'"
    return shlex.quote(a)

path_re = re.compile(re.escape(src) + r"(/[^\s;:=,\"']*)?")
lines, folded = [], {}
for t in json.load(open(data))["tests"]:
    cmd = t.get("command") or []
    if not cmd:
        continue
    env = next((p["value"] for p in t.get("properties", []) if p["name"] == "ENVIRONMENT"), [])
    if all(a.startswith("--gtest_") for a in cmd[1:]) and not env:
        # A gtest case of a program: run the program once, all of its cases.
        if cmd[0] not in folded:
            folded[cmd[0]] = len(lines)
            lines.append((os.path.basename(cmd[0]), [cmd[0]], []))
        continue
    lines.append((t["name"], cmd, env))
with open(manifest, "w") as out:
    for name, cmd, env in lines:
        args = [path_re.sub(map_path, a) for a in cmd]
        if os.path.isabs(args[0]) and not args[0].startswith("@"):
            args[0] = os.path.basename(args[0])  # a system tool (cmake): the device's own, from PATH
        words = [quote(e) for e in env] + [quote(a) for a in args]
        out.write(name + "\t" + (("env " if env else "") + " ".join(words)) + "\n")
open(programs_out, "w").write("\n".join(sorted(programs)) + "\n")
PY
  while read -r p; do [ -n "$p" ] && programs+=("$p"); done <carry/.programs
  rm -f carry/.ctest.json carry/.programs
fi
for p in "${programs[@]}"; do
  strip -o "carry/bin/$(basename "$p")" "$p"
done
# detred-audit's GPU rows module, beside the tool as the tool looks for it (verify/audit/gpu_rows_module.hpp).
audit_gpu=$(find "$build" -type f -name libdetred-audit-gpu.so | head -1)
[ -z "$audit_gpu" ] || strip -o carry/bin/libdetred-audit-gpu.so "$audit_gpu"
cp -P /usr/lib/x86_64-linux-gnu/libbenchmark.so.1* carry/bin/ 2>/dev/null ||
  echo "gpu-carry.sh: libbenchmark.so.1 not found: bench_sum will not start there" >&2
{
  echo "commit $(git rev-parse --short HEAD) $(git status --porcelain --untracked-files=no | grep -q . && echo '(with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) from $build; suites: $*"
} >carry/build-info.txt
size=$(du -sm carry/bin | cut -f1)
if [ "$size" -gt 48 ]; then
  # xz at -9 keeps a 64 MiB window, so programs that share the library code compress together (about 10:1).
  tar -C carry -cf - bin | xz -9 -T1 >carry/bin.tar.xz
  rm -rf carry/bin
fi
du -sh carry && ls carry
echo "gpu-carry.sh: $(wc -l <carry/gpu-tests.tsv) gpu tests, $(( ${#programs[@]} )) programs; on the device: scripts/gpu-run.sh $*"
