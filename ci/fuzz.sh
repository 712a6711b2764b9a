#!/usr/bin/env bash
# The nightly fuzz campaign, time-boxed: builds the fuzz preset, runs every
# libFuzzer target for a budget, merges new coverage into the working corpus,
# minimises every crash, measures coverage with llvm-cov, and writes a markdown
# report (and an HTML coverage report beside it).
#
#   ci/fuzz.sh [--minutes N | --seconds N] [--jobs N] [--targets a,b] [--out DIR]
#              [--no-coverage] [--no-triage] [--preset P | --build-dir DIR | --inject-bug K]
#
# --minutes/--seconds: budget per target (default 60 s). --jobs N: N libFuzzer
# workers per target (fork mode; default 1). --build-dir: use fuzz targets already
# built there (fuzz/targets/<name>) instead of building the fuzz preset.
# --preset P: the preset to build the targets with: fuzz (default; libFuzzer + ASan +
# UBSan) or fuzz-logic (UBSan only: the logic oracles fuzz_pipeline and
# fuzz_text_mutate judge several times as many programs per second; run it beside
# a fuzz campaign, not instead of one, since it cannot see memory errors). The
# working corpora of the two presets are kept apart (OUT defaults per preset).
# --inject-bug K: build the targets from a scratch copy of the tree with the deliberate
# bug fuzz/bugs/K-*.patch applied (ci/bug-hunt.sh --prepare K, in build/bug-hunt-K; the
# working tree is left alone), to prove that a campaign catches a known bug. Each finding is minimised and then
# triaged (ci/triage.sh: reduced, named by signature, written with a header into
# corpus/regressions/, or into OUT/regressions/ for --build-dir/--inject-bug runs,
# whose findings are not bugs of the real pass); --no-triage skips that.
#
# Exit codes: 0 no finding; 1 a finding; 2 usage error; 3 the campaign itself
# failed (a build, a missing binary, the coverage step).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$ROOT/ci/fuzz.sh"; }
cd "$ROOT"

SECONDS_PER_TARGET=60
JOBS=1
TARGETS=""
OUT=""
COVERAGE=1
TRIAGE=1
BUGGY_BUILD=0  # --build-dir / --inject-bug: findings belong to that build, not the real pass
BUILD_DIR=""
INJECT=""
PRESET=fuzz
usage_error() { echo "fuzz.sh: $* (try --help)" >&2; exit 2; }
number() { [[ "$2" =~ ^[0-9]+$ ]] || usage_error "$1 needs a number, got '$2'"; }
while (($#)); do
  case "$1" in
    --minutes|--seconds|--jobs|--targets|--out|--build-dir|--inject-bug|--preset)
      (($# >= 2)) || usage_error "$1 needs a value" ;;&
    --minutes|--seconds|--jobs|--inject-bug) number "$1" "$2" ;;&
    --minutes) SECONDS_PER_TARGET=$(($2 * 60)); shift 2 ;;
    --seconds) SECONDS_PER_TARGET=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-coverage) COVERAGE=0; shift ;;
    --no-triage) TRIAGE=0; shift ;;
    --build-dir)
      [[ -d "$2" ]] || usage_error "--build-dir '$2' is not a folder"
      BUILD_DIR=$(cd "$2" && pwd); BUGGY_BUILD=1; shift 2 ;;
    --inject-bug) INJECT=$2; shift 2 ;;
    --preset)
      [[ "$2" == fuzz || "$2" == fuzz-logic ]] || usage_error "--preset must be fuzz or fuzz-logic, got '$2'"
      PRESET=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
done
if [[ -z "$OUT" ]]; then
  OUT="$ROOT/build/$PRESET/campaign${INJECT:+-bug$INJECT}"
fi

log() { printf '[fuzz %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { echo "fuzz.sh: $*" >&2; exit 3; }

if [[ -z "$TARGETS" ]]; then
  TARGETS=$(cd "$ROOT/fuzz/targets" && ls fuzz_*.cc | sed 's/\.cc$//' | paste -sd, -)
fi
IFS=',' read -r -a TARGET_LIST <<<"$TARGETS"
for t in "${TARGET_LIST[@]}"; do
  [[ -f "$ROOT/fuzz/targets/$t.cc" && "$t" == fuzz_* ]] ||
    usage_error "unknown fuzz target '$t' (known: $(cd "$ROOT/fuzz/targets" && ls fuzz_*.cc | sed 's/\.cc$//' | paste -sd' ' -))"
done

"$ROOT/ci/install-deps.sh" || die "installing the packages failed"

# Only the fuzz binaries are needed: building the whole preset would also build
# every tool under ASan for nothing.
if [[ -n "$INJECT" ]]; then
  BUGGY_BUILD=1
  log "building the fuzz targets with fuzz/bugs/$(printf '%02d' "$((10#$INJECT))")-*.patch applied"
  BUILD_DIR=$("$ROOT/ci/bug-hunt.sh" --prepare "$INJECT" --targets "$TARGETS" \
    --out "$ROOT/build/bug-hunt-$INJECT") || die "building with bug $INJECT failed"
elif [[ -z "$BUILD_DIR" ]]; then
  BUILD_DIR="$ROOT/build/$PRESET"
  log "building the $PRESET preset: ${TARGET_LIST[*]}"
  cmake --preset "$PRESET" >/dev/null || die "configure failed"
  cmake --build --preset "$PRESET" -j"$(nproc)" --target "${TARGET_LIST[@]}" || die "build failed"
fi
FUZZ_BIN="$BUILD_DIR/fuzz/targets"

mkdir -p "$OUT"
REPORT="$OUT/report.md"
FINDINGS=0
rm -f "$OUT/findings.txt"
declare -A EXECS RATE SEEDS FINAL COV FT RC

for t in "${TARGET_LIST[@]}"; do
  bin="$FUZZ_BIN/$t"
  [[ -x "$bin" ]] || die "no binary for $t at $bin"
  work="$OUT/$t"
  corpus="$work/corpus"          # the working corpus, kept between runs
  fresh="$work/run-corpus"       # what this run adds (libFuzzer writes into its first dir)
  artifacts="$work/artifacts"    # this run's crashes only
  rm -rf "$fresh" "$artifacts"
  mkdir -p "$corpus" "$fresh" "$artifacts"
  # The seeds come from the corpora as they are now (ci/seeds.py); inputs the
  # working corpus already has are kept.
  rm -rf "$work/seeds"
  python3 "$ROOT/ci/seeds.py" "$t" "$work/seeds" >/dev/null || die "cannot assemble the seeds of $t"
  cp -n "$work/seeds"/* "$corpus"/ 2>/dev/null || true
  SEEDS[$t]=$(find "$corpus" -type f | wc -l)
  opts=()
  dict=$(python3 "$ROOT/ci/seeds.py" --dict "$t")
  [[ -n "$dict" ]] && opts+=("-dict=$dict")
  if [[ -f "$ROOT/corpus/$t.options" ]]; then
    # [libfuzzer] section: `key = value` lines become -key=value flags (dict is
    # a file name relative to $OUT on ClusterFuzzLite; here it is passed above).
    while IFS='=' read -r k v; do
      k=$(echo "$k" | xargs); v=$(echo "${v:-}" | xargs)
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
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    line=$( (grep -aE '^#[0-9]+' "$work/fuzz.log" || true) | tail -1 | cut -c1-120)
    [[ -n "$line" ]] && log "$t: $line"
  done
  wait "$pid"
  RC[$t]=$?
  set -e
  # Executions: the final stats in plain mode; the last status line in fork mode
  # (workers print their own stats, the parent only status lines).
  execs=$( (grep -ah 'stat::number_of_executed_units' "$work/fuzz.log" || true) | awk '{s+=$2} END {print s+0}')
  last=$( (grep -aE '^#[0-9]+' "$work/fuzz.log" || true) | tail -1)
  if ((JOBS > 1)) || [[ "$execs" == 0 ]]; then
    execs=$(sed -E 's/^#([0-9]+).*/\1/' <<<"${last:-#0}")
  fi
  EXECS[$t]=$execs
  secs=$( (grep -ah 'Done [0-9]* runs in' "$work/fuzz.log" || true) | tail -1 | sed -E 's/.* in ([0-9]+) second.*/\1/')
  [[ -z "$secs" || "$secs" == 0 ]] && secs=$SECONDS_PER_TARGET
  RATE[$t]=$((execs / secs))
  COV[$t]=$( (grep -oE 'cov: [0-9]+' <<<"$last" || true) | awk '{print $2}')
  FT[$t]=$( (grep -oE 'ft: [0-9]+' <<<"$last" || true) | awk '{print $2}')
  # Fold this run's new inputs into the working corpus, keeping only coverage gains.
  "$bin" -merge=1 "$corpus" "$fresh" "${opts[@]}" >"$work/merge.log" 2>&1 || true
  rm -rf "$fresh"
  FINAL[$t]=$(find "$corpus" -type f | wc -l)
  crashes=$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' -o -name 'slow-unit-*' \) ! -name '*.min' | sort)
  if [[ -z "$crashes" && ${RC[$t]} -ne 0 ]]; then
    # libFuzzer stopped without an artifact (e.g. a flag it rejected): the run
    # proves nothing, which is a failure of the campaign, not a pass.
    log "$t: libFuzzer exited ${RC[$t]} without an artifact; see $work/fuzz.log"
    tail -5 "$work/fuzz.log" >&2
    echo "$t|(exit ${RC[$t]}, no artifact)|$work/fuzz.log" >>"$OUT/findings.txt"
    FINDINGS=$((FINDINGS + 1))
  fi
  for c in $crashes; do
    FINDINGS=$((FINDINGS + 1))
    what=$( (grep -aoE 'FINDING [a-z_]+: .*|internal check failed: .*|ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer): [a-z-]+' \
      "$work/fuzz.log" || true) | head -1)
    log "$t: FINDING $(basename "$c"): ${what:-see $work/fuzz.log}"
    min="$c.min"
    "$bin" -minimize_crash=1 -runs=20000 -exact_artifact_path="$min" "$c" >"$c.minimize.log" 2>&1 || true
    [[ -s "$min" ]] || cp "$c" "$min"
    # Every finding becomes a small regression program (reduced, named by its
    # signature, with a header) in corpus/regressions/ for a human to review and commit.
    if ((TRIAGE)); then
      log "$t: triaging $(basename "$min")"
      triage_args=(--target "$t")
      # A finding of a deliberately broken build is judged by that build's tools and
      # kept out of the repository's corpus.
      if ((BUGGY_BUILD)); then triage_args+=(--build "$BUILD_DIR" --out-dir "$OUT/regressions"); fi
      "$ROOT/ci/triage.sh" "${triage_args[@]}" "$min" >"$c.triage.log" 2>&1 || true
      tail -2 "$c.triage.log" | sed "s/^/[fuzz] $t: triage: /"
    fi
    echo "$t|$c|$min|$what" >>"$OUT/findings.txt"
  done
done

COVERAGE_SUMMARY=""
if ((COVERAGE)); then
  log "coverage: building the coverage preset's replay drivers"
  cmake --preset coverage >/dev/null || die "configuring the coverage preset failed"
  replays=()
  for t in "${TARGET_LIST[@]}"; do replays+=("${t}_replay"); done
  cmake --build --preset coverage -j"$(nproc)" --target "${replays[@]}" >"$OUT/coverage-build.log" 2>&1 ||
    die "coverage build failed; see $OUT/coverage-build.log"
  prof="$OUT/profiles"
  rm -rf "$prof"; mkdir -p "$prof"
  objects=()
  for t in "${TARGET_LIST[@]}"; do
    rbin="$ROOT/build/coverage/fuzz/targets/${t}_replay"
    # A corpus input that still aborts (a finding) would end the replay before the
    # profile is written: then replay file by file so the rest still counts.
    if ! LLVM_PROFILE_FILE="$prof/$t-%p.profraw" "$rbin" "$OUT/$t/corpus" >/dev/null 2>&1; then
      rm -f "$prof/$t-"*.profraw
      find "$OUT/$t/corpus" -type f -print0 |
        xargs -0 -r -n 64 env LLVM_PROFILE_FILE="$prof/$t-%p.profraw" "$rbin" >/dev/null 2>&1 || true
    fi
    objects+=("-object=$rbin")
  done
  llvm-profdata-14 merge -sparse "$prof"/*.profraw -o "$OUT/campaign.profdata" ||
    die "merging the coverage profiles failed"
  first=${objects[0]#-object=}
  llvm-cov-14 report "$first" "${objects[@]:1}" -instr-profile="$OUT/campaign.profdata" \
    "$ROOT/ir" "$ROOT/pass" "$ROOT/verifier" >"$OUT/coverage.txt"
  rm -rf "$OUT/coverage-html"
  llvm-cov-14 show "$first" "${objects[@]:1}" -instr-profile="$OUT/campaign.profdata" -format=html \
    -output-dir="$OUT/coverage-html" "$ROOT/ir" "$ROOT/pass" "$ROOT/verifier" >/dev/null
  llvm-cov-14 export "$first" "${objects[@]:1}" -instr-profile="$OUT/campaign.profdata" -format=lcov \
    "$ROOT/ir" "$ROOT/pass" "$ROOT/verifier" >"$OUT/coverage.lcov"
  # TOTAL line: regions, missed, %, functions, missed, %, lines, missed, %, branches...
  COVERAGE_SUMMARY=$(awk '/^TOTAL/ {print "regions " $4 ", functions " $7 ", lines " $10 ", branches " $13}' \
    "$OUT/coverage.txt")
  log "coverage: $COVERAGE_SUMMARY"
fi

{
  echo "# Fuzz campaign report"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
    "${SECONDS_PER_TARGET}s per target, ${JOBS} job(s), binaries from \`${BUILD_DIR#"$ROOT"/}\`"
  echo
  echo "| target | execs | exec/s | cov (edges) | features | corpus before | corpus after | libFuzzer exit |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for t in "${TARGET_LIST[@]}"; do
    echo "| $t | ${EXECS[$t]} | ${RATE[$t]} | ${COV[$t]:-?} | ${FT[$t]:-?} | ${SEEDS[$t]} | ${FINAL[$t]} | ${RC[$t]} |"
  done
  echo
  echo "Working corpora: \`$OUT/<target>/corpus\` (kept between runs); logs: \`$OUT/<target>/fuzz.log\`."
  echo
  if ((COVERAGE)); then
    echo "## Coverage of ir/, pass/, verifier/ by the campaign corpus (llvm-cov)"
    echo
    echo "$COVERAGE_SUMMARY"
    echo
    echo '```'
    cut -c1-140 "$OUT/coverage.txt"
    echo '```'
    echo
    echo "HTML: \`$OUT/coverage-html/index.html\`; lcov: \`$OUT/coverage.lcov\`"
    echo
  fi
  echo "## Findings: $FINDINGS"
  if [[ -f "$OUT/findings.txt" ]]; then
    while IFS='|' read -r t c m what; do
      echo
      echo "- **$t**: \`$(basename "$c")\` ${what:+— $what}"
      echo "  - minimised input: \`$m\`"
      # fuzz_pipeline keeps 10 allocation frames while fuzzing (__asan_default_options);
      # the reproduction asks for ASan's full 30.
      echo "  - reproduce: \`ASAN_OPTIONS=malloc_context_size=30 ${FUZZ_BIN#"$ROOT"/}/$t $m\`"
      echo "  - replay without libFuzzer: \`build/dev/fuzz/targets/${t}_replay $m\`"
      if [[ -f "$c.triage.log" ]]; then
        echo "  - triage (ci/triage.sh):"
        tail -3 "$c.triage.log" | sed 's/^/    /'
      fi
    done <"$OUT/findings.txt"
  fi
} >"$REPORT.tmp-$$"
mv -f "$REPORT.tmp-$$" "$REPORT"

log "report: $REPORT"
cat "$REPORT"
if ((FINDINGS > 0)); then exit 1; fi
exit 0
