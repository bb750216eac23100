#!/usr/bin/env bash
# The README's first command: installs what is missing, builds detred and runs its main job: detred-audit on its
# embedded ill-conditioned data set (how wrong and how unreproducible each way of summing it is). Extra arguments go
# to detred-audit, e.g. scripts/demo.sh my_data.npy, or scripts/demo.sh --device all on a machine with a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# The tool alone: it links no CUDA code, so this compiles no kernel. The GPU rows (a module the tool loads for
# --device gpu|all, built where nvcc is) only when a GPU run is asked for.
targets=(detred-audit)
for a in "$@"; do case $a in --device=gpu | --device=all | gpu | all) targets+=(detred-audit-gpu) ;; esac; done
cmake --build build --target "${targets[@]}"
build/verify/audit/detred-audit "$@"
