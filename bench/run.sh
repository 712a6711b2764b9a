#!/usr/bin/env bash
# Builds the release preset and runs the whole Google Benchmark suite, then prints
# one summary table (build/bench/summary.md) and writes it as JSON
# (build/bench/summary.json). Raw results: build/bench/<binary>.json.
#
#   bench/run.sh                 # everything, about 2-4 minutes on 2 shared cores
#   bench/run.sh --filter REGEX  # only binaries whose name matches (e.g. tool, Pipeline)
#   bench/run.sh --min-time S    # longer runs, steadier small cases (default 0.3)
#
# Cases of 10^6 statements run a fixed number of iterations set in the sources
# (one repetition each); text_bench's parse and print set at least 3 s per size in
# the source; tool_bench runs cds-opt as a whole process six times per case, the
# first untimed; everything else gets --min-time seconds. BENCH_FILTER,
# BENCH_MIN_TIME and BENCH_JOBS (build jobs, default 2) in the environment set the
# same defaults.
#
# Exit codes: 0 the suite ran; 1 a build or a benchmark failed; 2 usage error.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '2,/^[^#]/{s/^# \{0,1\}//p}' "$ROOT/bench/run.sh"; }
BUILD="$ROOT/build/release"
OUT="$ROOT/build/bench"
MIN_TIME="${BENCH_MIN_TIME:-0.3}"
FILTER="${BENCH_FILTER:-}"
JOBS="${BENCH_JOBS:-2}"
while (($#)); do
  case "$1" in
    --filter|--min-time)
      (($# >= 2)) || { echo "run.sh: $1 needs a value (try --help)" >&2; exit 2; } ;;&
    --filter) FILTER=$2; shift 2 ;;
    --min-time) MIN_TIME=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
trap 'rc=$?; ((rc == 0)) || exit 1' EXIT

cd "$ROOT"
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake --preset release -B "$BUILD" >/dev/null
fi
BINARIES=()
for src in bench/*_bench.cc; do
  name="$(basename "$src" .cc)"
  if [[ -n "$FILTER" && ! "$name" =~ $FILTER ]]; then continue; fi
  BINARIES+=("$name")
done
# tool_bench times the cds-opt of the same build.
TOOLS=()
for name in "${BINARIES[@]}"; do [[ "$name" != tool_bench ]] || TOOLS+=(cds-opt); done
ninja -C "$BUILD" -j"$JOBS" "${BINARIES[@]}" "${TOOLS[@]}" >/dev/null

mkdir -p "$OUT"
start=$(date +%s)
for name in "${BINARIES[@]}"; do
  echo "== $name" >&2
  # The machine is shared: the console copy goes to stderr, the figures to JSON.
  "$BUILD/bench/$name" --benchmark_min_time="$MIN_TIME" \
    --benchmark_out="$OUT/$name.json" --benchmark_out_format=json >&2
done
echo "== suite took $(( $(date +%s) - start )) s" >&2

python3 - "$OUT" "${BINARIES[@]}" <<'PY'
# Builds the summary table from the Google Benchmark JSON files (standard library only).
import json
import os
import re
import sys

out = sys.argv[1]
# Only this run's binaries: with BENCH_FILTER, the JSON files of other binaries in
# OUT come from an earlier run (another commit, another machine state) and would
# mix into the table unmarked.
ran = {name + ".json" for name in sys.argv[2:]}
runs = {}  # "binary:BM_Name/arg" -> result entry
context = None
for fname in sorted(os.listdir(out)):
    if not fname.endswith("_bench.json"):
        continue
    if fname not in ran:
        print(f"(summary leaves out {fname}: not run this time)", file=sys.stderr)
        continue
    with open(os.path.join(out, fname)) as f:
        data = json.load(f)
    context = context or data.get("context", {})
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        # "BM_Pipeline/1000000/iterations:3" -> "BM_Pipeline/1000000"
        name = re.sub(r"/(iterations|min_time|real_time)[^/]*", "", b["name"])
        runs[fname[:-5] + ":" + name] = b


def get(key, field, scale=1.0):
    b = runs.get(key)
    if b is None or b.get("error_occurred") or field not in b:
        return None
    return b[field] * scale


def error(key):
    b = runs.get(key)
    return b.get("error_message") if b and b.get("error_occurred") else None


MB = float(1 << 20)
sizes = [1000, 10000, 100000, 1000000]
summary = {"machine": {"num_cpus": (context or {}).get("num_cpus"),
                       "mhz_per_cpu": (context or {}).get("mhz_per_cpu"),
                       "load_avg": (context or {}).get("load_avg"),
                       "note": "CPU time per thread; the machine's cores are shared with other work"}}
summary["parse_MB_per_s"] = {mb: get(f"text_bench:BM_Parse/{mb}", "bytes_per_second", 1 / MB)
                             for mb in (1, 10, 100)}
summary["print_MB_per_s"] = {mb: get(f"text_bench:BM_Print/{mb}", "bytes_per_second", 1 / MB)
                             for mb in (1, 10, 100)}


def cpu_rate(key):
    # text_bench reports bytes per wall-clock second; per CPU second is what the
    # code achieves when it has a core to itself.
    b = runs.get(key)
    if b is None or b.get("error_occurred") or "bytes_per_second" not in b:
        return None
    return b["bytes_per_second"] * b["real_time"] / b["cpu_time"] / MB


summary["parse_MB_per_cpu_s"] = {mb: cpu_rate(f"text_bench:BM_Parse/{mb}") for mb in (1, 10, 100)}
summary["print_MB_per_cpu_s"] = {mb: cpu_rate(f"text_bench:BM_Print/{mb}") for mb in (1, 10, 100)}
for key, bench in (("pipeline_ns_per_stmt", "BM_Pipeline"),
                   ("sars_ns_per_stmt", "BM_SynthesizeAllReduceSignals"),
                   ("mcds_ns_per_stmt", "BM_MaterializeCommDomainScopes")):
    summary[key] = {n: get(f"pipeline_bench:{bench}/{n}", "ns_per_stmt") for n in sizes}
p = summary["pipeline_ns_per_stmt"]
summary["pipeline_scaling_1e6_vs_1e4"] = (p[1000000] / p[10000]
                                          if p[1000000] and p[10000] else None)
parts = ["BM_VerifySelfCheck", "BM_VerifyRelational", "BM_RoundTripPrint", "BM_RoundTripParse",
         "BM_RoundTripCompare", "BM_RoundTripHashes"]
summary["verifier_x_pass"] = {n: get(f"verifier_bench:BM_VerifyAll/{n}", "x_pass") for n in sizes}
summary["verifier_errors"] = {n: error(f"verifier_bench:BM_VerifyAll/{n}") for n in sizes
                              if error(f"verifier_bench:BM_VerifyAll/{n}")}
summary["verifier_parts_x_pass"] = {
    n: {part[3:]: get(f"verifier_bench:{part}/{n}", "x_pass") for part in parts} for n in sizes}
summary["verifier_sum_of_parts_x_pass"] = {}
for n in sizes:
    vals = list(summary["verifier_parts_x_pass"][n].values())
    summary["verifier_sum_of_parts_x_pass"][n] = sum(vals) if all(v is not None for v in vals) else None
summary["hash_ns_per_node"] = {n: get(f"hash_bench:BM_StructuralHash/{n}", "ns_per_node")
                               for n in (10000, 100000, 1000000)}
summary["equal_ns_per_node"] = {n: get(f"hash_bench:BM_StructuralEqual/{n}", "ns_per_node")
                                for n in (10000, 100000, 1000000)}
summary["programs_per_s"] = {n: get(f"gen_bench:BM_GenerateProgram/{n}", "programs/s")
                             for n in (10, 100, 1000)}
summary["models_per_s"] = {n: get(f"gen_bench:BM_GenerateModel/{n}", "programs/s")
                           for n in (10, 100, 1000)}
summary["cds_opt_parse_print_MB_per_s"] = get("tool_bench:BM_CdsOptParsePrint",
                                              "bytes_per_second", 1 / MB)
summary["cds_opt_parse_print_s"] = get("tool_bench:BM_CdsOptParsePrint", "real_time", 1e-3)
summary["cds_opt_pipeline_s"] = get("tool_bench:BM_CdsOptPipeline", "real_time", 1e-3)
summary["cds_opt_input_MB"] = get("tool_bench:BM_CdsOptParsePrint", "input_MB")
summary["cds_opt_parse_print_MB_per_cpu_s"] = get("tool_bench:BM_CdsOptParsePrint", "MB_per_cpu_s")
summary["cds_opt_parse_print_cpu_s"] = get("tool_bench:BM_CdsOptParsePrint", "cpu_s")
summary["cds_opt_pipeline_cpu_s"] = get("tool_bench:BM_CdsOptPipeline", "cpu_s")
summary["cds_opt_parse_print_min_s"] = get("tool_bench:BM_CdsOptParsePrint", "min_s")
summary["cds_opt_pipeline_min_s"] = get("tool_bench:BM_CdsOptPipeline", "min_s")
summary["cds_opt_parse_print_first_run_s"] = get("tool_bench:BM_CdsOptParsePrint", "first_run_s")
summary["cds_opt_pipeline_first_run_s"] = get("tool_bench:BM_CdsOptPipeline", "first_run_s")
summary["cds_opt_parse_print_MB_per_s_fastest"] = (
    summary["cds_opt_input_MB"] / summary["cds_opt_parse_print_min_s"]
    if summary["cds_opt_input_MB"] and summary["cds_opt_parse_print_min_s"] else None)

def write(name, text):
    # A temporary renamed over the file: an interrupted run leaves the old one whole.
    path = os.path.join(out, name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


write("summary.json", json.dumps(summary, indent=2, sort_keys=False))


def fmt(v, digits=1):
    if v is None:
        return "n/a"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def label(n):
    return {1000: "10^3", 10000: "10^4", 100000: "10^5", 1000000: "10^6"}.get(n, str(n))


rows = [("| figure | value |"), ("|---|---|")]
for what in ("parse", "print"):
    for mb in (1, 10, 100):
        rows.append(f"| {what} MB/s, {mb} MB input (per CPU second) | "
                    f"{fmt(summary[what + '_MB_per_s'][mb])} "
                    f"({fmt(summary[what + '_MB_per_cpu_s'][mb])}) |")
for n in sizes:
    rows.append(f"| pipeline ns/statement, {label(n)} (SARS + MCDS) | "
                f"{fmt(summary['pipeline_ns_per_stmt'][n])} "
                f"({fmt(summary['sars_ns_per_stmt'][n])} + {fmt(summary['mcds_ns_per_stmt'][n])}) |")
rows.append(f"| pipeline scaling, ns/statement 10^6 / 10^4 | "
            f"{fmt(summary['pipeline_scaling_1e6_vs_1e4'], 2)} |")
for n in sizes:
    v = summary["verifier_x_pass"][n]
    s = summary["verifier_sum_of_parts_x_pass"][n]
    note = f" (sum of parts {fmt(s, 2)})" if s is not None else ""
    if v is None and n in summary["verifier_errors"]:
        note += " - VerifyAll: " + summary["verifier_errors"][n][:90]
    rows.append(f"| verifier (VerifyAll) / pass, {label(n)} | {fmt(v, 2)}{note} |")
for n in (10000, 100000, 1000000):
    rows.append(f"| structural hash ns/node, {label(n)} (equality) | "
                f"{fmt(summary['hash_ns_per_node'][n])} ({fmt(summary['equal_ns_per_node'][n])}) |")
for n in (10, 100, 1000):
    rows.append(f"| programs generated /s, {n} statements (model only) | "
                f"{fmt(summary['programs_per_s'][n])} ({fmt(summary['models_per_s'][n])}) |")
rows.append(f"| cds-opt whole process, {fmt(summary['cds_opt_input_MB'])} MB dispatch-loops program: "
            f"parse + print MB/s, wall s, mean of 5 after one untimed run (per CPU second, CPU s; "
            f"fastest run MB/s, s; the untimed run s) | "
            f"{fmt(summary['cds_opt_parse_print_MB_per_s'])}, {fmt(summary['cds_opt_parse_print_s'], 3)} "
            f"({fmt(summary['cds_opt_parse_print_MB_per_cpu_s'])}, "
            f"{fmt(summary['cds_opt_parse_print_cpu_s'], 3)}; "
            f"{fmt(summary['cds_opt_parse_print_MB_per_s_fastest'])}, "
            f"{fmt(summary['cds_opt_parse_print_min_s'], 3)}; "
            f"{fmt(summary['cds_opt_parse_print_first_run_s'], 3)}) |")
rows.append(f"| cds-opt whole process, same program, --default-pipeline: wall s, mean of 5 after one "
            f"untimed run (CPU s; fastest run s; the untimed run s) | "
            f"{fmt(summary['cds_opt_pipeline_s'], 3)} "
            f"({fmt(summary['cds_opt_pipeline_cpu_s'], 3)}; "
            f"{fmt(summary['cds_opt_pipeline_min_s'], 3)}; "
            f"{fmt(summary['cds_opt_pipeline_first_run_s'], 3)}) |")
parts_rows = ["", "Verifier parts, as a multiple of the pipeline's time:", "",
              "| part | " + " | ".join(label(n) for n in sizes) + " |",
              "|---|" + "---|" * len(sizes)]
for part in parts:
    parts_rows.append(f"| {part[3:]} | " + " | ".join(
        fmt(summary["verifier_parts_x_pass"][n][part[3:]], 2) for n in sizes) + " |")
md = "\n".join(rows + parts_rows) + "\n"
write("summary.md", md)
print(md)
PY
