#!/usr/bin/env bash
# Shows that check_symbols.sh can fail: given the verifier plus a probe object
# that calls the IR builder as the pass does (probe/size_like_the_pass.cc), it
# must exit 1 and name the probe's calls, and only the probe's.
#
#   symbols_probe.sh CHECK_SYMBOLS PROBE_OBJECT ARGS...   (ARGS: check_symbols.sh's)
set -euo pipefail
CHECK=$1
PROBE=$2
shift 2
set +e
out=$("$CHECK" "$@" --judge "probe=$PROBE" 2>&1)
rc=$?
set -e
echo "$out"
fail() { echo "symbols_probe: $*" >&2; exit 1; }
[[ $rc -eq 1 ]] || fail "expected exit 1 with the probe, got $rc"
for want in "FAIL: probe calls cds::ir::Binary(" "FAIL: probe calls cds::ir::Int("; do
  grep -qF "$want" <<<"$out" || fail "missing finding: $want"
done
if grep -v '^FAIL: probe ' <<<"$out" | grep -q '^FAIL: '; then
  fail "a judge other than the probe was reported"
fi
