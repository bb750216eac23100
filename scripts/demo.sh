#!/usr/bin/env bash
# The README's first command: installs what is missing, builds detred and runs its main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target detred-demo
build/examples/detred-demo
