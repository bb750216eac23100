#!/usr/bin/env bash
# The README's second command (and what CI runs): installs what is missing, builds everything and runs the whole test
# suite through ctest, the installed-package consumer included. GPU tests skip, saying so, where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)"
