#!/usr/bin/env bash
# Checks clang-format on every C++ file of the tree (tracked, and untracked ones git
# does not ignore) against the repository's .clang-format. ci/test.sh runs it
# before the build.
#
#   ci/format-check.sh          report the files that are not formatted
#   ci/format-check.sh --fix    rewrite them in place instead
#
# Environment: CLANG_FORMAT names the binary (default clang-format-14).
#
# Exit codes: 0 every file is formatted (or --fix rewrote them); 1 some file is
# not (clang-format's diagnostics, with file:line:col, are printed); 2 usage
# error, or clang-format is not installed (ci/install-deps.sh installs it).
set -euo pipefail

# The comment block above, as --help prints it.
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$SELF"; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

FIX=0
while (($#)); do
  case "$1" in
    --fix) FIX=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "format-check: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$CLANG_FORMAT" >/dev/null ||
  { echo "format-check: $CLANG_FORMAT not found (ci/install-deps.sh installs it)" >&2; exit 2; }

# Deleted but still tracked files are skipped.
mapfile -t files < <(
  git ls-files --cached --others --exclude-standard -- '*.h' '*.hpp' '*.cc' '*.cpp' |
  sort -u | while IFS= read -r f; do [[ -f "$f" ]] && printf '%s\n' "$f"; done)
if ((${#files[@]} == 0)); then
  echo "format-check: no C++ files"
  exit 0
fi

if ((FIX)); then
  "$CLANG_FORMAT" -i "${files[@]}"
  echo "format-check: formatted ${#files[@]} file(s)"
  exit 0
fi
if "$CLANG_FORMAT" --dry-run -Werror "${files[@]}"; then
  echo "format-check: all ${#files[@]} C++ files formatted"
else
  bad=$("$CLANG_FORMAT" --dry-run "${files[@]}" 2>&1 | grep -oE '^[^:]+:[0-9]+:[0-9]+: (warning|error)' |
        cut -d: -f1 | sort -u | wc -l)
  echo "format-check: $bad of ${#files[@]} C++ files not formatted; run 'ci/format-check.sh --fix'" >&2
  exit 1
fi
