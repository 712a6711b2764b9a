#!/usr/bin/env bash
# Bug-injection evaluation of the detectors: for every CDS_INJECT_BUG variant of
# the passes, how many seconds each detector needs to report it (capped).
#
#   ci/bug-hunt.sh [--cap SECONDS] [--bugs 1,2,...] [--detectors a,b] [--out DIR] [--reuse]
#
# --reuse keeps the result of every (bug, detector) pair already measured in
# build/bug-hunt/run/<K>/<detector>/result (after an interrupted run).
#
# Detectors: gen_sweep (the generator-driven property oracle, seeds in turn),
# fuzz_pipeline and fuzz_text_mutate (libFuzzer from their seed corpora), and
# prop_test (RapidCheck properties) when tests/prop defines it. fuzz_parse is not
# one: it never runs a pass.
#
# One build folder (build/bug-hunt, fuzz preset) is reconfigured per variant:
# only cds_pass sees CDS_INJECT_BUG, so each variant recompiles pass/ and relinks;
# the binaries are copied to build/bug-hunt/bin/<K>/. The table goes to
# build/bug-hunt/report.md (and stdout). Exit 1 if some bug went undetected or
# the median time to first detection exceeds 10 s.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

CAP=120
BUGS=""
DETECTORS="gen_sweep,fuzz_pipeline,fuzz_text_mutate,prop_test"
OUT="$ROOT/build/bug-hunt"
REUSE=0
while (($#)); do
  case "$1" in
    --cap) CAP=$2; shift 2 ;;
    --bugs) BUGS=$2; shift 2 ;;
    --detectors) DETECTORS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --reuse) REUSE=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "bug-hunt.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { printf '[bug-hunt %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# What each variant breaks (pass/materialize_comm_domain_scopes.cc and
# pass/synthesize_allreduce_signals.cc, `#if CDS_INJECT_BUG == K`).
declare -A NAME=(
  [1]="ALL merged as a union"
  [2]="subsets not unioned (last dispatch wins)"
  [3]="domains ordered by devices, not first alloc"
  [4]="recv_counts does not inherit"
  [5]="uncovered barrier signal widened to ALL"
  [6]="each view gets its own WindowBuffer copy"
  [7]="chip-orch params get a back-reference"
  [8]="pl.range(a, b) covers b too"
  [9]="loop step ignored"
  [10]="alias / in-place resolution missing"
  [11]="defining Call not re-minted"
  [12]="duplicate-name check skipped"
  [13]="idempotence broken (re-wrapped)"
  [14]="SARS: signal names checked only for the view"
  [15]="SARS: core_num ignored in the signal size"
)
if [[ -z "$BUGS" ]]; then
  BUGS=$(printf '%s\n' "${!NAME[@]}" | sort -n | paste -sd, -)
fi
IFS=',' read -r -a BUG_LIST <<<"$BUGS"

"$ROOT/ci/install-deps.sh"

HAVE_PROP=0
if [[ -f "$ROOT/tests/prop/CMakeLists.txt" ]] && grep -q 'prop_test' "$ROOT/tests/prop/CMakeLists.txt"; then
  HAVE_PROP=1
fi
IFS=',' read -r -a REQUESTED <<<"$DETECTORS"
DET=()
for d in "${REQUESTED[@]}"; do
  if [[ "$d" == prop_test && $HAVE_PROP == 0 ]]; then
    log "prop_test: tests/prop does not define it yet; gen_sweep stands in for the properties"
    continue
  fi
  DET+=("$d")
done

BUILD="$OUT/build"
PROP_BUILD="$OUT/build-prop"
mkdir -p "$OUT"
build_variant() {
  local k=$1 fuzz_targets=() d
  for d in "${DET[@]}"; do [[ "$d" != prop_test ]] && fuzz_targets+=("$d"); done
  cmake --preset fuzz -B "$BUILD" -DCDS_INJECT_BUG="$k" >"$OUT/configure.log" 2>&1
  # Once more on failure: under memory pressure clang has been seen to crash.
  cmake --build "$BUILD" -j"$(nproc)" --target "${fuzz_targets[@]}" >"$OUT/build-$k.log" 2>&1 ||
    cmake --build "$BUILD" -j1 --target "${fuzz_targets[@]}" >>"$OUT/build-$k.log" 2>&1
  mkdir -p "$OUT/bin/$k"
  # cp + mv: a rename succeeds even while an older copy is still running.
  for d in "${fuzz_targets[@]}"; do
    cp "$BUILD/fuzz/targets/$d" "$OUT/bin/$k/.$d" && mv -f "$OUT/bin/$k/.$d" "$OUT/bin/$k/$d"
  done
  if ((HAVE_PROP)) && [[ " ${DET[*]} " == *" prop_test "* ]]; then
    # RapidCheck links only into unsanitized, non-fuzzer binaries: a release build.
    cmake --preset release -B "$PROP_BUILD" -DCDS_INJECT_BUG="$k" -DCDS_BUILD_BENCH=OFF \
      >"$OUT/configure-prop.log" 2>&1
    cmake --build "$PROP_BUILD" -j"$(nproc)" --target prop_test >"$OUT/build-prop-$k.log" 2>&1 ||
      cmake --build "$PROP_BUILD" -j1 --target prop_test >>"$OUT/build-prop-$k.log" 2>&1
    cp "$PROP_BUILD/tests/prop/prop_test" "$OUT/bin/$k/.prop_test"
    mv -f "$OUT/bin/$k/.prop_test" "$OUT/bin/$k/prop_test"
  fi
}

# Runs one detector against variant k; prints the seconds to the first finding,
# or "—" when it ran out of budget.
run_detector() {
  local k=$1 d=$2 bin="$OUT/bin/$1/$2" work="$OUT/run/$1/$2" rc=0 t0 t1
  rm -rf "$work"; mkdir -p "$work/corpus" "$work/artifacts"
  t0=$(date +%s.%N)
  case "$d" in
    gen_sweep)
      timeout $((CAP + 30)) "$bin" --seconds "$CAP" >"$work/log" 2>&1 || rc=$?
      ;;
    fuzz_pipeline|fuzz_text_mutate)
      local opts=() k v
      [[ -f "$ROOT/corpus/$d.dict" ]] && opts+=("-dict=$ROOT/corpus/$d.dict")
      if [[ -f "$ROOT/corpus/$d.options" ]]; then
        while IFS='=' read -r k v; do
          k=$(echo "$k" | xargs); v=$(echo "${v:-}" | xargs)
          [[ -n "$k" && "$k" != \[* && "$k" != \#* && "$k" != dict ]] && opts+=("-$k=$v")
        done <"$ROOT/corpus/$d.options"
      fi
      timeout $((CAP + 30)) "$bin" "$work/corpus" "$ROOT/corpus/$d" "${opts[@]}" -max_total_time="$CAP" \
        -artifact_prefix="$work/artifacts/" -timeout=10 -rss_limit_mb=4096 >"$work/log" 2>&1 || rc=$?
      ;;
    prop_test)
      # The suite at its default budgets, again and again with new seeds, so every
      # property gets its turn before the cap (one huge max_success would keep the
      # first property busy for the whole budget). noshrink: the time to the first
      # counterexample is what is measured, not the time to shrink it.
      local deadline=$(( $(date +%s) + CAP )) seed=0 left
      : >"$work/log"
      while left=$((deadline - $(date +%s))); ((left > 0)); do
        seed=$((seed + 1))
        RC_PARAMS="seed=$seed noshrink=1" timeout "$left" "$bin" >>"$work/log" 2>&1 || rc=$?
        if ((rc != 0)); then
          [[ $rc == 124 ]] && rc=0  # ran out of time without a failure
          break
        fi
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

declare -A RESULT
for k in "${BUG_LIST[@]}"; do
  todo=()
  for d in "${DET[@]}"; do
    if ((REUSE)) && [[ -s "$OUT/run/$k/$d/result" ]]; then
      RESULT[$k,$d]=$(cat "$OUT/run/$k/$d/result")
      log "bug $k: $d -> ${RESULT[$k,$d]} (reused)"
    else
      todo+=("$d")
    fi
  done
  ((${#todo[@]})) || continue
  log "bug $k (${NAME[$k]:-?}): building"
  build_variant "$k"
  for d in "${todo[@]}"; do
    r=$(run_detector "$k" "$d")
    RESULT[$k,$d]=$r
    echo "$r" >"$OUT/run/$k/$d/result"
    what=$(grep -aoE 'FINDING [a-z_]+: .*|internal check failed: .*|ERROR: AddressSanitizer: [a-z-]+|\[  FAILED  \] [A-Za-z_./0-9]+' \
      "$OUT/run/$k/$d/log" | head -1 || true)
    log "bug $k: $d -> ${r}${what:+ s ($what)}"
    echo "$what" >"$OUT/run/$k/$d/what"
  done
done

# Markdown table plus the acceptance figures.
{
  echo "# Bug hunt: seconds until each detector reports each injected bug"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), cap ${CAP}s per detector, $(nproc) cores, ASan + UBSan fuzz build" \
    "(\`—\` = not found within the cap)."
  echo
  header="| bug | what |"; rule="|---:|---|"
  for d in "${DET[@]}"; do header+=" $d |"; rule+="---:|"; done
  header+=" first |"; rule+="---:|"
  echo "$header"; echo "$rule"
  firsts=()
  undetected=0
  for k in "${BUG_LIST[@]}"; do
    row="| $k | ${NAME[$k]:-?} |"
    best=""
    for d in "${DET[@]}"; do
      r=${RESULT[$k,$d]}
      row+=" $r |"
      if [[ "$r" != "—" ]] && { [[ -z "$best" ]] || awk -v a="$r" -v b="$best" 'BEGIN {exit !(a < b)}'; }; then
        best=$r
      fi
    done
    if [[ -z "$best" ]]; then undetected=$((undetected + 1)); row+=" — |"; else firsts+=("$best"); row+=" $best |"; fi
    echo "$row"
  done
  echo
  median=$(printf '%s\n' "${firsts[@]}" | sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR+1)/2]; else printf "%.1f", (v[NR/2]+v[NR/2+1])/2}')
  echo "Detected: $(( ${#BUG_LIST[@]} - undetected )) of ${#BUG_LIST[@]}; median time to first detection: ${median} s" \
    "(undetected bugs count as not detected, not in the median)."
  echo
  echo "What each detector reported first (\`$OUT/run/<bug>/<detector>/log\`):"
  echo
  for k in "${BUG_LIST[@]}"; do
    for d in "${DET[@]}"; do
      w=$(cat "$OUT/run/$k/$d/what" 2>/dev/null || true)
      [[ -n "$w" ]] && echo "- bug $k, $d: \`$(cut -c1-150 <<<"$w")\`"
    done
  done
  echo "UNDETECTED=$undetected MEDIAN=$median" >"$OUT/summary.env"
} >"$OUT/report.md"

cat "$OUT/report.md"
source "$OUT/summary.env"
if ((UNDETECTED > 0)) || [[ "$MEDIAN" == n/a ]] || awk -v m="$MEDIAN" 'BEGIN {exit !(m > 10)}'; then
  exit 1
fi
exit 0
