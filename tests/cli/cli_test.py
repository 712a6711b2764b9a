#!/usr/bin/env python3
"""Every command-line tool and script on bad input, as a new user would try them.

One table: each row runs one command and states its exit code, a substring of its
message, a bound on its stderr, and what must become of an output file. The
conventions come from tools/common/cli.h and docs/cds-opt.md: 0 success, 1 the
input has problems, 2 usage error (cds-reduce: 3 not interesting); --help prints
the usage and does nothing else; a failed run leaves an existing -o file
byte-identical; an I/O error names the system's reason.

    cli_test.py --tool cds-opt=PATH ... --source-dir DIR [--only REGEX] [-v]

Rows in EXPECTED_TO_FAIL state behaviour another part of the tree does not have
yet; they run, and a row that starts passing fails the test until it leaves the
list (so switching it on cannot be forgotten).
"""

import argparse
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile

EXPECTED_TO_FAIL = {
}
HUGE = 50 << 20  # the 50 MB inputs of the issue
STDERR_LIMIT = 8192  # what a diagnostic may print, whatever the input
TIMEOUT = 300

# What the scripts must not start when asked for --help or given a bad flag.
SHIMMED = ["cmake", "ninja", "ctest", "apt-get", "sudo", "dpkg", "clang-format-14", "git"]


class Row:
    """One command and what must come of it."""

    def __init__(self, name, argv, rc, has=None, stdout_has=None, stdin=None, max_stderr=STDERR_LIMIT,
                 out=None, out_after=None, as_nobody=False, printable=False, no_side_effects=False,
                 lacks=None, anywhere=False, out_has=None):
        self.name = name
        self.argv = argv  # list; "{X}" placeholders are paths of the fixture
        self.rc = rc
        self.has = has  # substring of stderr
        self.stdout_has = stdout_has
        self.stdin = stdin
        self.max_stderr = max_stderr
        self.out = out  # fixture key of an -o file created with OLD content first
        self.out_after = out_after  # "unchanged" | "replaced" | None
        self.as_nobody = as_nobody
        self.printable = printable  # stderr is printable text (non-printable input escaped)
        self.no_side_effects = no_side_effects  # none of SHIMMED ran
        self.lacks = lacks  # substring stderr must not contain
        self.anywhere = anywhere  # `has` may be on stdout too (cds-replay's FAIL lines)
        self.out_has = out_has  # substring of the -o file afterwards


def make_fixture(root, source_dir):
    """The inputs, written once into `root`."""
    valid_path = os.path.join(source_dir, "corpus/regressions/realistic_allreduce_allgather_pipeline.pyir")
    with open(valid_path, "rb") as f:
        valid = f.read()
    expected_error = os.path.join(source_dir, "corpus/regressions/error_dead_alloc.pyir")
    rng = random.Random(22)
    host = (b"@pl.program\nclass P:\n    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
            b"    def f(self):\n")
    files = {
        "valid": valid,
        "empty": b"",
        "random": bytes(rng.randrange(256) for _ in range(4096)),
        "nul": valid.replace(b"act_buf = ", b"act_buf\x00 = ", 1),
        "utf8": valid.replace(b"act_buf = ", b"act_\xff\xfebuf = ", 1),
        "tabs": valid.replace(b"        ", b"\t\t"),
        "crlf": valid.replace(b"\n", b"\r\n"),
        "cr": valid.replace(b"\n", b"\r"),
        "bom": b"\xef\xbb\xbf" + valid,
        "bom_inside": valid.replace(b"act_buf = ", b"act_buf\xef\xbb\xbf = ", 1),
        "digits30": valid.replace(b"alloc_window_buffer(256)",
                                  b"alloc_window_buffer(123456789012345678901234567890)", 1),
        "huge_line": b"x" * HUGE + b"\n",
        "huge_string": host + b'        b = pld.alloc_window_buffer("' + b"a" * HUGE + b'")\n',
        "deep_parens": host + b"        x = " + b"(" * 10000 + b"1" + b")" * 10000 + b"\n",
        "deep_loops": host + b"".join(b"    " * (i + 2) + b"for i%d in pl.range(2):\n" % i
                                      for i in range(1100)) + b"    " * 1102 + b"pass\n",
        "unmaterialized": valid,
    }
    # Two allocs, so that a reduction can keep the one the first finding is about
    # or wander to the other (see the fake replays below).
    files["two_allocs"] = (b"@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
                           b"    def chip(self, d: pld.DistributedTensor[[64], pl.FP32]):\n        return d\n\n"
                           b"    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
                           b"    def host_orch(self):\n"
                           b"        buf_a = pld.alloc_window_buffer(256)\n"
                           b"        buf_b = pld.alloc_window_buffer(256)\n"
                           b"        a = pld.window(buf_a, [64], dtype=pl.FP32)\n"
                           b"        b = pld.window(buf_b, [64], dtype=pl.FP32)\n"
                           b"        self.chip(a, device=0)\n"
                           b"        self.chip(b, device=1)\n")
    paths = {}
    for key, data in files.items():
        paths[key] = os.path.join(root, key + ".pyir")
        with open(paths[key], "wb") as f:
            f.write(data)
    paths["expected_error"] = expected_error
    # Stand-ins for cds-replay (cds-reduce --replay): while buf_a is in the program,
    # the first finding is CDS-V018 about it; without it, another code comes first
    # (wander_code) or CDS-V018 is about buf_b (wander_subject).
    v018 = ("FINDING CDS-V018 scope-devices-mismatch: $f: x:1:1: error: [CDS-V018 scope-devices-mismatch] "
            "scope 'comm_d0' in 'host_orch' has devices [0] but its slot for alloc '{}' is used on [0, 1]")
    v004 = ("FINDING CDS-V004 window-buffer-size-mismatch: $f: x:1:1: error: [CDS-V004 "
            "window-buffer-size-mismatch] WindowBuffer of alloc 'buf_b' in 'host_orch' has size 1")
    for key, otherwise in (("wander_code", [v004, v018.format("buf_b")]),
                           ("wander_subject", [v018.format("buf_b")])):
        paths[key] = os.path.join(root, key + ".sh")
        with open(paths[key], "w") as f:
            f.write('#!/bin/sh\nfor f; do :; done\nif grep -q buf_a "$f"; then\n'
                    f'  echo "{v018.format("buf_a")}" >&2\nelse\n' +
                    "".join(f'  echo "{line}" >&2\n' for line in otherwise) + "fi\n")
        os.chmod(paths[key], 0o755)
    paths["missing"] = os.path.join(root, "no-such-file.pyir")
    paths["dir"] = os.path.join(root, "a-directory")
    os.mkdir(paths["dir"])
    paths["unreadable"] = os.path.join(root, "unreadable.pyir")
    shutil.copy(valid_path, paths["unreadable"])
    os.chmod(paths["unreadable"], 0)
    # A folder nobody may write into (root-owned, 0755), and one that does not exist.
    paths["locked_dir"] = os.path.join(root, "locked")
    os.mkdir(paths["locked_dir"], 0o755)
    paths["unwritable_out"] = os.path.join(root, "no-such-dir", "out.pyir")
    paths["locked_out"] = os.path.join(paths["locked_dir"], "out.pyir")
    paths["out"] = os.path.join(root, "out.txt")
    os.chmod(root, 0o755)
    return paths


def tool_rows(tools):
    """Rows for the compiled tools."""
    rows = []
    opt, replay, dot, reduce_, gen = (tools[t] for t in ("cds-opt", "cds-replay", "cds-dot", "cds-reduce",
                                                         "cds-gen"))
    decode = tools.get("cds-decode-bytes")

    for name, exe in tools.items():
        rows += [
            Row(f"{name} --help", [exe, "--help"], 0, stdout_has=f"Usage: {name} "),
            Row(f"{name} --help exit codes", [exe, "--help"], 0, stdout_has="Exit codes: 0 success"),
            Row(f"{name} --version", [exe, "--version"], 0, stdout_has="cds-harness"),
            Row(f"{name} unknown flag", [exe, "--no-such-flag", "{valid}"], 2, has="--no-such-flag"),
        ]

    # Bad inputs through every tool that reads a program: cds-opt (plain and with
    # the pipeline), cds-replay, cds-dot, cds-reduce.
    readers = [
        ("cds-opt", [opt], 1),
        ("cds-opt pipeline", [opt, "--default-pipeline"], 1),
        ("cds-replay", [replay], 1),
        ("cds-dot", [dot], 1),
        ("cds-reduce", [reduce_, "--same-crash"], 1),
    ]
    bad_inputs = [
        # (row suffix, fixture, substring, printable stderr)
        ("empty", "empty", "expected '@pl.program'", True),
        # The lone carriage returns are rejected before any token is read: the first
        # is on line 4 of these bytes.
        ("random-bytes", "random", ":4:118: error: CR line endings", True),
        ("nul-byte", "nul", "0x00", True),
        ("invalid-utf8", "utf8", "0xFF", True),
        ("tabs", "tabs", "tab in indentation", True),
        ("bom", "bom_inside", "UTF-8 byte-order mark (U+FEFF): only allowed as the first bytes", True),
        ("cr-only", "cr", "CR line endings", True),
        ("digits30", "digits30", "does not fit in 64 bits", True),
        ("huge-line", "huge_line", ":1:1: error:", True),
        ("huge-string", "huge_string", ":5:13: error:", True),
        ("deep-parens", "deep_parens", "nested deeper than 200 levels", True),
        ("deep-loops", "deep_loops", "nested deeper than 200 levels", True),
        ("missing", "missing", "No such file or directory", True),
        ("directory", "dir", "Is a directory", True),
    ]
    for label, prefix, rc in readers:
        for suffix, key, substring, printable in bad_inputs:
            if label == "cds-replay" and key == "dir":
                continue  # a directory is a set of files to cds-replay (row below)
            rows.append(Row(f"{label} {suffix}", prefix + ["{%s}" % key], rc, has=substring,
                            printable=printable, anywhere=label == "cds-replay"))
        rows.append(Row(f"{label} unreadable", prefix + ["{unreadable}"], rc,
                        has="cannot read '{unreadable}': Permission denied", as_nobody=True,
                        anywhere=label == "cds-replay"))
    rows += [
        Row("cds-opt crlf", [opt, "{crlf}"], 0),
        # A byte-order mark at the very start is skipped, as Python skips it.
        Row("cds-opt bom at the start", [opt, "{bom}"], 0, stdout_has="@pl.program"),
        Row("cds-replay empty directory", [replay, "{dir}"], 1, stdout_has="no .pyir files"),
        # 4. the nesting limit: a bad value is a usage error; at the ceiling the parser
        # must answer (not crash) however deep the input goes.
        Row("cds-opt nesting -5", [opt, "--max-nesting-depth", "-5", "{deep_parens}"], 2, has="not in range"),
        Row("cds-opt nesting 20000", [opt, "--max-nesting-depth", "20000", "{deep_parens}"], 2,
            has="not in range"),
        Row("cds-opt nesting at the ceiling, parens", [opt, "--max-nesting-depth", "256", "{deep_parens}"], 1,
            has="nested deeper than 256 levels"),
        Row("cds-opt nesting at the ceiling, loops", [opt, "--max-nesting-depth", "256", "{deep_loops}"], 1,
            has="nested deeper than 256 levels"),
        Row("cds-opt nesting past the ceiling", [opt, "--max-nesting-depth", "257", "{deep_parens}"], 2,
            has="not in range"),
        Row("cds-opt max-input-bytes 0", [opt, "--max-input-bytes", "0", "{valid}"], 2),
        Row("cds-opt max-input-bytes -1", [opt, "--max-input-bytes", "-1", "{valid}"], 2),
        # 2. a failed run leaves an existing output file byte-identical.
        Row("cds-opt failed run keeps -o", [opt, "--default-pipeline", "{empty}", "-o", "{out}"], 1,
            out="out", out_after="unchanged"),
        Row("cds-opt parse error keeps -o", [opt, "{tabs}", "-o", "{out}"], 1, out="out", out_after="unchanged"),
        Row("cds-opt verify-only with -o", [opt, "--verify-only", "{valid}", "-o", "{out}"], 2,
            has="excludes", out="out", out_after="unchanged"),
        Row("cds-opt success replaces -o", [opt, "{valid}", "-o", "{out}"], 0, out="out", out_after="replaced"),
        Row("cds-opt -o missing folder", [opt, "{valid}", "-o", "{unwritable_out}"], 1,
            has="cannot write '{unwritable_out}': No such file or directory"),
        Row("cds-opt -o unwritable folder", [opt, "{valid}", "-o", "{locked_out}"], 1,
            has="cannot write '{locked_out}': Permission denied", as_nobody=True),
        Row("cds-opt -o a directory", [opt, "{valid}", "-o", "{dir}"], 1, has="Is a directory"),
        Row("cds-opt -o /dev/null", [opt, "{valid}", "-o", "/dev/null"], 0),
        Row("cds-opt --verify-relational unreadable", [opt, "--verify-only", "--verify-relational",
                                                       "{unreadable}", "{valid}"], 1,
            has="Permission denied", as_nobody=True),
        Row("cds-opt --verify-relational directory", [opt, "--verify-only", "--verify-relational", "{dir}",
                                                      "{valid}"], 1, has="Is a directory"),
        Row("cds-opt --verify-only directory", [opt, "--verify-only", "{dir}"], 1, has="Is a directory"),
        Row("cds-opt --verify-relational without --verify-only", [opt, "--verify-relational", "{valid}",
                                                                  "{valid}"], 2, has="--verify-only"),
        Row("cds-opt --emit=dot with --verify-only", [opt, "--verify-only", "--emit=dot", "{valid}"], 2,
            has="excludes"),
        Row("cds-opt unknown pass", [opt, "--passes=nope", "{valid}"], 2, has="unknown pass 'nope' (known passes:"),
        Row("cds-opt unknown pass before reading", [opt, "--passes=nope", "{missing}"], 2, has="unknown pass"),
        Row("cds-opt verify-only unmaterialized hint", [opt, "--verify-only", "{unmaterialized}"], 1,
            has="looks unmaterialized"),
        Row("cds-opt --emit=svg", [opt, "--emit=svg", "{valid}"], 2),
        Row("cds-opt stdin", [opt, "-"], 0, stdin="valid", stdout_has="@pl.program"),
        # cds-replay
        Row("cds-replay unknown pass", [replay, "--pipeline", "nope", "{valid}", "{expected_error}"], 2,
            has="unknown pass 'nope' (known passes:", lacks="<unknown>"),
        Row("cds-replay -q hides expected diagnostics", [replay, "-q", "{expected_error}"], 0, lacks="DIAGNOSTIC"),
        Row("cds-replay shows diagnostics without -q", [replay, "{expected_error}"], 0, has="DIAGNOSTIC"),
        Row("cds-replay --derive-header unreadable", [replay, "--derive-header", "{unreadable}"], 1,
            has="Permission denied", as_nobody=True),
        Row("cds-replay no path", [replay], 2),
        # cds-dot
        Row("cds-dot unknown pass", [dot, "--pipeline", "nope", "{valid}"], 2, has="unknown pass 'nope'"),
        Row("cds-dot failed run keeps -o", [dot, "{empty}", "-o", "{out}"], 1, out="out", out_after="unchanged"),
        Row("cds-dot success replaces -o", [dot, "{valid}", "-o", "{out}"], 0, out="out", out_after="replaced"),
        Row("cds-dot -o missing folder", [dot, "{valid}", "-o", "{unwritable_out}"], 1,
            has="No such file or directory"),
        Row("cds-dot -o unwritable folder", [dot, "{valid}", "-o", "{locked_out}"], 1, has="Permission denied",
            as_nobody=True),
        Row("cds-dot no file", [dot], 2),
        # cds-reduce: 3 is "not interesting"
        Row("cds-reduce no mode", [reduce_, "{valid}"], 2, has="choose one of"),
        Row("cds-reduce two modes", [reduce_, "{valid}", "--same-crash", "--same-code", "CDS-V018"], 2),
        Row("cds-reduce not interesting", [reduce_, "-q", "{valid}", "--same-code", "CDS-V018", "-o", "{out}"], 3,
            has="not interesting", out="out", out_after="unchanged"),
        Row("cds-reduce unknown pass", [reduce_, "{valid}", "--same-crash", "--pipeline", "nope"], 2,
            has="unknown pass"),
        Row("cds-reduce --same-code keeps the first finding's code",
            [reduce_, "-q", "{two_allocs}", "--same-code", "CDS-V018", "--replay", "{wander_code}", "-o", "{out}"],
            0, out="out", out_after="replaced", out_has="buf_a"),
        Row("cds-reduce --same-code keeps the first finding's subject",
            [reduce_, "-q", "{two_allocs}", "--same-code", "CDS-V018", "--replay", "{wander_subject}", "-o",
             "{out}"], 0, out="out", out_after="replaced", out_has="buf_a"),
        Row("cds-reduce -o unwritable", [reduce_, "-q", "{expected_error}", "--same-diagnostic", "dead alloc",
                                         "--max-tests", "1", "-o", "{unwritable_out}"], 1,
            has="No such file or directory"),
        # cds-gen
        Row("cds-gen unknown invalid kind", [gen, "--invalid", "nope"], 2, has="unknown invalid kind 'nope'"),
        Row("cds-gen unknown feature", [gen, "--features", "nope"], 2, has="unknown feature 'nope'"),
        Row("cds-gen size 0", [gen, "--size", "0"], 2),
        Row("cds-gen -o missing folder", [gen, "-o", "{unwritable_out}"], 1, has="No such file or directory"),
        Row("cds-gen -o unwritable folder", [gen, "-o", "{locked_out}"], 1, has="Permission denied",
            as_nobody=True),
        Row("cds-gen -o replaces", [gen, "--seed", "3", "-o", "{out}"], 0, out="out", out_after="replaced"),
        Row("cds-gen --expect to a missing folder", [gen, "--expect", "{unwritable_out}"], 1,
            has="No such file or directory"),
    ]
    if decode:
        rows += [
            Row("cds-decode-bytes missing", [decode, "{missing}"], 1, has="No such file or directory"),
            Row("cds-decode-bytes directory", [decode, "{dir}"], 1, has="Is a directory"),
            Row("cds-decode-bytes unreadable", [decode, "{unreadable}"], 1, has="Permission denied",
                as_nobody=True),
            Row("cds-decode-bytes too big", [decode, "{huge_line}"], 1, has="4096 bytes"),
        ]
    return rows


def script_rows(source_dir):
    """Rows for the scripts: usage only (anything else builds or runs for minutes)."""
    scripts = sorted(
        [os.path.join("ci", f) for f in os.listdir(os.path.join(source_dir, "ci")) if f.endswith(".sh")] +
        [os.path.join("bench", f) for f in os.listdir(os.path.join(source_dir, "bench")) if f.endswith(".sh")])
    rows = []
    for rel in scripts:
        path = os.path.join(source_dir, rel)
        rows += [
            Row(f"{rel} --help", [path, "--help"], 0, stdout_has="Exit codes", no_side_effects=True),
            Row(f"{rel} unknown flag", [path, "--no-such-flag"], 2, has="--no-such-flag", no_side_effects=True),
        ]
    triage = os.path.join(source_dir, "ci/triage.sh")
    rows += [
        Row("ci/triage.sh missing file", [triage, "{missing}"], 1, has="No such file or directory",
            no_side_effects=True),
        Row("ci/triage.sh directory", [triage, "{dir}"], 1, has="Is a directory", no_side_effects=True),
        Row("ci/triage.sh unreadable", [triage, "{unreadable}"], 1, has="Permission denied", as_nobody=True,
            no_side_effects=True),
        Row("ci/triage.sh no file", [triage], 2, no_side_effects=True),
        Row("ci/test.sh missing value", [os.path.join(source_dir, "ci/test.sh"), "--preset"], 2,
            no_side_effects=True),
        Row("ci/fuzz.sh bad number", [os.path.join(source_dir, "ci/fuzz.sh"), "--minutes", "x"], 2,
            no_side_effects=True),
        Row("ci/fuzz.sh unknown target", [os.path.join(source_dir, "ci/fuzz.sh"), "--targets", "nope"], 2,
            no_side_effects=True),
    ]
    return rows


def make_shims(root):
    """Commands that record being run and fail: --help must start none of them."""
    shim_dir = os.path.join(root, "shims")
    os.mkdir(shim_dir)
    log = os.path.join(root, "shims.log")
    for name in SHIMMED:
        path = os.path.join(shim_dir, name)
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\necho "{name} $*" >>"{log}"\nexit 97\n')
        os.chmod(path, 0o755)
    os.chmod(shim_dir, 0o755)
    return shim_dir, log


def run_row(row, paths, shim_dir, shim_log, run_as_nobody):
    """Runs one row; returns a list of problems (empty: the row holds)."""
    def fill(s):
        return s.format(**paths) if s else s

    argv = [fill(a) for a in row.argv]
    env = dict(os.environ)
    if row.no_side_effects:
        env["PATH"] = shim_dir + os.pathsep + env.get("PATH", "")
        if os.path.exists(shim_log):
            os.remove(shim_log)
    old = b"OLD CONTENT\n"
    out_path = paths[row.out] if row.out else None
    if out_path:
        with open(out_path, "wb") as f:
            f.write(old)
        os.chmod(out_path, 0o644)
    if row.as_nobody:
        if not run_as_nobody:
            return None  # skipped
        argv = ["runuser", "-u", "nobody", "--"] + argv
    stdin = open(paths[row.stdin], "rb") if row.stdin else subprocess.DEVNULL
    try:
        p = subprocess.run(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=TIMEOUT, cwd=os.path.dirname(paths["valid"]))
    except subprocess.TimeoutExpired:
        return [f"no answer within {TIMEOUT} s"]
    finally:
        if row.stdin:
            stdin.close()
    problems = []
    err = p.stderr.decode("latin-1")
    if p.returncode != row.rc:
        problems.append(f"exit code {p.returncode}, expected {row.rc}")
    out_text = p.stdout.decode("latin-1")
    if row.has and fill(row.has) not in (err + out_text if row.anywhere else err):
        problems.append(f"{'output' if row.anywhere else 'stderr'} lacks {fill(row.has)!r}")
    if row.lacks and fill(row.lacks) in err:
        problems.append(f"stderr contains {fill(row.lacks)!r}")
    if row.stdout_has and row.stdout_has not in out_text:
        problems.append(f"stdout lacks {row.stdout_has!r}")
    if len(p.stderr) > row.max_stderr:
        problems.append(f"stderr is {len(p.stderr)} bytes, more than {row.max_stderr}")
    if row.printable:
        # Valid UTF-8 is echoed as it is (docs/text-format.md); anything else must
        # have been escaped.
        text = p.stderr.decode("utf-8", errors="surrogateescape")
        bad = sorted({c for c in text if not (c.isprintable() or c in "\t\n")})
        if bad:
            problems.append("stderr holds raw non-printable characters " +
                            ", ".join(f"U+{ord(c):04X}" if ord(c) < 0xDC80 or ord(c) > 0xDCFF
                                      else f"0x{ord(c) - 0xDC00:02X}" for c in bad[:5]))
    if out_path:
        with open(out_path, "rb") as f:
            now = f.read()
        if row.out_after == "unchanged" and now != old:
            problems.append(f"the existing -o file changed ({len(now)} bytes now)")
        if row.out_after == "replaced" and now == old:
            problems.append("the -o file was not replaced")
        if row.out_has and row.out_has.encode() not in now:
            problems.append(f"the -o file lacks {row.out_has!r}")
        leftovers = [f for f in os.listdir(os.path.dirname(out_path)) if ".tmp-" in f]
        if leftovers:
            problems.append(f"temporary files left behind: {leftovers}")
    if row.no_side_effects and os.path.exists(shim_log):
        with open(shim_log) as f:
            problems.append("ran " + "; ".join(f.read().split("\n")[:3]))
    if problems:
        problems.append(f"command: {' '.join(argv)}")
        problems.append("stderr: " + err[:600].replace("\n", "\n        "))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", action="append", default=[], help="NAME=PATH of a tool")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--only", help="run only rows whose name matches this regex")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    tools = {name: os.path.abspath(path) for name, path in (t.split("=", 1) for t in args.tool)}
    args.source_dir = os.path.abspath(args.source_dir)
    for needed in ("cds-opt", "cds-replay", "cds-dot", "cds-reduce", "cds-gen"):
        if needed not in tools:
            ap.error(f"--tool {needed}=PATH is required")

    run_as_nobody = os.geteuid() == 0 and shutil.which("runuser") is not None
    if os.geteuid() != 0:
        print("note: not root, so the unreadable-file rows run as this user "
              "(an unreadable file is unreadable to it too)")
        run_as_nobody = False
    root = tempfile.mkdtemp(prefix="cds-cli-test.")
    try:
        paths = make_fixture(root, args.source_dir)
        shim_dir, shim_log = make_shims(root)
        rows = tool_rows(tools) + script_rows(args.source_dir)
        names = [r.name for r in rows]
        assert len(names) == len(set(names)), "duplicate row names"
        unknown = set(EXPECTED_TO_FAIL) - set(names)
        assert not unknown, f"EXPECTED_TO_FAIL names no row: {sorted(unknown)}"
        failed, xfailed, skipped = [], [], []
        for row in rows:
            if args.only and not re.search(args.only, row.name):
                continue
            if row.as_nobody and os.geteuid() != 0:
                row.as_nobody = False  # the file is unreadable to this user already
            problems = run_row(row, paths, shim_dir, shim_log, run_as_nobody)
            if problems is None:
                skipped.append(row.name)
                print(f"SKIP  {row.name}: needs root to run as 'nobody' (runuser)")
                continue
            pending = EXPECTED_TO_FAIL.get(row.name)
            if pending and problems:
                xfailed.append(row.name)
                print(f"XFAIL {row.name} ({pending}): {problems[0]}")
            elif pending:
                failed.append(row.name)
                print(f"XPASS {row.name}: it passes now; remove it from EXPECTED_TO_FAIL")
            elif problems:
                failed.append(row.name)
                print(f"FAIL  {row.name}")
                for p in problems:
                    print(f"      {p}")
            elif args.verbose:
                print(f"PASS  {row.name}")
        ran = len([r for r in rows if not args.only or re.search(args.only, r.name)])
        print(f"{ran} rows: {ran - len(failed) - len(xfailed) - len(skipped)} passed, {len(failed)} failed, "
              f"{len(xfailed)} expected to fail, {len(skipped)} skipped")
        return 1 if failed else 0
    finally:
        os.chmod(os.path.join(root, "unreadable.pyir"), stat.S_IRUSR | stat.S_IWUSR)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
