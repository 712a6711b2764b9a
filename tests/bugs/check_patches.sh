#!/usr/bin/env bash
# Every deliberate bug (fuzz/bugs/NN-name.patch) starts with its `# rule: ...` line,
# changes files under pass/ only (a bug of the pass, judged by oracles that share
# none of its code), has a number of its own, and applies cleanly to the tree.
#
#   check_patches.sh [ROOT]     (default: the repository holding this script)
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
if [[ "$ROOT" == -h || "$ROOT" == --help ]]; then sed -n '2,6p' "$0"; exit 0; fi
cd "$ROOT"

problems=0
problem() { echo "check_patches: $*" >&2; problems=$((problems + 1)); }
declare -A seen
count=0
for p in fuzz/bugs/*; do
  [[ -e "$p" ]] || break
  name=$(basename "$p")
  if [[ ! "$name" =~ ^([0-9][0-9])-[a-z0-9-]+\.patch$ ]]; then
    problem "$p: not named NN-name.patch"
    continue
  fi
  count=$((count + 1))
  n=${BASH_REMATCH[1]}
  [[ -z "${seen[$n]:-}" ]] || problem "$p: number $n is also ${seen[$n]}"
  seen[$n]=$name
  head -1 "$p" | grep -qE '^# rule: [a-z][a-z -]* — .+' ||
    problem "$p:1: the first line must be '# rule: <rule> — <what the bug breaks>'"
  while read -r path; do
    [[ "$path" == pass/* ]] || problem "$p: changes $path, outside pass/"
  done < <(sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$p")
  grep -q '^diff --git ' "$p" || problem "$p: holds no diff"
  # Outside a git checkout (a source tarball) git apply works on the plain files.
  if ! err=$(git apply --check "$p" 2>&1); then
    problem "$p: does not apply to the tree: $err"
  fi
done
((count > 0)) || problem "no patches in fuzz/bugs/"
if ((problems)); then
  echo "check_patches: $problems problem(s) in $count patches" >&2
  exit 1
fi
echo "check_patches: $count patches, each with its rule, in pass/ only, applying cleanly"
