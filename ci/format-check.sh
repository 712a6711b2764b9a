#!/usr/bin/env bash
# Checks clang-format on the C++ files changed against a base ref (not part of the
# test suite; CI runs it as a separate step).
#
#   ci/format-check.sh [BASE_REF]     default: origin/main if it exists, else HEAD~1
#   ci/format-check.sh --fix [BASE]   rewrite the files in place instead
#
# Exit codes: 0 every changed file is formatted; 1 some file is not (clang-format's
# diagnostics are printed); 2 usage error (unknown flag or ref); 3 clang-format-14
# is not installed.
set -euo pipefail

# The comment block above, as --help prints it.
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$SELF"; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

FIX=0
BASE=""
while (($#)); do
  case "$1" in
    --fix) FIX=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "format-check: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    *)
      [[ -z $BASE ]] || { echo "format-check: more than one BASE_REF (try --help)" >&2; exit 2; }
      BASE=$1; shift ;;
  esac
done

CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$CLANG_FORMAT" >/dev/null || { echo "format-check: $CLANG_FORMAT not found" >&2; exit 3; }

if [[ -z $BASE ]]; then
  if git rev-parse --verify -q origin/main >/dev/null; then BASE=origin/main; else BASE=HEAD~1; fi
fi
git rev-parse --verify -q "$BASE" >/dev/null || { echo "format-check: unknown ref $BASE" >&2; exit 2; }

# Changed since the merge base (committed, staged or not), plus untracked files;
# deleted files are skipped.
mapfile -t files < <(
  { git diff --name-only --diff-filter=d "$(git merge-base "$BASE" HEAD)" -- ;
    git ls-files --others --exclude-standard; } |
  grep -E '\.(h|hpp|cc|cpp)$' | sort -u)
if ((${#files[@]} == 0)); then
  echo "format-check: no changed C++ files against $BASE"
  exit 0
fi

if ((FIX)); then
  "$CLANG_FORMAT" -i "${files[@]}"
  echo "format-check: formatted ${#files[@]} file(s)"
  exit 0
fi
if "$CLANG_FORMAT" --dry-run -Werror "${files[@]}"; then
  echo "format-check: ${#files[@]} changed file(s) formatted against $BASE"
else
  echo "format-check: run 'ci/format-check.sh --fix $BASE' to reformat" >&2
  exit 1
fi
