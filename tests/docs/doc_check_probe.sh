#!/usr/bin/env bash
# Shows that ci/doc-check.sh can fail: a tree with one instance of each rejected
# pattern must give exit 1 and name every one; the same tree without them, 0.
set -euo pipefail
CHECK=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/docs" "$tmp/ir" "$tmp/ci" "$tmp/tests/lit"
cat >"$tmp/CMakePresets.json" <<'J'
{"version": 6, "configurePresets": [{"name": "dev"}, {"name": "release"}]}
J
printf '#!/bin/sh\nmkdir -p build/bench\n' >"$tmp/ci/run.sh"
cat >"$tmp/README.md" <<'M'
# probe
Build with build/dev, benchmarks land in build/bench.
M
cat >"$tmp/docs/figures.md" <<'M'
### Current figures (seventh session)
Measured in build/h6-cov on 2026-11-30.
### Second round (parser)
M
cat >"$tmp/ir/x.cc" <<'M'
// The parser items (issue 3, item 2) made this faster after the issue-7 changes.
int x;
M
cat >"$tmp/tests/lit/y.pyir" <<'M'
# session 4 measured this
x = 1  # not a comment line: ignored
M

set +e
out=$("$CHECK" --root "$tmp")
rc=$?
set -e
echo "$out"
fail() { echo "doc_check_probe: $*" >&2; exit 1; }
[[ $rc -eq 1 ]] || fail "expected exit 1 on the probe tree, got $rc"
for want in "docs/figures.md:1: figures are dated by session" \
            "docs/figures.md:1: a session is dated" \
            "docs/figures.md:2: a date of work" \
            "docs/figures.md:2: build/h6-cov is no preset's or script's folder" \
            "docs/figures.md:3: a round of work is dated" \
            "ir/x.cc:1: a change is dated by its issue" \
            "tests/lit/y.pyir:1: a session is dated" \
            "doc-check: 8 findings"; do
  grep -qF "$want" <<<"$out" || fail "missing finding: $want"
done

# The same tree without the diary lines is clean.
printf '# figures\n' >"$tmp/docs/figures.md"
printf 'int x;\n' >"$tmp/ir/x.cc"
printf 'x = 1\n' >"$tmp/tests/lit/y.pyir"
"$CHECK" --root "$tmp" || fail "expected exit 0 on the cleaned tree"
