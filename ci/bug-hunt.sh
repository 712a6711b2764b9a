#!/usr/bin/env bash
# Bug-injection evaluation of the oracles: every deliberate bug of the passes is a
# patch, fuzz/bugs/NN-name.patch; for each one, how many seconds each detector
# needs to report it (capped).
#
#   ci/bug-hunt.sh [--cap SECONDS] [--fuzz-after SECONDS] [--bugs 1,2,...] [--out DIR]
#                  [--jobs N] [--reuse] [--no-control]
#   ci/bug-hunt.sh --prepare K [--targets a,b] [--out DIR] [--jobs N]
#
# Each patch is applied to a scratch copy of the working tree (OUT/src; the
# working tree itself is never touched), and the detectors are built there:
# gen_sweep, prop_test (RapidCheck) and verifier_sweep with the dev preset
# (OUT/build-dev), fuzz_pipeline and fuzz_text_mutate with the fuzz preset
# (OUT/build-fuzz). The oracles are gen_sweep, prop_test, fuzz_pipeline and
# fuzz_text_mutate; verifier_sweep (tests/bugs) judges generated programs by the
# verifier alone and is reported beside them. fuzz_parse never runs a pass and is
# no detector.
#
# prop_test is credited only with a failure of a test that tests/prop/verdicts.txt
# calls an oracle (ci/prop-verdict.py). Any other failing test (the shrink budget's
# own tests, say) is a harness fault: listed below the table, never a finding; its
# cell reads `harness fault` when no oracle test failed, and the later runs leave
# that test out.
#
# Detectors run one after the other: gen_sweep, verifier_sweep, prop_test,
# fuzz_pipeline, fuzz_text_mutate. gen_sweep and verifier_sweep always get the
# whole cap (each must report every bug on its own); the other oracles race the
# earliest finding so far: their cap shrinks to that time, since a later finding
# cannot be the first (the cell then reads `>T`, T the seconds they were given).
# The libFuzzer targets are built and run for a bug only when no dev-build oracle
# found it within --fuzz-after seconds (default 1; 0: always), since building the
# fuzz preset once per bug costs minutes; their cell otherwise reads `·`. A control
# row, last, runs every detector that ran for some bug on the tree without a patch
# (--no-control skips it): a finding there is a false alarm.
#
# --bugs: patch numbers (default: every patch). --cap: seconds per detector and
# bug (default 60). --reuse keeps every (bug, detector) result already in
# OUT/run/<NN>/<detector>/result. --prepare K builds the fuzz preset's --targets
# (default: the fuzz targets) with patch K applied and prints the build folder.
#
# The table goes to OUT/report.md and stdout (OUT = build/bug-hunt).
# Exit codes: 0 when
# every bug is found by an oracle and the median time to the first finding is at
# most 1 s; 1 otherwise (or on a control finding, or a harness fault); 2 on a usage
# error, or when a patch does not apply or a build fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

CAP=60
FUZZ_AFTER=1
BUGS=""
ORACLES=(gen_sweep prop_test fuzz_pipeline fuzz_text_mutate)
DEV_DETECTORS=(gen_sweep verifier_sweep prop_test)
FUZZ_DETECTORS=(fuzz_pipeline fuzz_text_mutate)
DET=("${DEV_DETECTORS[@]}" "${FUZZ_DETECTORS[@]}")
FULL_CAP=(gen_sweep verifier_sweep)  # run to the cap whatever the others found
OUT="$ROOT/build/bug-hunt"
JOBS=2
REUSE=0
CONTROL=1
PREPARE=""
TARGETS=""
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$0"; }
while (($#)); do
  case "$1" in
    --cap) CAP=$2; shift 2 ;;
    --fuzz-after) FUZZ_AFTER=$2; shift 2 ;;
    --bugs) BUGS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --reuse) REUSE=1; shift ;;
    --no-control) CONTROL=0; shift ;;
    --prepare) PREPARE=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bug-hunt.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$FUZZ_AFTER" =~ ^[0-9]+$ ]] || { echo "bug-hunt.sh: --fuzz-after needs a number of seconds" >&2; exit 2; }
[[ "$CAP" =~ ^[0-9]+$ && "$CAP" -gt 0 ]] || { echo "bug-hunt.sh: --cap needs a positive number of seconds" >&2; exit 2; }
[[ "$JOBS" =~ ^[0-9]+$ && "$JOBS" -gt 0 ]] || { echo "bug-hunt.sh: --jobs needs a positive number" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

log() { printf '[bug-hunt %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { echo "bug-hunt.sh: $*" >&2; exit 2; }

# Patch NN -> its file; the rule it breaks is its header line.
declare -A PATCH RULE
for p in "$ROOT"/fuzz/bugs/[0-9][0-9]-*.patch; do
  [[ -e "$p" ]] || continue
  n=$(basename "$p"); n=${n%%-*}
  PATCH[$n]=$p
  RULE[$n]=$(sed -n '1s/^# rule: //p' "$p")
done
((${#PATCH[@]})) || die "no patches in fuzz/bugs/"
two_digits() { [[ "$1" =~ ^[0-9]+$ ]] || die "not a bug number: $1"; printf '%02d' "$((10#$1))"; }

SRC="$OUT/src"
FUZZ_BUILD="$OUT/build-fuzz"
DEV_BUILD="$OUT/build-dev"

# OUT/src becomes the working tree's files (tracked, and untracked ones git does not
# ignore); only files whose content differs are written, so the builds recompile
# what changed since the last variant and nothing else (a rewritten file gets a new
# mtime, which is what ninja needs to see a reverted patch).
sync_tree() {
  python3 - "$ROOT" "$SRC" <<'PY'
import os, subprocess, sys
root, dst = sys.argv[1], sys.argv[2]
files = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       check=True, capture_output=True).stdout.decode().split("\0")
keep = set()
for f in filter(None, files):
    src = os.path.join(root, f)
    if not os.path.isfile(src):
        continue
    keep.add(f)
    out = os.path.join(dst, f)
    data = open(src, "rb").read()
    try:
        if open(out, "rb").read() == data:
            continue
    except FileNotFoundError:
        os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as w:
        w.write(data)
    os.chmod(out, os.stat(src).st_mode)
for d, _, names in os.walk(dst):
    for n in names:
        rel = os.path.relpath(os.path.join(d, n), dst)
        if rel not in keep:
            os.remove(os.path.join(d, n))
PY
}

# The scratch copy with patch NN applied (none for "00", the control).
prepare_tree() {
  local n=$1
  sync_tree || die "cannot copy the working tree into $SRC"
  [[ "$n" == 00 ]] && return 0
  # The ceiling keeps git from taking the enclosing repository for the scratch
  # copy's: the patch applies to OUT/src as plain files.
  if ! (cd "$SRC" && GIT_CEILING_DIRECTORIES="$OUT" git apply "${PATCH[$n]}") 2>"$OUT/apply-$n.log"; then
    cat "$OUT/apply-$n.log" >&2
    die "fuzz/bugs/$(basename "${PATCH[$n]}") does not apply to the working tree"
  fi
}

export CCACHE_DIR=${CCACHE_DIR:-/work/ccache}
# Paths relative to the scratch copy and no working directory in the hash (debug
# builds): objects of unchanged files come from the working tree's own builds.
export CCACHE_BASEDIR="$SRC" CCACHE_NOHASHDIR=1

# Builds `targets` in a preset folder of the scratch copy; once more with one job
# when the first attempt fails (clang has been seen to crash under memory pressure).
build() {
  local preset=$1 dir=$2 log=$3; shift 3
  (cd "$SRC" && cmake --preset "$preset" -B "$dir") >"$log" 2>&1 ||
    { tail -20 "$log" >&2; die "configuring $preset failed; see $log"; }
  nice cmake --build "$dir" -j"$JOBS" --target "$@" >>"$log" 2>&1 ||
    nice cmake --build "$dir" -j1 --target "$@" >>"$log" 2>&1 ||
    { grep -m5 -E 'error|FAILED' "$log" >&2 || true; die "building $* ($preset) failed; see $log"; }
}

"$ROOT/ci/install-deps.sh" >&2

# The fuzz targets' seeds, assembled once from the working tree's corpora.
for d in "${FUZZ_DETECTORS[@]}"; do
  rm -rf "$OUT/seeds/$d"
  python3 "$ROOT/ci/seeds.py" "$d" "$OUT/seeds/$d" >/dev/null || die "cannot assemble the seeds of $d"
done

if [[ -n "$PREPARE" ]]; then
  n=$(two_digits "$PREPARE")
  [[ -n "${PATCH[$n]:-}" ]] || die "no patch fuzz/bugs/$n-*.patch"
  if [[ -z "$TARGETS" ]]; then
    TARGETS=$(cd "$ROOT/fuzz/targets" && ls fuzz_*.cc | sed 's/\.cc$//' | paste -sd, -)
  fi
  IFS=',' read -r -a targets <<<"$TARGETS"
  log "bug $n (${RULE[$n]}): building ${targets[*]} in $FUZZ_BUILD"
  prepare_tree "$n"
  build fuzz "$FUZZ_BUILD" "$OUT/build-fuzz-$n.log" "${targets[@]}"
  echo "$FUZZ_BUILD"
  exit 0
fi

if [[ -z "$BUGS" ]]; then
  BUG_LIST=($(printf '%s\n' "${!PATCH[@]}" | sort))
else
  IFS=',' read -r -a requested <<<"$BUGS"
  BUG_LIST=()
  for b in "${requested[@]}"; do
    n=$(two_digits "$b")
    [[ -n "${PATCH[$n]:-}" ]] || die "no patch fuzz/bugs/$n-*.patch"
    BUG_LIST+=("$n")
  done
fi
ROWS=("${BUG_LIST[@]}")
((CONTROL)) && ROWS+=(00)

binary() {
  case "$1" in
    gen_sweep) echo "$DEV_BUILD/fuzz/targets/gen_sweep" ;;
    prop_test) echo "$DEV_BUILD/tests/prop/prop_test" ;;
    verifier_sweep) echo "$DEV_BUILD/tests/bugs/verifier_sweep" ;;
    fuzz_*) echo "$FUZZ_BUILD/fuzz/targets/$1" ;;
  esac
}

# Runs one detector against the scratch copy's current build for `cap` seconds;
# prints the seconds to its first finding, or "—" when the cap ran out.
run_detector() {
  local n=$1 d=$2 cap=$3 bin work="$OUT/run/$1/$2" rc=0 t0 t1
  bin=$(binary "$d")
  rm -rf "$work"; mkdir -p "$work/corpus" "$work/artifacts"
  t0=$(date +%s.%N)
  case "$d" in
    gen_sweep|verifier_sweep)
      timeout $((cap + 30)) "$bin" --seconds "$cap" >"$work/log" 2>&1 || rc=$?
      ;;
    fuzz_pipeline|fuzz_text_mutate)
      local opts=() k v
      local dict
      dict=$(python3 "$ROOT/ci/seeds.py" --dict "$d")
      [[ -n "$dict" ]] && opts+=("-dict=$dict")
      if [[ -f "$ROOT/corpus/$d.options" ]]; then
        while IFS='=' read -r k v; do
          k=$(echo "$k" | xargs); v=$(echo "${v:-}" | xargs)
          [[ -n "$k" && "$k" != \[* && "$k" != \#* && "$k" != dict ]] && opts+=("-$k=$v")
        done <"$ROOT/corpus/$d.options"
      fi
      timeout $((cap + 30)) "$bin" "$work/corpus" "$OUT/seeds/$d" "${opts[@]}" -max_total_time="$cap" \
        -artifact_prefix="$work/artifacts/" -timeout=10 -rss_limit_mb=4096 >"$work/log" 2>&1 || rc=$?
      ;;
    prop_test)
      # The suite at its default budgets, again and again with new seeds, so every
      # property gets its turn before the cap. noshrink and fail-fast: the time to
      # the first counterexample is measured, not the time to shrink it or to run
      # the rest of the suite. Only a test tests/prop/verdicts.txt calls an oracle
      # makes a finding; any other failing test is a harness fault, recorded in
      # `harness` and left out of the later runs, so the oracles keep their turn.
      local deadline=$(($(date +%s) + cap)) seed=0 left verdict cls name skip="" run_log
      : >"$work/log"
      while left=$((deadline - $(date +%s))); ((left > 0)); do
        seed=$((seed + 1))
        run_log="$work/run-$seed.log"
        rc=0
        RC_PARAMS="seed=$seed noshrink=1" timeout "$left" "$bin" --gtest_fail_fast \
          ${skip:+"--gtest_filter=-$skip"} >"$run_log" 2>&1 || rc=$?
        cat "$run_log" >>"$work/log"
        ((rc == 0)) && continue
        [[ $rc == 124 ]] && { rc=0; break; }  # the cap ran out inside a run
        verdict=$(python3 "$ROOT/ci/prop-verdict.py" classify "$ROOT/tests/prop/verdicts.txt" "$run_log")
        read -r cls name <<<"$verdict"
        if [[ "$cls" == oracle ]]; then
          echo "[  FAILED  ] $name" >"$work/what"
          break
        fi
        name=${name:-"(no test named; exit code $rc)"}
        rc=0
        awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$name" -v c="$cls" \
          'BEGIN {printf "%s %.1f%s\n", n, b - a, (c == "unlisted" ? " (not in tests/prop/verdicts.txt)" : "")}' \
          >>"$work/harness"
        [[ "$name" == *.* ]] || break  # nothing to leave out: the next run would fail alike
        skip+="${skip:+:}$name"
      done
      ;;
  esac
  t1=$(date +%s.%N)
  if ((rc != 0)); then
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}'
  else
    echo "—"
  fi
}

is_oracle() { [[ " ${ORACLES[*]} " == *" $1 "* ]]; }
found() { [[ -n "$1" && "$1" != "—" && "$1" != '>'* && "$1" != "·" && "$1" != "harness fault" ]]; }
# Whether time a is earlier than time b (an empty b is no finding yet).
earlier() { [[ -z "$2" ]] || awk -v a="$1" -v b="$2" 'BEGIN {exit !(a < b)}'; }

declare -A RESULT
FUZZ_USED=0
# Runs detector d on row n (unless --reuse has its result), racing `best`.
hunt() {
  local n=$1 d=$2 cap=$CAP r what
  if ((REUSE)) && [[ -s "$OUT/run/$n/$d/result" ]]; then
    RESULT[$n,$d]=$(cat "$OUT/run/$n/$d/result")
  else
    if [[ -n "$best" && " ${FULL_CAP[*]} " != *" $d "* ]]; then
      cap=$(awk -v b="$best" -v c="$CAP" 'BEGIN {t = int(b) + (b > int(b)); if (t < 1) t = 1; print (t < c ? t : c)}')
    fi
    r=$(run_detector "$n" "$d" "$cap")
    [[ "$r" == "—" && "$cap" != "$CAP" ]] && r=">$cap"
    # A run whose only failures were harness faults found nothing: the cell says so.
    if ! found "$r" && [[ -s "$OUT/run/$n/$d/harness" ]]; then r="harness fault"; fi
    RESULT[$n,$d]=$r
    echo "$r" >"$OUT/run/$n/$d/result"
    what=$(cat "$OUT/run/$n/$d/what" 2>/dev/null || grep -aoE 'FINDING [a-z_]+: .*|internal check failed: .*|ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer): [a-z-]+|\[  FAILED  \] [A-Za-z_./0-9]+' \
      "$OUT/run/$n/$d/log" | head -1 || true)
    echo "$what" >"$OUT/run/$n/$d/what"
    [[ -s "$OUT/run/$n/$d/harness" ]] && log "bug $n: $d: harness fault: $(paste -sd';' "$OUT/run/$n/$d/harness")"
    local unit=""
    found "${RESULT[$n,$d]}" && unit=" s"
    log "bug $n: $d -> ${RESULT[$n,$d]}${unit}${what:+ ($what)}"
  fi
  if found "${RESULT[$n,$d]}" && is_oracle "$d" && earlier "${RESULT[$n,$d]}" "$best"; then
    best=${RESULT[$n,$d]}
  fi
  return 0
}

for n in "${ROWS[@]}"; do
  reused=1
  for d in "${DEV_DETECTORS[@]}"; do ((REUSE)) && [[ -s "$OUT/run/$n/$d/result" ]] || reused=0; done
  prepare_tree "$n"
  if ((!reused)); then
    log "bug $n (${RULE[$n]:-control: no patch}): building the dev detectors"
    build dev "$DEV_BUILD" "$OUT/build-dev-$n.log" "${DEV_DETECTORS[@]}"
  fi
  best=""
  for d in "${DEV_DETECTORS[@]}"; do hunt "$n" "$d"; done
  if [[ "$n" == 00 ]] && ((!FUZZ_USED)); then
    fuzz=0
  elif [[ "$n" == 00 ]] || ((FUZZ_AFTER == 0)) || [[ -z "$best" ]] || ! earlier "$best" "$FUZZ_AFTER.01"; then
    fuzz=1
  else
    fuzz=0
  fi
  if ((fuzz)); then
    FUZZ_USED=1
    reused=1
    for d in "${FUZZ_DETECTORS[@]}"; do ((REUSE)) && [[ -s "$OUT/run/$n/$d/result" ]] || reused=0; done
    if ((!reused)); then
      log "bug $n: building the fuzz targets"
      build fuzz "$FUZZ_BUILD" "$OUT/build-fuzz-$n.log" "${FUZZ_DETECTORS[@]}"
    fi
    for d in "${FUZZ_DETECTORS[@]}"; do hunt "$n" "$d"; done
  else
    for d in "${FUZZ_DETECTORS[@]}"; do RESULT[$n,$d]="·"; done
  fi
done

{
  echo "# Bug hunt: seconds until each detector reports each deliberate bug"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
    "cap ${CAP} s per detector, $(nproc) cores. gen_sweep, prop_test and verifier_sweep: dev build;" \
    "fuzz_pipeline and fuzz_text_mutate: ASan + UBSan fuzz build, run when no dev-build oracle" \
    "found the bug within ${FUZZ_AFTER} s. \`—\` nothing within the cap; \`>T\` nothing within T s," \
    "the earliest finding so far; \`·\` not run. verifier_sweep judges by the verifier alone."
  echo
  header="| bug | rule | first oracle | s |"; rule="|---|---|---|---:|"
  for d in "${DET[@]}"; do header+=" $d |"; rule+="---:|"; done
  echo "$header"; echo "$rule"
  firsts=()
  undetected=()
  control_findings=0
  for n in "${ROWS[@]}"; do
    if [[ "$n" == 00 ]]; then
      row="| control | no patch |"
    else
      row="| $(basename "${PATCH[$n]}" .patch) | ${RULE[$n]%% — *} |"
    fi
    best=""; first=""
    for d in "${DET[@]}"; do
      r=${RESULT[$n,$d]:-·}
      if found "$r"; then
        [[ "$n" == 00 ]] && control_findings=$((control_findings + 1))
        if is_oracle "$d" && earlier "$r" "$best"; then best=$r; first=$d; fi
      fi
    done
    if [[ "$n" != 00 ]]; then
      if [[ -z "$best" ]]; then undetected+=("$n"); else firsts+=("$best"); fi
    fi
    row+=" ${first:-—} | ${best:-—} |"
    for d in "${DET[@]}"; do row+=" ${RESULT[$n,$d]:-·} |"; done
    echo "$row"
  done
  echo
  median=$(printf '%s\n' "${firsts[@]}" | sort -g | awk 'NF {v[++k]=$1} END {if (k == 0) print "n/a"; else if (k % 2) print v[(k+1)/2]; else printf "%.1f", (v[k/2]+v[k/2+1])/2}')
  median_unit=" s"
  [[ "$median" == n/a ]] && median_unit=" (no bug found)"
  echo "Found by an oracle: $(( ${#BUG_LIST[@]} - ${#undetected[@]} )) of ${#BUG_LIST[@]}" \
    "(missed: ${undetected[*]:-none}); median time to the first finding: ${median}${median_unit}."
  ((CONTROL)) && echo "Control (no patch): $control_findings finding(s)."
  harness_faults=0
  for n in "${ROWS[@]}"; do
    for d in "${DET[@]}"; do
      [[ -s "$OUT/run/$n/$d/harness" ]] && harness_faults=$((harness_faults + $(wc -l <"$OUT/run/$n/$d/harness")))
    done
  done
  echo "Harness faults (failures of tests that judge the harness, not the pass; never a finding):" \
    "$harness_faults."
  if ((harness_faults)); then
    echo
    for n in "${ROWS[@]}"; do
      for d in "${DET[@]}"; do
        [[ -s "$OUT/run/$n/$d/harness" ]] || continue
        while read -r test secs rest; do
          echo "- $n, $d: harness fault: \`$test\` failed after $secs s${rest:+ $rest}"
        done <"$OUT/run/$n/$d/harness"
      done
    done
  fi
  echo
  echo "What each detector reported first (\`$OUT/run/<NN>/<detector>/log\`):"
  echo
  for n in "${ROWS[@]}"; do
    for d in "${DET[@]}"; do
      w=$(cat "$OUT/run/$n/$d/what" 2>/dev/null || true)
      if [[ -n "$w" ]] && found "${RESULT[$n,$d]:-}"; then
        echo "- $n, $d: \`$(cut -c1-150 <<<"$w" | tr '`' "'")\`"
      fi
    done
  done
  echo "UNDETECTED=${#undetected[@]} MEDIAN=$median CONTROL_FINDINGS=$control_findings" \
    "HARNESS_FAULTS=$harness_faults" >"$OUT/summary.env"
} >"$OUT/report.md"

cat "$OUT/report.md"
source "$OUT/summary.env"
if ((UNDETECTED > 0 || CONTROL_FINDINGS > 0 || HARNESS_FAULTS > 0)) || [[ "$MEDIAN" == n/a ]] ||
  awk -v m="$MEDIAN" 'BEGIN {exit !(m > 1)}'; then
  exit 1
fi
exit 0
