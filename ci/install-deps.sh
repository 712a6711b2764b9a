#!/usr/bin/env bash
# Installs the Debian packages this project needs that are not installed yet.
# A warm machine spends no time here: apt-get runs only when something is missing.
#
#   ci/install-deps.sh            install what is missing (uses sudo when not root)
#   ci/install-deps.sh --list     print the packages that are missing, install nothing
#
# Exit codes: 0 success (or nothing missing); 1 apt-get failed; 2 usage error.
set -euo pipefail

# The comment block above, as --help prints it.
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$SELF"; }

LIST=0
while (($#)); do
  case "$1" in
    --list) LIST=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

PACKAGES=(clang-14 clang-format-14 libclang-rt-14-dev llvm-14 llvm-14-tools lld-14 cmake ninja-build python3
          libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libabsl-dev libjemalloc-dev graphviz ccache)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then missing+=("$p"); fi
done
if ((LIST)); then
  ((${#missing[@]} == 0)) || printf '%s\n' "${missing[@]}"
  exit 0
fi
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || exit 1
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" || exit 1
