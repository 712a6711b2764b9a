#!/usr/bin/env bash
# Installs the Debian packages this project needs that are not installed yet.
# A warm machine spends no time here: apt-get runs only when something is missing.
set -euo pipefail

PACKAGES=(clang-14 libclang-rt-14-dev llvm-14 llvm-14-tools lld-14 cmake ninja-build python3
          libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libabsl-dev graphviz ccache)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then missing+=("$p"); fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
