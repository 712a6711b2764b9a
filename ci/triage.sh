#!/usr/bin/env bash
# Triage one finding: reduce it, name it by its signature, write it into
# corpus/regressions/ with a header, and print the command that reproduces it.
#
#   ci/triage.sh [--target T] [--build DIR] [--out-dir DIR] FILE
#
# FILE is a .pyir program (or text that parses as one), or a byte input of a fuzz
# target (fuzz_pipeline, ...), which is decoded to text first when a decoder
# exists; otherwise it is kept raw as a seed of corpus/<target>/.
# --build: the build folder whose cds-replay / cds-reduce judge the finding
#   (default $CDS_TRIAGE_BUILD, else build/dev; the tools are built if missing).
# --out-dir: where the regression goes (default corpus/regressions).
# The header's EXPECT lines come from the verifier's own re-derivation
# (cds-replay --derive-header), never from the pass; when they cannot be derived
# the header says `# EXPECT: TODO` and cds-replay fails the file until a human
# fills it in from DESIGN §4. Exit 0 when a file was written, 1 when FILE shows no
# finding, 2 on usage or build errors. See docs/reducer.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=unknown
BUILD=${CDS_TRIAGE_BUILD:-$ROOT/build/dev}
OUT=$ROOT/corpus/regressions
FILE=""
while (($#)); do
  case "$1" in
    --target) TARGET=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out-dir) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "triage.sh: unknown option $1" >&2; exit 2 ;;
    *) FILE=$1; shift ;;
  esac
done
[[ -n "$FILE" && -f "$FILE" ]] || { echo "triage.sh: no such input file '$FILE'" >&2; exit 2; }
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")

log() { printf '[triage] %s\n' "$*" >&2; }
rel() { realpath --relative-to="$ROOT" "$1" 2>/dev/null || echo "$1"; }

REPLAY=$BUILD/tools/cds-replay/cds-replay
REDUCE=$BUILD/tools/cds-reduce/cds-reduce
if [[ ! -x "$REPLAY" || ! -x "$REDUCE" ]]; then
  if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    if [[ "$BUILD" == "$ROOT/build/dev" ]]; then
      (cd "$ROOT" && cmake --preset dev >/dev/null) || exit 2
    else
      echo "triage.sh: $BUILD is not a configured build folder" >&2; exit 2
    fi
  fi
  log "building cds-replay and cds-reduce in $(rel "$BUILD")"
  cmake --build "$BUILD" --target cds-replay cds-reduce >/dev/null || exit 2
fi

WORK=$(mktemp -d /tmp/cds-triage.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
DATE=$(date -u +%Y-%m-%d)
short_hash() { sha1sum "$1" | cut -c1-8; }

# Whether a file parses as a program: replay it through an empty pipeline, where
# the only possible DIAGNOSTIC is the parser's.
parses() {
  local err
  err=$("$REPLAY" --pipeline ' ' "$1" 2>&1 >/dev/null || true)
  ! grep -q '^DIAGNOSTIC ' <<<"$err"
}

keep_raw() {
  local dir=$ROOT/corpus/$TARGET
  mkdir -p "$dir"
  local name="found_raw_$(short_hash "$FILE")"
  cp "$FILE" "$dir/$name"
  log "$1; kept the raw input as $(rel "$dir/$name") (a seed of $TARGET)"
  echo "reproduce: build/dev/fuzz/targets/${TARGET}_replay $(rel "$dir/$name")"
  exit 0
}

# 1. A program text.
INPUT=$WORK/input.pyir
cp "$FILE" "$INPUT"
if ! parses "$INPUT"; then
  decoded=""
  for dec in "$BUILD/fuzz/targets/${TARGET}_replay" "$BUILD/tools/cds-gen/cds-gen"; do
    if [[ -x "$dec" ]] && "$dec" --help 2>&1 | grep -q -- '--decode'; then
      if "$dec" --decode "$FILE" >"$WORK/decoded.pyir" 2>/dev/null && parses "$WORK/decoded.pyir"; then
        decoded=$dec; break
      fi
    fi
  done
  if [[ -z "$decoded" && "$TARGET" == fuzz_pipeline ]]; then
    dec=$BUILD/tools/cds-reduce/cds-decode-bytes
    [[ -x "$dec" ]] || cmake --build "$BUILD" --target cds-decode-bytes >/dev/null 2>&1 || true
    if [[ -x "$dec" ]] && "$dec" "$FILE" >"$WORK/decoded.pyir" 2>/dev/null && parses "$WORK/decoded.pyir"; then
      decoded=$dec
    fi
  fi
  [[ -n "$decoded" ]] || keep_raw "the input is not program text and no decoder is available"
  log "decoded the byte input with $(rel "$decoded")"
  cp "$WORK/decoded.pyir" "$INPUT"
fi

# 2. What makes it interesting: the first FINDING / internal-check / sanitizer line.
ERR=$("$REPLAY" "$INPUT" 2>&1 >"$WORK/verdict" || true)
FIRST=$(grep -m1 -E '^FINDING |internal check failed: |ERROR: AddressSanitizer: |: runtime error: ' <<<"$ERR" || true)
MODE=()
if [[ "$FIRST" =~ ^FINDING\ (CDS-V[0-9]+) ]]; then
  CODE=${BASH_REMATCH[1]}
  MODE=(--same-code "$CODE")
  SLUG=$(tr 'A-Z' 'a-z' <<<"$CODE")
  SIG=${FIRST%%: *}
elif [[ -n "$FIRST" ]]; then
  MODE=(--same-crash)
  if [[ "$FIRST" == *"internal check failed: "* ]]; then
    SIG=${FIRST%%: internal check failed*}
    SLUG="check-$(basename "${SIG%:*}" .cc)-${SIG##*:}"
    SIG="$FIRST"
  else
    SIG=${FIRST%%: *}
    SLUG=$(sed -E 's/^FINDING //; s/.*AddressSanitizer: /asan-/; s/[^A-Za-z0-9]+/-/g; s/-+$//' <<<"$SIG" | tr 'A-Z' 'a-z')
  fi
elif grep -q 'pipeline rejected the program: ' "$WORK/verdict"; then
  # A valid program (by its header) that the pass rejects: keep the diagnostic's
  # wording up to the first quoted name, which reduction may rename away.
  MSG=$(sed -E 's/.*pipeline rejected the program: [^ ]+: error: //' "$WORK/verdict" | head -1)
  CORE=${MSG%%\'*}
  ((${#CORE} >= 12)) || CORE=$MSG
  MODE=(--same-diagnostic "$CORE")
  SIG="rejected: $CORE"
  SLUG="rejected-$(printf '%s' "$CORE" | sha1sum | cut -c1-6)"
else
  log "no finding: $(head -1 "$WORK/verdict")"
  exit 1
fi
log "signature: $SIG"

# 3. Reduce.
REDUCED=$WORK/reduced.pyir
set +e
"$REDUCE" "$INPUT" "${MODE[@]}" --replay "$REPLAY" -o "$REDUCED"
rc=$?
set -e
if ((rc != 0)) || [[ ! -s "$REDUCED" ]]; then
  log "cds-reduce could not reduce it (exit $rc); keeping the program as it is"
  grep -v -E '^# (SOURCE|EXPECT)' "$INPUT" >"$REDUCED"
fi

# 4. The expectation the correct pass gives.
if "$REPLAY" --derive-header "$REDUCED" >"$WORK/expect" 2>"$WORK/derive.err"; then
  TODO=""
else
  TODO=$(sed 's/^cds-replay: //' "$WORK/derive.err" | head -1)
  printf '# EXPECT: TODO (triage could not derive it: %s)\n' "$TODO" >"$WORK/expect"
fi

# 5. Name and write.
NAME="found_${SLUG}_$(short_hash "$REDUCED").pyir"
mkdir -p "$OUT"
DEST=$OUT/$NAME
{
  printf '# SOURCE: fuzz finding %s %s\n' "$TARGET" "$DATE"
  cat "$WORK/expect"
  printf '# Reduced by ci/triage.sh from %s; signature: %s\n' "$(basename "$FILE")" "$SIG"
  cat "$REDUCED"
} >"$WORK/final.pyir"
if [[ -f "$DEST" ]] && cmp -s <(grep -v '^# SOURCE:' "$DEST") <(grep -v '^# SOURCE:' "$WORK/final.pyir"); then
  log "$(rel "$DEST") already holds this finding"
else
  cp "$WORK/final.pyir" "$DEST"
  log "wrote $(rel "$DEST") ($(wc -l <"$DEST") lines)"
fi
if [[ -n "$TODO" ]]; then
  log "EXPECT is TODO: a human must fill the header of $(rel "$DEST") from DESIGN §4 ($TODO)"
fi
log "this build: $("$REPLAY" "$DEST" 2>/dev/null | head -1)"
echo "reproduce: $(rel "$REPLAY") $(rel "$DEST")"
