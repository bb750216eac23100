#!/usr/bin/env bash
# Builds the Python package with the CUDA backend for the GPU machines' Python (3.12) here and packs it into
# carry/pydetred.tar.xz (ignored by git), for scripts/gpu-python.sh. Usage: PYTHON312=/path/to/python3.12 \
#   scripts/python-carry.sh   (an interpreter with its headers and nanobind; the build tree is build-py312/)
# Builds take the build lock where one is shared: DETRED_BUILD_LOCK=/path/to/lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON312:?set PYTHON312 to a Python 3.12 interpreter with headers and nanobind}
locked() { if [ -n "${DETRED_BUILD_LOCK:-}" ]; then flock "$DETRED_BUILD_LOCK" "$@"; else "$@"; fi; }
if [ ! -f build-py312/CMakeCache.txt ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  locked cmake -S . -B build-py312 -G Ninja -DCMAKE_BUILD_TYPE=Release -DDETRED_BUILD_PYTHON=ON -DDETRED_CUDA=ON \
    -DPython_EXECUTABLE="$python" -DDETRED_BUILD_TESTS=OFF -DDETRED_BUILD_BENCHMARKS=OFF -DDETRED_BUILD_EXAMPLES=OFF \
    "${launcher[@]}" >/dev/null
fi
locked cmake --build build-py312 --target detred_python
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/detred" carry
cp -r python/detred/. "$stage/detred/"
find "$stage/detred" -name __pycache__ -prune -exec rm -rf {} +
cp build-py312/python/_*.so "$stage/detred/"
[ -x build-py312/verify/audit/detred-audit ] && cp build-py312/verify/audit/detred-audit "$stage/detred/"
[ -f build-py312/verify/audit/libdetred-audit-gpu.so ] && cp build-py312/verify/audit/libdetred-audit-gpu.so "$stage/detred/"
strip --strip-unneeded "$stage"/detred/*.so "$stage"/detred/detred-audit 2>/dev/null || true
tar -C "$stage" -cJf carry/pydetred.tar.xz detred
ls -l carry/pydetred.tar.xz
