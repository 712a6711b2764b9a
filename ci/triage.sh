#!/usr/bin/env bash
# Triage one finding: reduce it, name it by its signature, write it into
# corpus/regressions/ with a header, and print the command that reproduces it.
#
#   ci/triage.sh [--target T] [--build DIR] [--out-dir DIR] FILE
#
# FILE is a .pyir program (or text that parses as one), or a byte input of a fuzz
# target (fuzz_pipeline, ...), which is decoded to text first when a decoder
# exists; otherwise it is kept raw as a seed of corpus/<target>/.
# --target: the fuzz target that found FILE (its SOURCE line says so); without it
#   FILE counts as given by hand.
# --build: the build folder whose cds-replay / cds-reduce judge the finding
#   (default $CDS_TRIAGE_BUILD, else build/dev; the tools are built if missing).
# --out-dir: where the regression goes (default corpus/regressions).
# The reduction keeps the first finding (same code, same objects), and the file is
# named after the reduced program's first finding. The header's EXPECT lines come
# from the verifier's own re-derivation (cds-replay --derive-header), never from
# the pass; when they cannot be derived the header says `# EXPECT: TODO` and
# cds-replay fails the file until a human fills it in from the pass's rules
# (docs/pass.md). See docs/reducer.md.
#
# Exit codes: 0 a file was written (or already held the finding); 1 FILE shows no
# finding or cannot be read; 2 usage error; 3 the tools could not be built.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$ROOT/ci/triage.sh"; }
TARGET=""
BUILD=${CDS_TRIAGE_BUILD:-$ROOT/build/dev}
OUT=$ROOT/corpus/regressions
FILE=""
while (($#)); do
  case "$1" in
    --target|--build|--out-dir)
      (($# >= 2)) || { echo "triage.sh: $1 needs a value (try --help)" >&2; exit 2; } ;;&
    --target) TARGET=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out-dir) OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "triage.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    *)
      [[ -z "$FILE" ]] || { echo "triage.sh: more than one FILE (try --help)" >&2; exit 2; }
      FILE=$1; shift ;;
  esac
done
[[ -n "$FILE" ]] || { echo "triage.sh: no FILE given (try --help)" >&2; exit 2; }
# As the tools word it: cannot read 'FILE': REASON.
reason=""
if [[ ! -e "$FILE" ]]; then reason="No such file or directory"
elif [[ -d "$FILE" ]]; then reason="Is a directory"
elif [[ ! -r "$FILE" ]]; then reason="Permission denied"
fi
[[ -z "$reason" ]] || { echo "triage.sh: error: cannot read '$FILE': $reason" >&2; exit 1; }
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$BUILD")

log() { printf '[triage] %s\n' "$*" >&2; }
# A path inside the repository relative to its root, any other path absolute.
rel() {
  local abs
  abs=$(realpath -m "$1")
  if [[ "$abs" == "$ROOT"/* ]]; then echo "${abs#"$ROOT"/}"; else echo "$abs"; fi
}

REPLAY=$BUILD/tools/cds-replay/cds-replay
REDUCE=$BUILD/tools/cds-reduce/cds-reduce
if [[ ! -x "$REPLAY" || ! -x "$REDUCE" ]]; then
  if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    if [[ "$BUILD" == "$ROOT/build/dev" ]]; then
      (cd "$ROOT" && cmake --preset dev >/dev/null) || exit 3
    else
      echo "triage.sh: $BUILD is not a configured build folder" >&2; exit 3
    fi
  fi
  log "building cds-replay and cds-reduce in $(rel "$BUILD")"
  cmake --build "$BUILD" --target cds-replay cds-reduce >/dev/null || exit 3
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
  local dir=$ROOT/corpus/${TARGET:-hand-given}
  mkdir -p "$dir"
  local name="found_raw_$(short_hash "$FILE")"
  cp "$FILE" "$dir/$name.tmp-$$" && mv -f "$dir/$name.tmp-$$" "$dir/$name"
  log "$1; kept the raw input as $(rel "$dir/$name")${TARGET:+ (a seed of $TARGET)}"
  [[ -z "$TARGET" ]] || echo "reproduce: build/dev/fuzz/targets/${TARGET}_replay $(rel "$dir/$name")"
  exit 0
}

# 1. A program text.
INPUT=$WORK/input.pyir
cp "$FILE" "$INPUT"
if ! parses "$INPUT"; then
  decoded=""
  decoders=("$BUILD/tools/cds-gen/cds-gen")
  [[ -z "$TARGET" ]] || decoders=("$BUILD/fuzz/targets/${TARGET}_replay" "${decoders[@]}")
  for dec in "${decoders[@]}"; do
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
# signature FILE sets MODE (the cds-reduce test that keeps it), SIG and SLUG (the
# name part); returns 1 when FILE shows nothing to triage.
signature() {
  local err first
  err=$("$REPLAY" "$1" 2>&1 >"$WORK/verdict" || true)
  first=$(grep -m1 -E '^FINDING |internal check failed: |ERROR: AddressSanitizer: |: runtime error: ' <<<"$err" || true)
  MODE=()
  if [[ "$first" =~ ^FINDING\ (CDS-V[0-9]+) ]]; then
    local code=${BASH_REMATCH[1]}
    MODE=(--same-code "$code")
    SLUG=$(tr 'A-Z' 'a-z' <<<"$code")
    SIG=${first%%: *}
  elif [[ -n "$first" ]]; then
    MODE=(--same-crash)
    if [[ "$first" == *"internal check failed: "* ]]; then
      SIG=${first%%: internal check failed*}
      SLUG="check-$(basename "${SIG%:*}" .cc)-${SIG##*:}"
      SIG="$first"
    else
      SIG=${first%%: *}
      SLUG=$(sed -E 's/^FINDING //; s/.*AddressSanitizer: /asan-/; s/[^A-Za-z0-9]+/-/g; s/-+$//' <<<"$SIG" | tr 'A-Z' 'a-z')
    fi
  elif grep -q 'pipeline rejected the program: ' "$WORK/verdict"; then
    # A valid program (by its header) that the pass rejects: keep the diagnostic's
    # wording up to the first quoted name, which reduction may rename away.
    local msg core
    msg=$(sed -E 's/.*pipeline rejected the program: [^ ]+: error: //' "$WORK/verdict" | head -1)
    core=${msg%%\'*}
    ((${#core} >= 12)) || core=$msg
    MODE=(--same-diagnostic "$core")
    SIG="rejected: $core"
    SLUG="rejected-$(printf '%s' "$core" | sha1sum | cut -c1-6)"
  else
    return 1
  fi
}
if ! signature "$INPUT"; then
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

# 5. Name and write: the name is the reduced program's own first finding (the one
# the reduction kept). A rejection is judged against the input's header, which the
# reduced program does not carry, so it keeps the input's name.
START_SIG=$SIG
if [[ "$START_SIG" == rejected:* ]]; then
  :
elif signature "$REDUCED"; then
  [[ "$SIG" == "$START_SIG" ]] ||
    log "the reduced program's first finding is '$SIG' (the input's was '$START_SIG'); named after it"
else
  log "the reduced program shows no finding under this build; named after the input's"
  SIG=$START_SIG
fi
NAME="found_${SLUG}_$(short_hash "$REDUCED").pyir"
mkdir -p "$OUT"
DEST=$OUT/$NAME
if [[ -n "$TARGET" ]]; then
  SOURCE="fuzz finding $TARGET $DATE"
else
  SOURCE="file given by hand ($(basename "$FILE")) to ci/triage.sh $DATE"
fi
{
  printf '# SOURCE: %s\n' "$SOURCE"
  cat "$WORK/expect"
  printf '# Reduced by ci/triage.sh from %s; signature: %s\n' "$(basename "$FILE")" "$SIG"
  cat "$REDUCED"
} >"$WORK/final.pyir"
if [[ -f "$DEST" ]] && cmp -s <(grep -v '^# SOURCE:' "$DEST") <(grep -v '^# SOURCE:' "$WORK/final.pyir"); then
  log "$(rel "$DEST") already holds this finding"
else
  # A temporary beside DEST renamed over it: an interrupted run leaves no half file.
  cp "$WORK/final.pyir" "$DEST.tmp-$$" && mv -f "$DEST.tmp-$$" "$DEST"
  log "wrote $(rel "$DEST") ($(wc -l <"$DEST") lines)"
fi
if [[ -n "$TODO" ]]; then
  log "EXPECT is TODO: a human must fill the header of $(rel "$DEST") from the pass's rules, docs/pass.md ($TODO)"
fi
log "this build: $("$REPLAY" "$DEST" 2>/dev/null | head -1)"
echo "reproduce: $(rel "$REPLAY") $(rel "$DEST")"
