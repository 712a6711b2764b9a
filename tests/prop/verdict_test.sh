#!/usr/bin/env bash
# ci/prop-verdict.py on gtest logs of each shape a prop_test run can leave: each
# case states the verdict the bug hunt must draw from it.
#
#   verdict_test.sh ROOT
set -euo pipefail
ROOT=${1:?usage: verdict_test.sh ROOT}
if [[ "$ROOT" == -h || "$ROOT" == --help ]]; then sed -n '2,5p' "$0"; exit 0; fi
VERDICT="$ROOT/ci/prop-verdict.py"
LIST="$ROOT/tests/prop/verdicts.txt"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
failures=0

expect() {  # expect NAME WANT LOG-TEXT
  local name=$1 want=$2 got
  printf '%b' "$3" >"$work/log"
  got=$(python3 "$VERDICT" classify "$LIST" "$work/log")
  if [[ "$got" != "$want" ]]; then
    echo "FAIL $name: got '$got', want '$want'" >&2
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

ok_run='[ RUN      ] PipelineProperty.OutputPassesVerifier\n[       OK ] PipelineProperty.OutputPassesVerifier (5 ms)\n'
expect "a passing run has no verdict" "" "$ok_run[  PASSED  ] 1 test.\n"
expect "a failing property judging the pass is a finding" "oracle PipelineProperty.ScopesMatchModel" \
  "$ok_run[ RUN      ] PipelineProperty.ScopesMatchModel\nscopes differ\n[  FAILED  ] PipelineProperty.ScopesMatchModel (9 ms)\n[  FAILED  ] 1 test, listed below:\n[  FAILED  ] PipelineProperty.ScopesMatchModel\n"
expect "a failing budget test is a fault of the harness" "harness PropBudget.ShrinkingStopsWhenTheBudgetIsSpent" \
  "$ok_run[ RUN      ] PropBudget.ShrinkingStopsWhenTheBudgetIsSpent\nExpected: spent < 10s\n[  FAILED  ] PropBudget.ShrinkingStopsWhenTheBudgetIsSpent (12000 ms)\n"
expect "a skipped budget test is no verdict" "" \
  "[ RUN      ] PropBudget.OneBudgetServesTheWholeTest\n[  SKIPPED ] PropBudget.OneBudgetServesTheWholeTest (0 ms)\n[  PASSED  ] 0 tests.\n"
expect "a crash inside an oracle is a finding of that oracle" "oracle StructuralLaws.PairsOfPrograms" \
  "$ok_run[ RUN      ] StructuralLaws.PairsOfPrograms\nAddressSanitizer: SEGV\n"
expect "the verifier alone on inputs is a harness test" "harness VerifierProperty.FlagsThePlantedDefectOfInvalidInputs" \
  "[ RUN      ] VerifierProperty.FlagsThePlantedDefectOfInvalidInputs\n[  FAILED  ] VerifierProperty.FlagsThePlantedDefectOfInvalidInputs (3 ms)\n"
expect "a test the list does not name is unlisted" "unlisted NewSuite.NewTest" \
  "[ RUN      ] NewSuite.NewTest\n[  FAILED  ] NewSuite.NewTest (1 ms)\n"

# A malformed list is reported at its line.
printf 'oracle PipelineProperty.*\nfinding PropBudget.*\n' >"$work/bad.txt"
printf '' >"$work/log"
if python3 "$VERDICT" classify "$work/bad.txt" "$work/log" 2>"$work/err"; then
  echo "FAIL a malformed list is accepted" >&2; failures=$((failures + 1))
elif ! grep -q "bad.txt:2:1: expected 'oracle PATTERN' or 'harness PATTERN'" "$work/err"; then
  echo "FAIL a malformed list: $(cat "$work/err")" >&2; failures=$((failures + 1))
else
  echo "ok   a malformed list is reported at its line"
fi

((failures == 0)) || { echo "$failures case(s) failed" >&2; exit 1; }
