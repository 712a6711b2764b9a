#!/usr/bin/env bash
# The differential campaign: PyPTO's own passes against the reference pass, on
# generated programs (docs/pypto.md). Each program (cds-gen; every fifth one with
# a planted defect) goes through `cds-opt --default-pipeline` and through PyPTO
# (bridge/pypto/cds-pypto), whose export is verified with
# `cds-opt --verify-only --contract=pypto`. Scopes, errors and error lines are
# compared; each symptom not already named by a corpus/upstream/ file is reduced
# with cds-reduce and filed there with a header. A report table ends the run.
#
#   ci/differential.sh [-n N] [--seed S] [--minutes M] [--out DIR] [--features LIST]
#                      [--passes LIST | --until PASS] [--no-reduce] [--build-dir DIR]
#                      [--python PY]
#
# -n N: programs (default 100), seeds S..S+N-1 (--seed, default 1). --minutes M:
# time box for the whole run (default 30); programs not reached are left out and
# the report says so. --features: cds-gen features (default: all but those whose
# constructs PyPTO's DSL refuses, docs/pypto.md). --passes/--until: PyPTO's passes
# (cds-pypto export); the default is SynthesizeAllReduceSignals,
# MaterializeCommDomainScopes. --no-reduce: file symptoms unreduced. --build-dir:
# the harness tools already built there (default: build/dev, as ci/test.sh builds it). --out:
# working folder (default build/differential). --python: the Python that has
# PyPTO (default: the build's own, Python3_EXECUTABLE of its CMake cache, which
# the `pypto` tests use too).
#
# PyPTO must be importable by PY (PYTHONPATH may name the folder holding its package).
# Exit codes: 0 every symptom of PyPTO's passes is a known one; 1: new ones were filed in
# corpus/upstream/; 2: the campaign could not run (bad argument, PyPTO not
# importable, a harness tool missing).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

N=100
SEED=1
MINUTES=30
OUT="$ROOT/build/differential"
BUILD_DIR=""
PYTHON=""
EXTRA=()
needs_value() { (($# >= 2)) || { echo "differential.sh: $1 needs a value (try --help)" >&2; exit 2; }; }
while (($#)); do
  case "$1" in
    -n|--seed|--minutes|--out|--passes|--until|--features|--python|--build-dir) needs_value "$@" ;;
  esac
  case "$1" in
    -n) N=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --passes|--until|--features) EXTRA+=("$1" "$2"); shift 2 ;;
    --python) PYTHON=$2; shift 2 ;;
    --no-reduce) EXTRA+=(--no-reduce); shift ;;
    --build-dir) BUILD_DIR=$(cd "$2" 2>/dev/null && pwd) ||
                   { echo "differential.sh: --build-dir $2: no such directory" >&2; exit 2; }
                 shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "differential.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ "$N" =~ ^[0-9]+$ && "$SEED" =~ ^[0-9]+$ && "$MINUTES" =~ ^[0-9]+([.][0-9]+)?$ ]] ||
  { echo "differential.sh: -n, --seed and --minutes take numbers" >&2; exit 2; }

log() { printf '[differential %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

BUILD_DIR=${BUILD_DIR:-$ROOT/build/dev}
for tool in cds-opt/cds-opt cds-gen/cds-gen cds-reduce/cds-reduce; do
  [[ -x "$BUILD_DIR/tools/$tool" ]] || {
    echo "differential.sh: no $BUILD_DIR/tools/$tool; run ci/test.sh first (it makes the harness tools in build/dev)" >&2
    exit 2
  }
done
if [[ -z "$PYTHON" ]]; then
  PYTHON=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | head -n1)
  [[ -n "$PYTHON" ]] || { echo "differential.sh: no Python3_EXECUTABLE in $BUILD_DIR/CMakeCache.txt; pass --python" >&2; exit 2; }
fi

if ! version=$("$PYTHON" "$ROOT/bridge/pypto/cds-pypto" --version) || ! grep -q '^pypto .*(commit ' <<<"$version"; then
  echo "differential.sh: PyPTO is not importable by $PYTHON, so the campaign cannot run:" >&2
  sed 's/^/  /' <<<"$version" >&2
  echo "  Install PyPTO as docs/pypto.md says (or put the folder holding its package on PYTHONPATH; --python names the Python that imports it)." >&2
  exit 2
fi
log "$(tr '\n' ' ' <<<"$version")"

exec "$PYTHON" "$ROOT/bridge/pypto/differential.py" run --build "$BUILD_DIR" -n "$N" --seed "$SEED" \
  --minutes "$MINUTES" --out "$OUT" --upstream-dir "$ROOT/corpus/upstream" "${EXTRA[@]}"
