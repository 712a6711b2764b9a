"""The differential campaign behind ci/differential.sh (docs/pypto.md).

Generated programs (cds-gen, valid and invalid) go through the reference pass
(`cds-opt --default-pipeline`) and through PyPTO (cds-pypto); PyPTO's export is
verified under PyPTO's contract. Each way PyPTO departs from the reference is a
symptom (outcome.symptoms). A symptom of PyPTO's passes that a file of
corpus/upstream/ names is known; a new one is reduced with cds-reduce and filed
there, with a header. Symptoms on the harness's side (PyPTO's parser refusing what
the generator wrote, an export the bridge or the harness's parser cannot carry,
a crash of the reference) are reported, not filed: they are not upstream faults.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections import OrderedDict

from .outcome import (
    FRONT_END,
    bridge_outcomes,
    export_outcome,
    reference_admits,
    reference_outcome,
    run,
    symptoms,
)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRIDGE = os.path.join(HERE, "cds-pypto")
CHUNK = 25

# cds-gen features whose constructs PyPTO's DSL cannot write, each with the error
# PyPTO e2d0f78's parser gives (docs/pypto.md quotes them): a host declared
# type=Orchestration, level=HOST (host_by_type): "Function 'host_orch' has
# func_type=Orchestration which implies level=CHIP, but explicit level=HOST was
# provided"; pl.touch, the harness's opaque op, with tuples and kwargs holding views
# (opaque_call): "Unknown operation 'pl.touch'"; pl.split, an opaque op returning a
# tuple (unpack): "Unknown operation 'pl.split'".
PYPTO_REFUSED_FEATURES = ("host_by_type", "opaque_call", "unpack")

# cds-gen invalid kinds that break a limit of the reference pass only, so the program
# is valid for PyPTO and comparing the two says nothing about PyPTO's pass: more than
# 65,536 devices in one device= loop (device_range_too_large), a cap docs/pass.md sets
# and PyPTO does not have (it enumerates pl.range(100000) correctly).
REFERENCE_ONLY_INVALID_KINDS = ("device_range_too_large",)


def campaign_kinds(all_kinds):
    """The invalid kinds a campaign draws from: every cds-gen kind PyPTO can be judged by."""
    return [k for k in all_kinds if k not in REFERENCE_ONLY_INVALID_KINDS]


def harness_side(signature):
    """True for a symptom that is no fault of PyPTO's passes."""
    return signature.startswith(
        (f"{FRONT_END}:", "not exportable:", "crash: reference", "verifier PARSE ", "verifier CRASH ")
    )


def known_symptoms(upstream_dir):
    """{signature: file} from the `# SYMPTOM:` lines of corpus/upstream/."""
    known = {}
    if not os.path.isdir(upstream_dir):
        return known
    for name in sorted(os.listdir(upstream_dir)):
        if not name.endswith(".pyir"):
            continue
        with open(os.path.join(upstream_dir, name), encoding="utf-8") as f:
            for line in f:
                if not line.startswith("#"):
                    break
                if line.startswith("# SYMPTOM: "):
                    known.setdefault(line[len("# SYMPTOM: ") :].rstrip("\n"), name)
    return known


def pypto_commit(bridge):
    _, out, _ = run([sys.executable, bridge, "--version"])
    for line in out.splitlines():
        if line.startswith("pypto ") and "(commit " in line:
            return line.rsplit("(commit ", 1)[1].rstrip(")")
    return None


def _gen_list(cds_gen, label):
    _, out, _ = run([cds_gen, "--list"])
    for line in out.splitlines():
        if line.startswith(label + ":"):
            return line.split(":", 1)[1].split()
    raise RuntimeError(f"cds-gen --list printed no {label}")


class Tools:
    def __init__(self, build):
        self.cds_opt = os.path.join(build, "tools/cds-opt/cds-opt")
        self.cds_gen = os.path.join(build, "tools/cds-gen/cds-gen")
        self.cds_reduce = os.path.join(build, "tools/cds-reduce/cds-reduce")
        self.bridge = BRIDGE


class Program:
    def __init__(self, seed, size, kind, features, path):
        self.seed, self.size, self.kind, self.features, self.path = seed, size, kind, features, path
        self.reference = None
        self.pypto = None
        self.symptoms = []
        self.used = []  # the features the program holds (cds-gen --expect)

    def gen_args(self):
        args = f"--seed {self.seed} --size {self.size}"
        if self.kind:
            args += f" --invalid {self.kind}"
        return args + f" --features {self.features}"

    def compared(self):
        """Both passes saw the program (PyPTO's parser took it, the bridge exported it)."""
        return not any(harness_side(s) for s in self.symptoms) and self.pypto.status != "not-dsl"


def judge_with_pypto(tools, path, work, pass_args):
    """PyPTO's outcome of one file."""
    out_dir = os.path.join(work, "pypto")
    os.makedirs(out_dir, exist_ok=True)
    res = bridge_outcomes(tools.bridge, [path], out_dir, pass_args)[path]
    return export_outcome(res, tools.cds_opt, os.path.join(out_dir, os.path.basename(path)))


def cmd_interesting(args):
    """Exit 0 when FILE still shows SIGNATURE (the test cds-reduce runs). The
    reference runs first: when its outcome rules the symptom out, PyPTO (seconds
    to import) is not started."""
    tools = Tools(args.build)
    work = tempfile.mkdtemp(prefix="cds-diff-")
    try:
        ref = reference_outcome(tools.cds_opt, args.file, os.path.join(work, "reference.pyir"))
        if not reference_admits(args.signature, ref):
            return 1
        return 0 if args.signature in symptoms(ref, judge_with_pypto(tools, args.file, work, args.pass_args)) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _slug(signature):
    kind = "".join(c if c.isalnum() else "_" for c in signature.split(":")[0].lower()).strip("_")
    return f"{kind}_{hashlib.sha1(signature.encode()).hexdigest()[:8]}"


def _quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def _error_word(message):
    """The word docs/corpus.md has an EXPECT error line name: `device` for device=
    errors, `core_num` for signal synthesis, else the first quoted name (the alloc
    or the op)."""
    for word in ("device", "core_num"):
        if word in message:
            return word
    if "'" in message:
        return message.split("'")[1]
    return "allreduce" if "allreduce" in message else (message.split() or ["error"])[0]


def expectation(tools, header, body, work):
    """The `# EXPECT` lines the reference pass gives the text `header + EXPECT + body`."""
    probe = os.path.join(work, "probe.pyir")
    with open(probe, "w", encoding="utf-8") as f:
        f.write("\n".join(header + ["# EXPECT: ok"] + body) + "\n")
    ref = reference_outcome(tools.cds_opt, probe, os.path.join(work, "probe.out.pyir"))
    if ref.status == "ok":
        return ["# EXPECT: ok"] + ref.scopes
    if ref.status == "error":
        return [f"# EXPECT: error {ref.line} {_error_word(ref.message)}"]
    return ["# EXPECT: TODO (the reference pass crashed on it)"]


def file_symptom(tools, program, signature, args, commit, deadline):
    """Reduces the program while it shows `signature` and writes it to
    corpus/upstream/ with its header; returns the file name."""
    work = tempfile.mkdtemp(prefix="cds-diff-file-")
    try:
        body_path = os.path.join(work, "reduced.pyir")
        reduced = False
        if not args.no_reduce and time.monotonic() < deadline:
            test = [sys.executable, os.path.join(HERE, "differential.py"), "interesting", "--build", args.build,
                    "--signature", signature] + args.pass_args  # fmt: skip
            cmd = " ".join(_quote(a) for a in test) + " {}"
            code, _, err = run(
                [tools.cds_reduce, program.path, "--test", cmd, "-o", body_path, "-q",
                 "--max-tests", str(args.reduce_tests), "--timeout", "120"],
                timeout=max(60, int(deadline - time.monotonic())),
            )  # fmt: skip
            reduced = code == 0 and os.path.exists(body_path)
            if not reduced:
                print(f"[differential] cds-reduce kept seed {program.seed} as it was (exit {code}): {err.strip()[-200:]}")
        if not reduced:
            shutil.copyfile(program.path, body_path)
        with open(body_path, encoding="utf-8") as f:
            body = [line for line in f.read().splitlines() if not line.startswith("# EXPECT")]
        bridge_args = " ".join(args.pass_args)
        header = [
            f"# SOURCE: differential campaign (ci/differential.sh): cds-gen {program.gen_args()}"
            + (", reduced with cds-reduce" if reduced else " (not reduced)"),
            f"# UPSTREAM: hw-native-sys/pypto {commit}",
            f"# SYMPTOM: {signature}",
        ]
        if bridge_args:
            header.append(f"# BRIDGE-ARGS: {bridge_args}")
        header.append("# STATUS: open (found by the campaign, not yet triaged)")
        name = _slug(signature) + ".pyir"
        os.makedirs(args.upstream_dir, exist_ok=True)
        with open(os.path.join(args.upstream_dir, name), "w", encoding="utf-8") as f:
            f.write("\n".join(header + expectation(tools, header, body, work) + body) + "\n")
        return name
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _generate(tools, args, i, kinds, gen_dir):
    seed = args.seed + i
    kind = None
    if i % args.invalid_every == args.invalid_every - 1:
        kind = kinds[(i // args.invalid_every) % len(kinds)]
    p = Program(seed, 4 + seed % args.max_size, kind, args.features, os.path.join(gen_dir, f"seed{seed}.pyir"))
    expect = p.path + ".expect.json"
    code, _, err = run([tools.cds_gen] + p.gen_args().split() + ["-o", p.path, "--expect", expect])
    if code != 0:
        print(f"[differential] cds-gen {p.gen_args()} failed: {err.strip()[:200]}")
        return None
    with open(expect, encoding="utf-8") as f:
        p.used = json.load(f).get("features", [])
    os.remove(expect)
    return p


def cmd_run(args):
    tools = Tools(args.build)
    start = time.monotonic()
    deadline = start + args.minutes * 60
    commit = pypto_commit(tools.bridge)
    if commit is None:
        print("differential.sh: PyPTO is not importable (see `bridge/pypto/cds-pypto --version`);"
              " the campaign did not run. Install PyPTO as docs/pypto.md says.", file=sys.stderr)  # fmt: skip
        return 2
    kinds = campaign_kinds(_gen_list(tools.cds_gen, "invalid kinds"))
    all_features = _gen_list(tools.cds_gen, "features")
    if args.features is None:
        args.features = ",".join(f for f in all_features if f not in PYPTO_REFUSED_FEATURES)
    unknown = [f for f in args.features.split(",") if f not in all_features]
    if unknown:
        print(f"differential.sh: unknown feature(s) {', '.join(unknown)} in --features"
              f" (cds-gen --list names them: {' '.join(all_features)})", file=sys.stderr)  # fmt: skip
        return 2
    known = known_symptoms(args.upstream_dir)
    dirs = [os.path.join(args.out, d) for d in ("programs", "reference", "pypto")]
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    gen_dir, ref_dir, py_dir = dirs

    programs, stopped = [], False
    for first in range(0, args.n, CHUNK):
        if time.monotonic() > deadline:
            stopped = True
            break
        chunk = [p for p in (_generate(tools, args, i, kinds, gen_dir) for i in range(first, min(args.n, first + CHUNK))) if p]
        for p in chunk:
            p.reference = reference_outcome(tools.cds_opt, p.path, os.path.join(ref_dir, os.path.basename(p.path)))
        results = bridge_outcomes(tools.bridge, [p.path for p in chunk], py_dir, args.pass_args)
        for p in chunk:
            p.pypto = export_outcome(results[p.path], tools.cds_opt, os.path.join(py_dir, os.path.basename(p.path)))
            p.symptoms = symptoms(p.reference, p.pypto)
        programs.extend(chunk)
        print(f"[differential] {len(programs)} programs, {sum(1 for p in programs if p.compared())} compared,"
              f" {int(time.monotonic() - start)} s", flush=True)  # fmt: skip

    by_symptom = OrderedDict()
    for p in programs:
        for s in p.symptoms:
            by_symptom.setdefault(s, []).append(p)
    filed = {}
    for s, ps in by_symptom.items():
        if s in known or harness_side(s):
            continue
        smallest = min(ps, key=lambda p: os.path.getsize(p.path))
        print(f"[differential] new symptom ({len(ps)} programs): {s}; filing seed {smallest.seed}", flush=True)
        filed[s] = file_symptom(tools, smallest, s, args, commit, deadline)
    seconds = time.monotonic() - start
    report = _report(args, programs, by_symptom, known, filed, commit, stopped, seconds)
    with open(os.path.join(args.out, "report.md"), "w", encoding="utf-8") as f:
        f.write(report)
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(_summary(args, programs, by_symptom, known, filed, commit, stopped, seconds), f, indent=1)
        f.write("\n")
    print(report)
    return 1 if filed else 0


def _count(programs, pred):
    return sum(1 for p in programs if pred(p))


def _symptom_rows(by_symptom, keep, where):
    rows = []
    for s, ps in by_symptom.items():
        if keep(s):
            rows.append(f"| {s.replace('|', '/')} | {len(ps)} | `cds-gen {ps[0].gen_args()}` | {where(s)} |")
    return rows


def _summary(args, programs, by_symptom, known, filed, commit, stopped, seconds):
    """What ci/differential-merge.py needs to merge shards: counts, reach, symptoms."""
    return {
        "pypto": commit,
        "seeds": [args.seed, args.seed + args.n - 1],
        "programs": len(programs),
        "compared": sum(1 for p in programs if p.compared()),
        "agreeing": sum(1 for p in programs if p.compared() and not p.symptoms),
        "stopped": stopped,
        "seconds": round(seconds, 1),
        "features": {f: _reach(programs, f) for f in args.features.split(",")},
        "symptoms": {
            s: {"programs": len(ps), "example": f"cds-gen {ps[0].gen_args()}", "harness": harness_side(s),
                "file": known.get(s) or filed.get(s), "new": s in filed}  # fmt: skip
            for s, ps in by_symptom.items()
        },
    }


def _reach(programs, feature):
    """[programs holding the feature, compared, both accept, same scopes]."""
    holding = [p for p in programs if feature in p.used]
    compared = [p for p in holding if p.compared()]
    both_ok = [p for p in compared if p.reference.status == "ok" and p.pypto.status == "ok"]
    return [len(holding), len(compared), len(both_ok), sum(1 for p in both_ok if p.reference.scopes == p.pypto.scopes)]


def _reach_rows(programs, features):
    """Per feature: the programs holding it, how many of them both passes saw, and of
    those both accepted, on how many they gave the same scopes."""
    rows = ["Reach by feature (programs holding it; of them, compared by both passes; of those, accepted by both,"
            " and with the same scopes):", "",
            "| feature | programs | compared | share | both accept | same scopes |",
            "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for f in features:
        holding, compared, both_ok, same = _reach(programs, f)
        share = f"{100 * compared / holding:.0f}%" if holding else "-"
        rows.append(f"| {f} | {holding} | {compared} | {share} | {both_ok} | {same} |")
    return rows + [""]


def _report(args, programs, by_symptom, known, filed, commit, stopped, seconds):
    compared = [p for p in programs if p.compared()]
    both_ok = [p for p in compared if p.reference.status == "ok" and p.pypto.status == "ok"]
    both_err = [p for p in compared if p.reference.status == "error" and p.pypto.status == "error"]
    status = lambda s: lambda p: p.pypto.status == s  # noqa: E731
    lines = [
        "# Differential campaign: PyPTO's passes against the reference pass",
        "",
        f"PyPTO {commit}; passes {' '.join(args.pass_args) or 'SynthesizeAllReduceSignals,MaterializeCommDomainScopes'};"
        f" seeds {args.seed}..{args.seed + args.n - 1}; {int(seconds)} s"
        + (" (stopped by the time box)" if stopped else "")
        + f"; cds-gen features {args.features}",
        "",
        "| programs | valid | invalid | reference accepts | PyPTO exported | PyPTO rejected | parser refused |"
        " not exportable | not PyPTO DSL | crashes | compared | agreeing |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {len(programs)} | {_count(programs, lambda p: p.kind is None)} | {_count(programs, lambda p: p.kind)}"
        f" | {_count(programs, lambda p: p.reference.status == 'ok')} | {_count(programs, status('ok'))}"
        f" | {_count(programs, status('error'))}"
        f" | {_count(programs, lambda p: any(s.startswith(FRONT_END) for s in p.symptoms))}"
        f" | {_count(programs, status('not-exportable'))} | {_count(programs, status('not-dsl'))}"
        f" | {_count(programs, lambda p: 'crash' in (p.pypto.status, p.reference.status))}"
        f" | {len(compared)} | {_count(compared, lambda p: not p.symptoms)} |",
        "",
        "Of the programs both passes saw:",
        "",
        "| comparison | programs | agree |",
        "|---|---:|---:|",
        f"| accept / reject | {len(compared)} |"
        f" {_count(compared, lambda p: (p.reference.status == 'ok') == (p.pypto.status == 'ok'))} |",
        f"| scopes (both accept) | {len(both_ok)} | {_count(both_ok, lambda p: p.reference.scopes == p.pypto.scopes)} |",
        f"| error line (both reject) | {len(both_err)} | {_count(both_err, lambda p: p.pypto.line == p.reference.line)}"
        f" (+{_count(both_err, lambda p: not p.pypto.line)} where PyPTO gives no line) |",
        f"| no verifier error on PyPTO's export (PyPTO accepts) | {_count(compared, status('ok'))} |"
        f" {_count(compared, lambda p: p.pypto.status == 'ok' and not any(f.severity == 'error' for f in p.pypto.findings))} |",
        "",
    ]
    lines += _reach_rows(programs, args.features.split(","))
    upstream = [s for s in by_symptom if not harness_side(s)]
    lines += [f"## Symptoms of PyPTO's passes: {len(upstream)} ({len(filed)} new, filed in corpus/upstream/)", ""]
    if upstream:
        lines += ["| symptom | programs | example | corpus/upstream |", "|---|---:|---|---|"]
        lines += _symptom_rows(by_symptom, lambda s: not harness_side(s),
                               lambda s: known.get(s) or (f"{filed[s]} (new)" if s in filed else "-"))  # fmt: skip
        lines.append("")
    harness = [s for s in by_symptom if harness_side(s)]
    if harness:
        lines += [f"## On the harness's side: {len(harness)} (not filed)", "",
                  "What PyPTO's parser refuses in the generated text, what the bridge or the harness's parser",
                  "cannot carry, and crashes of the reference.", "",
                  "| symptom | programs | example | |", "|---|---:|---|---|"]  # fmt: skip
        lines += _symptom_rows(by_symptom, harness_side, lambda s: "")
        lines.append("")
    warnings = {}
    for p in programs:
        for f in p.pypto.findings:
            if f.severity == "warning":
                warnings[f.code] = warnings.get(f.code, 0) + 1
    if warnings:
        lines += ["Verifier warnings on PyPTO's exports (what PyPTO's contract allows): "
                  + ", ".join(f"{c} x{n}" for c, n in sorted(warnings.items())), ""]  # fmt: skip
    lines.append(f"Programs, reference outputs and PyPTO's exports: `{args.out}`.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="differential.py")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--build", required=True)
    r.add_argument("-n", type=int, default=100)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--max-size", type=int, default=24)
    r.add_argument("--invalid-every", type=int, default=5)
    r.add_argument("--features")
    r.add_argument("--minutes", type=float, default=30)
    r.add_argument("--out", required=True)
    r.add_argument("--upstream-dir", required=True)
    r.add_argument("--no-reduce", action="store_true")
    r.add_argument("--reduce-tests", type=int, default=150)
    i = sub.add_parser("interesting")
    i.add_argument("--build", required=True)
    i.add_argument("--signature", required=True)
    i.add_argument("file")
    for p in (r, i):
        p.add_argument("--passes")
        p.add_argument("--until")
    args = parser.parse_args(argv)
    args.pass_args = (["--passes", args.passes] if args.passes else []) + (["--until", args.until] if args.until else [])
    if args.command == "run":
        return cmd_run(args)
    return cmd_interesting(args)
