#!/usr/bin/env bash
# The nightly fuzz campaign, time-boxed: builds the fuzz preset, runs every
# libFuzzer target for a budget, merges new coverage into the working corpus,
# minimises and triages every crash, measures coverage with llvm-cov, and writes
# a markdown report (and an HTML coverage report beside it).
#
#   ci/fuzz.sh [--minutes N] [--seconds N] [--jobs N] [--targets a,b] [--out DIR] [--no-coverage]
#
# --minutes/--seconds is the budget per target (default 60 s each); --jobs N runs
# N libFuzzer workers per target (fork mode; default 1, use $(nproc) for all cores).
# Exits 1 if any target produced a finding.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

SECONDS_PER_TARGET=60
JOBS=1
TARGETS=""
OUT="$ROOT/build/fuzz-campaign"
COVERAGE=1
while (($#)); do
  case "$1" in
    --minutes) SECONDS_PER_TARGET=$(($2 * 60)); shift 2 ;;
    --seconds) SECONDS_PER_TARGET=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-coverage) COVERAGE=0; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { printf '[fuzz %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

"$ROOT/ci/install-deps.sh"

log "building the fuzz preset (libFuzzer + ASan + UBSan)"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
FUZZ_BIN="$ROOT/build/fuzz/fuzz/targets"

if [[ -z "$TARGETS" ]]; then
  TARGETS=$(cd "$ROOT/fuzz/targets" && ls fuzz_*.cc | sed 's/\.cc$//' | paste -sd, -)
fi
IFS=',' read -r -a TARGET_LIST <<<"$TARGETS"

mkdir -p "$OUT"
REPORT="$OUT/report.md"
FINDINGS=0
declare -A EXECS RATE SEEDS FINAL NEWCOV

for t in "${TARGET_LIST[@]}"; do
  bin="$FUZZ_BIN/$t"
  [[ -x "$bin" ]] || { echo "fuzz.sh: no binary for $t at $bin" >&2; exit 2; }
  work="$OUT/$t"
  corpus="$work/corpus"          # the working corpus, kept between runs
  fresh="$work/run-corpus"       # what this run adds (libFuzzer writes into its first dir)
  artifacts="$work/artifacts"
  mkdir -p "$corpus" "$fresh" "$artifacts"
  seeds="$ROOT/corpus/$t"
  if [[ -d "$seeds" ]]; then cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true; fi
  SEEDS[$t]=$(find "$corpus" -type f | wc -l)
  opts=()
  [[ -f "$ROOT/corpus/$t.dict" ]] && opts+=("-dict=$ROOT/corpus/$t.dict")
  if [[ -f "$ROOT/corpus/$t.options" ]]; then
    # [libfuzzer] section: key = value lines become -key=value flags.
    while IFS='=' read -r k v; do
      k=$(echo "$k" | xargs); v=$(echo "$v" | xargs)
      [[ -n "$k" && "$k" != \[* && "$k" != \#* && "$k" != dict ]] && opts+=("-$k=$v")
    done <"$ROOT/corpus/$t.options"
  fi
  parallel=()
  ((JOBS > 1)) && parallel=("-fork=$JOBS" "-ignore_crashes=1")
  log "$t: ${SECONDS_PER_TARGET}s, ${JOBS} job(s), ${SEEDS[$t]} seed inputs"
  set +e
  "$bin" "$fresh" "$corpus" "${opts[@]}" "${parallel[@]}" -max_total_time="$SECONDS_PER_TARGET" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" -timeout=10 -rss_limit_mb=4096 \
    >"$work/fuzz.log" 2>&1 &
  pid=$!
  # Progress: the latest libFuzzer status line every 10 seconds.
  while kill -0 "$pid" 2>/dev/null; do
    sleep 10
    line=$(grep -E '#[0-9]+' "$work/fuzz.log" | tail -1 | cut -c1-120 || true)
    [[ -n "$line" ]] && log "$t: $line"
  done
  wait "$pid"
  rc=$?
  set -e
  EXECS[$t]=$(grep -h 'stat::number_of_executed_units' "$work/fuzz.log" | awk '{s+=$2} END {print s+0}')
  secs=$(grep -h 'Done [0-9]* runs in' "$work/fuzz.log" | tail -1 | sed -E 's/.* in ([0-9]+) second.*/\1/')
  [[ -z "$secs" || "$secs" == 0 ]] && secs=$SECONDS_PER_TARGET
  RATE[$t]=$((EXECS[$t] / secs))
  # Fold this run's new inputs into the working corpus, keeping only coverage gains.
  "$bin" -merge=1 "$corpus" "$fresh" >"$work/merge.log" 2>&1 || true
  rm -rf "$fresh"
  FINAL[$t]=$(find "$corpus" -type f | wc -l)
  NEWCOV[$t]=$(grep -hoE 'NEW_FUNC|[0-9]+ new features' "$work/merge.log" | head -1 || true)
  crashes=$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [[ -n "$crashes" || $rc -ne 0 ]]; then
    log "$t: FINDING (exit $rc)"
  fi
  for c in $crashes; do
    FINDINGS=$((FINDINGS + 1))
    min="$c.min"
    "$bin" -minimize_crash=1 -runs=20000 -exact_artifact_path="$min" "$c" >"$c.minimize.log" 2>&1 || true
    [[ -s "$min" ]] || cp "$c" "$min"
    echo "$t|$c|$min" >>"$OUT/findings.txt"
    if [[ -x "$ROOT/ci/triage.sh" ]]; then "$ROOT/ci/triage.sh" --target "$t" "$min" >"$c.triage.log" 2>&1 || true; fi
  done
done

COVERAGE_ROWS=""
if ((COVERAGE)); then
  log "coverage: building the coverage preset's replay drivers"
  cmake --preset coverage >/dev/null
  replays=()
  for t in "${TARGET_LIST[@]}"; do replays+=("${t}_replay"); done
  cmake --build --preset coverage -j"$(nproc)" --target "${replays[@]}" >/dev/null
  prof="$OUT/profiles"
  rm -rf "$prof"; mkdir -p "$prof"
  objects=()
  for t in "${TARGET_LIST[@]}"; do
    rbin="$ROOT/build/coverage/fuzz/targets/${t}_replay"
    LLVM_PROFILE_FILE="$prof/$t-%p.profraw" "$rbin" "$OUT/$t/corpus" >/dev/null 2>&1 || true
    objects+=("-object=$rbin")
  done
  llvm-profdata-14 merge -sparse "$prof"/*.profraw -o "$OUT/campaign.profdata"
  first=${objects[0]#-object=}
  llvm-cov-14 report "$first" "${objects[@]:1}" -instr-profile="$OUT/campaign.profdata" \
    "$ROOT/ir" "$ROOT/pass" "$ROOT/verifier" >"$OUT/coverage.txt" || true
  llvm-cov-14 show "$first" "${objects[@]:1}" -instr-profile="$OUT/campaign.profdata" -format=html \
    -output-dir="$OUT/coverage-html" "$ROOT/ir" "$ROOT/pass" "$ROOT/verifier" >/dev/null 2>&1 || true
  COVERAGE_ROWS=$(grep -E '^TOTAL' "$OUT/coverage.txt" || true)
fi

{
  echo "# Fuzz campaign report"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), ${SECONDS_PER_TARGET}s per target, ${JOBS} job(s)"
  echo
  echo "| target | execs | exec/s | corpus before | corpus after |"
  echo "|---|---:|---:|---:|---:|"
  for t in "${TARGET_LIST[@]}"; do
    echo "| $t | ${EXECS[$t]} | ${RATE[$t]} | ${SEEDS[$t]} | ${FINAL[$t]} |"
  done
  echo
  if ((COVERAGE)); then
    echo "## Coverage of ir/, pass/, verifier/ by the campaign corpus (llvm-cov)"
    echo
    echo '```'
    cat "$OUT/coverage.txt" 2>/dev/null | tail -n 25
    echo '```'
    echo
    echo "HTML: \`$OUT/coverage-html/index.html\`"
    echo
  fi
  echo "## Findings: $FINDINGS"
  if [[ -f "$OUT/findings.txt" ]]; then
    while IFS='|' read -r t c m; do
      echo
      echo "- **$t**: \`$(basename "$c")\`"
      echo "  - reproduce: \`build/fuzz/fuzz/targets/$t $m\`"
      echo "  - replay without libFuzzer: \`build/dev/fuzz/targets/${t}_replay $m\`"
      [[ -f "$c.triage.log" ]] && sed 's/^/  - triage: /' "$c.triage.log" | tail -3
    done <"$OUT/findings.txt"
  fi
} >"$REPORT"
rm -f "$OUT/findings.txt.done"
[[ -f "$OUT/findings.txt" ]] && mv "$OUT/findings.txt" "$OUT/findings.txt.done"

log "report: $REPORT"
cat "$REPORT"
((FINDINGS == 0))
