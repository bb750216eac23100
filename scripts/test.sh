#!/usr/bin/env bash
# The README's second command (and what CI runs): installs what is missing, builds everything and runs the whole test
# suite through ctest, the installed-package consumer included, then the Python package's tests (pytest, in a venv in
# build/venv). GPU tests skip, saying so, where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The Python package: built by pip from this CMake project into build/venv and tested with pytest. Its module is built
# with DETRED_CUDA=OFF here: CI has no GPU to run the CUDA backend's tests (they skip, saying so), and building the
# CUDA kernels a second time would cost it more than 10 minutes; the GPU machines build it with CUDA. --no-build-isolation builds against the venv's scikit-build-core and nanobind (what the GPU
# machines do); build/python keeps the build tree, so a second run rebuilds nothing.
python=/usr/bin/python3
[[ -x $python ]] || python=python3
[[ -x build/venv/bin/python ]] || "$python" -m venv build/venv
build/venv/bin/python -m pip install -q --disable-pip-version-check scikit-build-core nanobind pytest hypothesis numpy ml_dtypes
build/venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=cmake.define.DETRED_CUDA=OFF --config-settings=build-dir=build/python .
build/venv/bin/python -m pytest -q python/tests
