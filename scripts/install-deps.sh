#!/usr/bin/env bash
# Installs, with apt-get, whichever of detred's build and test dependencies are missing (Debian 12, as root).
# Installs nothing when everything is present. CUDA is optional: the build uses nvcc where it finds one.
set -euo pipefail
packages=(cmake g++ make ninja-build git ca-certificates libgtest-dev libbenchmark-dev librapidcheck-dev libboost-dev
  libcli11-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin)
# The Python package's build and tests (scripts/test.sh makes a venv in build/venv; docs/PYTHON.md).
packages+=(python3-venv python3-dev python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "detred: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
