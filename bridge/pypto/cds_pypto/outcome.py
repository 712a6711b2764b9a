"""What a program came to, in one shape for both judges: the reference pass
(`cds-opt --default-pipeline`) and PyPTO through the bridge (whose export the
harness's verifier then reads). Comparing two outcomes gives
the symptoms of their disagreement, each as a short signature that survives
reduction (names and numbers are masked), so one fault is filed once.
"""

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from .scopes import ScopeError, scope_lines

_DIAG = re.compile(r"^(?P<file>.*?):(?P<line>[0-9]+):(?P<col>[0-9]+): (?P<sev>error|warning): (?P<msg>.*)$")
_FINDING = re.compile(r"^\[(?P<code>CDS-V[0-9]+) (?P<name>[a-z0-9-]+)\] (?P<msg>.*)$")


@dataclass
class Finding:
    code: str
    name: str
    message: str
    line: int
    severity: str

    def signature(self):
        return f"verifier {self.code} {self.name}: {mask(self.message)}"


@dataclass
class Outcome:
    status: str  # ok | error | not-dsl | not-exportable | crash
    line: int = 0
    message: str = ""
    scopes: list = field(default_factory=list)  # `# EXPECT-SCOPE:` lines
    findings: list = field(default_factory=list)  # Finding, on PyPTO's export only


def mask(message):
    """A message with its names, types and numbers masked: what stays is the kind
    of problem."""
    message = re.sub(r"'[^']*'", "'_'", message)
    message = re.sub(r'"[^"]*"', '"_"', message)
    while True:  # innermost brackets first, so nested ones collapse to one
        masked = re.sub(r"\[[^\[\]]*\]", "{_}", message)
        if masked == message:
            break
        message = masked
    message = message.replace("{_}", "[_]")
    return re.sub(r"[0-9]+", "N", message)


def run(cmd, timeout=120, env=None):
    """(exit code, stdout, stderr); exit code -N for a signal, None for a timeout."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return None, "", "timeout"
    return p.returncode, p.stdout, p.stderr


def first_diagnostic(stderr, path):
    """(line, message) of the first `FILE:LINE:COL: error:` line about `path`."""
    for text in stderr.splitlines():
        m = _DIAG.match(text)
        if m and m.group("sev") == "error" and os.path.basename(m.group("file")) == os.path.basename(path):
            return int(m.group("line")), m.group("msg")
    lines = [t for t in stderr.splitlines() if t.strip()]
    return 0, lines[0] if lines else ""


def reference_outcome(cds_opt, path, out_path):
    """The reference pipeline on `path`; its output goes to `out_path`."""
    code, _, err = run([cds_opt, "--default-pipeline", path, "-o", out_path])
    if code == 0:
        with open(out_path, encoding="utf-8") as f:
            text = f.read()
        try:
            return Outcome("ok", scopes=scope_lines(text))
        except ScopeError as e:
            return Outcome("crash", message=f"the reference's output is unreadable: line {e.line}: {e}")
    if code == 1:
        line, message = first_diagnostic(err, path)
        if _FINDING.match(message):
            # The reference's output failed the harness's own verifier: a fault of
            # the harness, not a verdict on the program.
            return Outcome("crash", line, f"the reference pass failed its verifier: {message}")
        return Outcome("error", line, message)
    return Outcome("crash", message=f"cds-opt exit {code}: {err.strip()[:200]}")


_STATUS = {"OK": "ok", "REJECTED": "error", "NOT-DSL": "not-dsl", "NOT-EXPORTABLE": "not-exportable"}
_WHERE = re.compile(r"^(?P<file>.*):(?P<line>[0-9]+):(?P<col>[0-9]+)$")
_STATUS_LINE = re.compile(r"^(?P<word>[A-Z-]+) (?P<rest>.*)$")


def bridge_outcomes(bridge, paths, out_dir, pass_args=(), timeout=600):
    """Runs `cds-pypto export --out-dir` over `paths`; {path: Outcome}. A program
    whose run kills the bridge (a crash inside PyPTO) is retried alone, so one
    crash costs only its own program."""
    results = {}
    pending = list(paths)
    while pending:
        code, out, err = run(
        [sys.executable, bridge, "export", "--out-dir", out_dir, *pass_args, *pending], timeout=timeout
    )
        for text in out.splitlines():
            m = _STATUS_LINE.match(text)
            if not m or m.group("word") not in _STATUS and m.group("word") != "IO-ERROR":
                continue
            word, rest = m.group("word"), m.group("rest")
            if word == "OK":
                results[rest] = Outcome("ok")
                continue
            where, _, message = rest.partition(": ")
            m = _WHERE.match(where)
            file, line = (m.group("file"), int(m.group("line"))) if m else (where, 0)
            results[file] = Outcome(_STATUS.get(word, "crash"), line, message)
        done = [p for p in pending if p in results]
        rest = [p for p in pending if p not in results]
        if not rest:
            break
        if code is not None and code in (0, 1) and not done:
            raise RuntimeError(f"cds-pypto printed no status for {rest[0]}: {err.strip()[:300]}")
        if len(rest) == 1 or not done:
            # The first pending program stopped the batch: record it and go on.
            why = "timeout" if code is None else f"exit {code}" + (f" (signal {-code})" if code < 0 else "")
            results[rest[0]] = Outcome("crash", message=f"cds-pypto {why}: {err.strip()[-300:]}")
            rest = rest[1:]
        pending = rest
    return results


def verify_export(cds_opt, export_path):
    """The verifier's findings on PyPTO's export under PyPTO's contract; an export
    the harness cannot parse is one finding with code `PARSE`."""
    code, _, err = run([cds_opt, "--verify-only", "--contract=pypto", export_path])
    findings = []
    for text in err.splitlines():
        m = _DIAG.match(text)
        if not m:
            continue
        f = _FINDING.match(m.group("msg"))
        if f:
            findings.append(Finding(f.group("code"), f.group("name"), f.group("msg"), int(m.group("line")), m.group("sev")))
        elif m.group("sev") == "error":
            findings.append(Finding("PARSE", "export-unparsable", m.group("msg"), int(m.group("line")), "error"))
    if code not in (0, 1) or (code == 1 and not findings):
        findings.append(Finding("CRASH", "verifier-failed", f"cds-opt exit {code}: {err.strip()[:200]}", 0, "error"))
    return findings


def export_outcome(bridge_result, cds_opt, export_path):
    """The bridge's outcome completed with the scopes and findings of its export."""
    if bridge_result.status != "ok":
        return bridge_result
    with open(export_path, encoding="utf-8") as f:
        text = f.read()
    try:
        bridge_result.scopes = scope_lines(text)
    except ScopeError as e:
        bridge_result.findings.append(Finding("PARSE", "export-unreadable", str(e), e.line, "error"))
    bridge_result.findings.extend(verify_export(cds_opt, export_path))
    return bridge_result


FRONT_END = "parser rejects"
_REJECTION = re.compile(r"^PyPTO's (?P<stage>\S+) rejected the program: (?P<reason>.*)$")


def rejection(message):
    """(stage, reason) of the bridge's `PyPTO's STAGE rejected the program: REASON`."""
    m = _REJECTION.match(message)
    return (m.group("stage"), m.group("reason")) if m else ("?", message)


def symptoms(reference, pypto):
    """Signatures of how PyPTO's outcome departs from the reference's (empty when
    they agree). Programs PyPTO cannot be given (not PyPTO DSL) have none. When
    PyPTO's parser refuses a program the reference accepts, or refuses it on
    another line, the pass was never reached: that is a FRONT_END symptom, a
    difference between the DSL the harness models and PyPTO's, not a fault of
    PyPTO's pass."""
    if pypto.status == "not-dsl":
        return []
    if pypto.status == "not-exportable":
        return [f"not exportable: {mask(pypto.message)}"]
    if pypto.status == "crash" or reference.status == "crash":
        return [f"crash: {'pypto' if pypto.status == 'crash' else 'reference'}"]
    stage, reason = rejection(pypto.message) if pypto.status == "error" else (None, "")
    front_end = stage == "parser"
    out = []
    if reference.status == "ok" and pypto.status == "error":
        out.append(f"{FRONT_END if front_end else 'pypto rejects'}: {stage}: {mask(reason)}")
    elif reference.status == "error" and pypto.status == "ok":
        out.append(f"pypto accepts: {mask(reference.message)}")
    elif reference.status == "error" and pypto.status == "error":
        if pypto.line and reference.line and pypto.line != reference.line:
            # PyPTO stopped somewhere the reference sees no error: named by PyPTO's
            # reason, as when it rejects a program the reference accepts.
            out.append(f"{FRONT_END if front_end else 'pypto rejects'}: {stage}: {mask(reason)}")
    elif reference.scopes != pypto.scopes:
        out.append(f"scopes: {scope_difference(reference.scopes, pypto.scopes)}")
    seen = set()
    for f in pypto.findings:
        if f.severity == "error" and f.signature() not in seen:
            seen.add(f.signature())
            out.append(f.signature())
    return out


def reference_admits(signature, reference):
    """False when no PyPTO outcome could give `signature` beside this reference
    outcome (the check is cheap; running PyPTO is not)."""
    kind, _, rest = signature.partition(": ")
    if kind == "scopes":
        return reference.status == "ok"
    if kind == "pypto rejects":
        return reference.status in ("ok", "error")
    if kind == "pypto accepts":
        return reference.status == "error" and mask(reference.message) == rest
    if kind == FRONT_END:
        return reference.status in ("ok", "error")
    return reference.status != "crash" or signature == "crash: reference"


def _scope_fields(line):
    # `# EXPECT-SCOPE: FUNC NAME devices=D slots=S`
    body = line[len("# EXPECT-SCOPE: ") :]
    head, _, slots = body.rpartition(" slots=")
    func_name, _, devices = head.partition(" devices=")
    func, _, name = func_name.partition(" ")
    return func, name, devices, slots


def scope_difference(expected, actual):
    """A masked description of the first way two scope lists differ."""
    if len(expected) != len(actual):
        # The direction only: the counts depend on the program, not on the fault.
        return f"{'fewer' if len(actual) < len(expected) else 'more'} scopes than expected"
    for e, a in zip(expected, actual):
        ef, af = _scope_fields(e), _scope_fields(a)
        if ef[0] != af[0]:
            return "scopes in other functions"
        if ef[2] != af[2]:
            kind = lambda d: "all" if d == "all" else ("[]" if d == "[]" else "subset")  # noqa: E731
            return f"devices {kind(ef[2])} expected, {kind(af[2])} found"
        if ef[3] != af[3]:
            return "slots differ"
        if ef[1] != af[1]:
            return "scope names differ"
    return "scopes differ"
