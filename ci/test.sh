#!/usr/bin/env bash
# Runs every test on a fresh or warm machine: installs the missing Debian packages,
# checks the format of every C++ file (ci/format-check.sh), configures and builds a
# CMake preset, runs CTest.
#
#   ci/test.sh [--preset NAME] [--target T]... [-R REGEX] [-E REGEX] [-j N]
#
#   --preset NAME  configure/build/test preset (default dev; see CMakePresets.json)
#   --target T     build only T (repeatable); default: everything
#   -R / -E REGEX  passed to ctest (include / exclude tests by name)
#   -j N           parallel build and test jobs (default: nproc)
#
# With --target, also pass -R: tests whose binaries were not built would fail.
#
# Environment: CDS_PROP_SCALE multiplies RapidCheck case counts (default 1);
# CCACHE_DIR defaults to build/ccache inside the repository.
#
# Exit codes: 0 every test passed; 1 a test failed, or a step before the tests
# (packages, format, configure, build) did; 2 usage error.
set -euo pipefail

# The comment block above, as --help prints it.
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$SELF"; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

PRESET=dev
TARGETS=()
CTEST_ARGS=()
JOBS=$(nproc)
while (($#)); do
  case "$1" in
    --preset|--target|-R|-E|-j)
      (($# >= 2)) || { echo "test.sh: $1 needs a value (try --help)" >&2; exit 2; } ;;&
    --preset) PRESET=$2; shift 2 ;;
    --target) TARGETS+=("$2"); shift 2 ;;
    -R|-E) CTEST_ARGS+=("$1" "$2"); shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
# Whatever step fails (packages, format, configure, build), the run has failed: exit 1.
trap 'rc=$?; ((rc == 0)) || exit 1' EXIT

log() { printf '[test %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# --- packages: only what dpkg reports missing; apt-get update at most once ----
"$ROOT/ci/install-deps.sh"

# --- format: every C++ file of the tree; a misformatted file fails the run, after
# the tests have run, so one push shows both ------------------------------------
log "checking the format of the C++ files"
format_rc=0
"$ROOT/ci/format-check.sh" || format_rc=$?

export CCACHE_DIR=${CCACHE_DIR:-$ROOT/build/ccache}
mkdir -p "$CCACHE_DIR"

# --- configure, build ---------------------------------------------------------
log "configuring preset $PRESET"
cmake --preset "$PRESET"

build=(cmake --build --preset "$PRESET" -j"$JOBS")
for t in "${TARGETS[@]}"; do build+=(--target "$t"); done
log "building${TARGETS:+ ${TARGETS[*]}}"
"${build[@]}"

# --- test -----------------------------------------------------------------------
# Presets without a test preset (release, fuzz) are tested from their build folder.
if python3 -c 'import json,sys; p=json.load(open("CMakePresets.json"));
sys.exit(0 if any(t["name"]==sys.argv[1] for t in p.get("testPresets",[])) else 1)' "$PRESET"; then
  ctest_cmd=(ctest --preset "$PRESET")
else
  ctest_cmd=(ctest --test-dir "build/$PRESET" --output-on-failure)
fi
log "running ${ctest_cmd[*]} ${CTEST_ARGS[*]:-}"
set +e
"${ctest_cmd[@]}" -j"$JOBS" --timeout 900 "${CTEST_ARGS[@]}"
rc=$?
set -e
log "ctest exit code $rc"
((format_rc == 0)) || log "FAILED: C++ files not formatted (see above; ci/format-check.sh --fix)"
((rc == 0 && format_rc == 0)) || exit 1
exit 0
