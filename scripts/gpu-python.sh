#!/usr/bin/env bash
# The Python package's GPU run, on the GPU machine from the repository root (docs/TESTING.md, "Python on the GPU").
# Usage: scripts/gpu-python.sh [install]
#   default   the package scripts/python-carry.sh packed (carry/pydetred.tar.xz), unpacked under /tmp
#   install   `pip install --no-build-isolation .` with the CUDA backend, as a user of the GPU machine would
# Then pytest over python/tests (the GPU tests included; skips listed with their reasons) and
# python/benchmarks/bench_bars.py. Logs: $OUT/python-tests.txt, $OUT/python-bars.txt (and python-install.txt).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-python}
mkdir -p "$OUT"
python=${PYTHON:-python3}
status=0
if [ "${1:-}" = install ]; then
  # The GPU machines have no Boost: no audit in this build (DETRED_BUILD_VERIFY=OFF).
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$python" -m pip install --no-build-isolation --break-system-packages \
    --config-settings=cmake.define.DETRED_BUILD_VERIFY=OFF --config-settings=build-dir=/tmp/detred-pybuild . \
    >"$OUT/python-install.txt" 2>&1 || { echo "pip install failed: $OUT/python-install.txt"; tail -20 "$OUT/python-install.txt"; exit 1; }
  tail -2 "$OUT/python-install.txt"
else
  [ -f carry/pydetred.tar.xz ] || { echo "gpu-python.sh: no carry/pydetred.tar.xz (scripts/python-carry.sh)" >&2; exit 2; }
  mkdir -p /tmp/pydetred && tar -C /tmp/pydetred -xJf carry/pydetred.tar.xz
  export PYTHONPATH=/tmp/pydetred${PYTHONPATH:+:$PYTHONPATH}
fi
(cd /tmp && "$python" -c "import detred; print('detred', detred.__version__, 'from', detred.__file__, 'cuda_available', detred.cuda_available())") | tee "$OUT/python-tests.txt"
timeout 900 "$python" -m pytest -q -rs -p no:cacheprovider python/tests >>"$OUT/python-tests.txt" 2>&1 || status=1
tail -15 "$OUT/python-tests.txt"
timeout 300 "$python" python/benchmarks/bench_bars.py --repeat 20 2>&1 | tee "$OUT/python-bars.txt" || status=1
exit $status
