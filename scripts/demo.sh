#!/usr/bin/env bash
# The README's first command: installs what is missing, builds detred and runs its main job: detred-audit on its
# embedded ill-conditioned data set (how wrong and how unreproducible each way of summing it is). Extra arguments go
# to detred-audit, e.g. scripts/demo.sh my_data.npy, or scripts/demo.sh --device all on a machine with a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target detred-audit
build/verify/audit/detred-audit "$@"
