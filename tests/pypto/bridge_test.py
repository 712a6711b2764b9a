#!/usr/bin/env python3
"""The parts of the PyPTO bridge that need no PyPTO: the source handed to PyPTO,
the scope reader, the outcome comparison and the command line (ctest label
`bridge`). A stub `pypto` package that fails to import stands for a machine
without PyPTO."""

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIDGE_DIR = os.path.join(ROOT, "bridge", "pypto")
BRIDGE = os.path.join(BRIDGE_DIR, "cds-pypto")
NO_PYPTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "no_pypto")
sys.path.insert(0, BRIDGE_DIR)

from cds_pypto.campaign import PYPTO_REFUSED_FEATURES, Program, _reach_rows, campaign_kinds  # noqa: E402
from cds_pypto.outcome import Finding, Outcome, symptoms  # noqa: E402
from cds_pypto.scopes import ScopeError, scope_lines  # noqa: E402
from cds_pypto.source import PreparedSource, SourceError  # noqa: E402

CALLER_FIRST = textwrap.dedent(
    """\
    import pypto.language as pl
    NR = pl.dynamic("NR")

    @pl.program
    class P:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(self):
            buf = pld.alloc_window_buffer(256)
            data = pld.window(buf, [64], dtype=pl.FP32)
            self.chip_orch(data, device=0)
            return 0

        # a comment between methods stays with the method above
        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(self, data: pld.DistributedTensor[[64], pl.FP32]):
            return self.leaf(data)

        @pl.function(type=pl.FunctionType.Orchestration)
        def leaf(self, data: pld.DistributedTensor[[64], pl.FP32]):
            return data
    """
)


class SourceTest(unittest.TestCase):
    def test_callees_move_before_their_callers_and_lines_map_back(self):
        src = PreparedSource("p.pyir", CALLER_FIRST)
        order = [line.strip() for line in src.pypto_text.splitlines() if line.strip().startswith("def ")]
        self.assertEqual(order, ["def leaf(self, data: pld.DistributedTensor[[64], pl.FP32]):",
                                 "def chip_orch(self, data: pld.DistributedTensor[[64], pl.FP32]):",
                                 "def host_orch(self):"])  # fmt: skip
        moved = src.pypto_text.splitlines()
        original = CALLER_FIRST.splitlines()
        for n, text in enumerate(moved, 1):
            self.assertEqual(original[src.original_line(n) - 1], text, f"line {n}")
        self.assertEqual(sorted(src.original_line(n) for n in range(1, len(moved) + 1)),
                         list(range(1, len(original) + 1)))  # fmt: skip

    def test_callees_already_first_leave_the_text_alone(self):
        text = CALLER_FIRST.replace("self.chip_orch(data, device=0)", "pass").replace(
            "return self.leaf(data)", "return data"
        )
        src = PreparedSource("p.pyir", text)
        self.assertEqual(src.pypto_text, text)
        self.assertEqual(src.original_line(7), 7)

    def test_method_text_is_the_method_as_written(self):
        src = PreparedSource("p.pyir", CALLER_FIRST)
        self.assertEqual(src.method_text("leaf").splitlines()[0].strip(),
                         "@pl.function(type=pl.FunctionType.Orchestration)")  # fmt: skip
        self.assertEqual(src.method_text("leaf").splitlines()[-1].strip(), "return data")

    def test_dump_forms_are_not_pypto_dsl(self):
        text = CALLER_FIRST.replace("pld.alloc_window_buffer(256)", 'pl._dump.alloc_window_buffer(256, name="b")')
        with self.assertRaises(SourceError) as e:
            PreparedSource("p.pyir", text)
        self.assertIn("pl._dump.alloc_window_buffer", e.exception.message)
        self.assertEqual((e.exception.line, e.exception.column), (8, 15))

    def test_syntax_errors_carry_their_position(self):
        with self.assertRaises(SourceError) as e:
            PreparedSource("p.pyir", "@pl.program\nclass P:\n    def f(self:\n")
        self.assertEqual(e.exception.line, 3)


DUMPED = textwrap.dedent(
    """\
    @pl.program
    class P:
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def b_host(self):
            pl._dump.window_buffer("x_window", base="x", size=1024, load_from_host=False, store_to_host=False)
            pl._dump.window_buffer("y_window", base="y", size=64, load_from_host=False, store_to_host=False)
            with pl._dump.comm_domain(name="comm_d0", devices="all", slots=["x_window"], attrs={}):
                with pl._dump.comm_domain(name="comm_d1", devices=[0, 2], slots=["y_window"], attrs={}):
                    x: pl.Ptr = pl._dump.call("pld.tensor.alloc_window_buffer", [1024], pl.Ptr, kwargs={"name": "buf"})
                    y = pl._dump.alloc_window_buffer(64, name="sig")
                    y = pld.alloc_window_buffer(64)
                    return 0

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def a_host(self):
            pl._dump.window_buffer("w_window", base="w", size=8, load_from_host=False, store_to_host=False)
            with pl._dump.comm_domain(name="comm_d0", devices=[1], slots=["w_window"], attrs={}):
                w = pld.alloc_window_buffer(8)
                return 0
    """
)


class ScopesTest(unittest.TestCase):
    def test_scopes_by_function_name_then_nesting_with_logical_alloc_names(self):
        self.assertEqual(scope_lines(DUMPED), [
            "# EXPECT-SCOPE: a_host comm_d0 devices=[1] slots=w",
            "# EXPECT-SCOPE: b_host comm_d0 devices=all slots=buf",
            "# EXPECT-SCOPE: b_host comm_d1 devices=[0, 2] slots=sig",
        ])  # fmt: skip

    def test_the_empty_tuple_type_of_the_text_format_is_read(self):
        text = DUMPED.replace("w = pld.alloc_window_buffer(8)", "w = pld.alloc_window_buffer(8)\n            t: pl.Tuple[()] = ()")
        self.assertEqual(scope_lines(text), scope_lines(DUMPED))

    def test_a_slot_without_declaration_is_an_error(self):
        with self.assertRaises(ScopeError) as e:
            scope_lines(DUMPED.replace('slots=["w_window"]', 'slots=["v_window"]'))
        self.assertIn("v_window", str(e.exception))


class OutcomeTest(unittest.TestCase):
    def test_symptoms(self):
        scope = "# EXPECT-SCOPE: h comm_d0 devices=[0] slots=a"
        ok = Outcome("ok", scopes=[scope])
        self.assertEqual(symptoms(ok, Outcome("ok", scopes=[scope])), [])
        self.assertEqual(symptoms(ok, Outcome("ok", scopes=[scope.replace("[0]", "all")])),
                         ["scopes: devices subset expected, all found"])  # fmt: skip
        two = [scope, scope.replace("comm_d0", "comm_d1")]
        three = two + [scope.replace("comm_d0", "comm_d2")]
        self.assertEqual(symptoms(Outcome("ok", scopes=three), Outcome("ok", scopes=[scope])),
                         ["scopes: fewer scopes than expected"])  # fmt: skip
        self.assertEqual(symptoms(Outcome("ok", scopes=two), Outcome("ok", scopes=[scope])),
                         ["scopes: fewer scopes than expected"])  # fmt: skip
        self.assertEqual(symptoms(ok, Outcome("ok", scopes=two)), ["scopes: more scopes than expected"])
        err = Outcome("error", 7, "alloc 'buf7' has no dispatch coverage")
        self.assertEqual(symptoms(err, Outcome("ok")), ["pypto accepts: alloc '_' has no dispatch coverage"])
        self.assertEqual(symptoms(err, Outcome("error", 7, "x")), [])
        self.assertEqual(symptoms(err, Outcome("error", 0, "x")), [])  # no upstream line: nothing to compare
        moved = Outcome("error", 9, "PyPTO's MaterializeCommDomainScopes rejected the program: ValueError: loop [0, 4)")
        self.assertEqual(symptoms(err, moved), ["pypto rejects: MaterializeCommDomainScopes: ValueError: loop [N, N)"])
        self.assertEqual(symptoms(ok, Outcome("not-dsl")), [])
        finding = Finding("CDS-V001", "view-window", "view 'w2' of 'buf' lacks it", 4, "error")
        warning = Finding("CDS-V006", "call-type", "window call 'w'", 5, "warning")
        got = Outcome("ok", scopes=[scope], findings=[finding, warning, finding])
        self.assertEqual(symptoms(ok, got), ["verifier CDS-V001 view-window: view '_' of '_' lacks it"])


class CampaignTest(unittest.TestCase):
    def test_kinds_that_break_only_a_reference_limit_are_left_out(self):
        kinds = ["dead_alloc", "device_range_too_large", "device_step"]
        self.assertEqual(campaign_kinds(kinds), ["dead_alloc", "device_step"])

    def test_only_the_three_features_pypto_cannot_write_are_left_out(self):
        # docs/pypto.md quotes PyPTO's error for each of these, and for no other.
        self.assertEqual(sorted(PYPTO_REFUSED_FEATURES), ["host_by_type", "opaque_call", "unpack"])
        with open(os.path.join(ROOT, "docs", "pypto.md"), encoding="utf-8") as f:
            doc = f.read()
        for feature in PYPTO_REFUSED_FEATURES:
            self.assertIn(f"| `{feature}` |", doc)

    def test_reach_counts_the_programs_holding_a_feature_and_those_compared(self):
        def program(used, pypto, scopes=("s",)):
            p = Program(1, 4, None, "", "p.pyir")
            p.used = used
            p.reference = Outcome("ok", scopes=["s"])
            p.pypto = Outcome(pypto, scopes=list(scopes))
            return p

        rows = _reach_rows([program(["allgather"], "ok"), program(["allgather", "rebind"], "not-dsl"),
                            program(["allgather"], "ok", scopes=("t",)), program([], "ok")],
                           ["allgather", "rebind", "iter_args"])  # fmt: skip
        self.assertIn("| allgather | 3 | 2 | 67% | 2 | 1 |", rows)
        self.assertIn("| rebind | 1 | 0 | 0% | 0 | 0 |", rows)
        self.assertIn("| iter_args | 0 | 0 | - | 0 | 0 |", rows)


MERGE = os.path.join(ROOT, "ci", "differential-merge.py")


def shard(folder, seeds, symptoms, compared=9):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"pypto": "e2d0f78ae", "seeds": seeds, "programs": 10, "compared": compared, "agreeing": 8,
                   "stopped": False, "seconds": 12.0, "features": {"allgather": [4, 3, 2, 2]},
                   "symptoms": symptoms}, f)  # fmt: skip
    return folder


def symptom(programs, new=False, harness=False, file=None):
    return {"programs": programs, "example": "cds-gen --seed 1", "harness": harness, "file": file, "new": new}


class MergeTest(unittest.TestCase):
    def run_merge(self, *args):
        return subprocess.run([sys.executable, MERGE, *args], capture_output=True, text=True, check=False)

    def test_shards_sum_and_a_symptom_new_in_one_shard_is_new(self):
        with tempfile.TemporaryDirectory() as d:
            a = shard(os.path.join(d, "a"), [1, 10], {"pypto accepts: X": symptom(2, file="x.pyir"),
                                                      "scopes: Y": symptom(1, new=True, file="y.pyir")})  # fmt: skip
            b = shard(os.path.join(d, "b"), [11, 20], {"pypto accepts: X": symptom(3, file="x.pyir"),
                                                       "parser rejects: Z": symptom(5, harness=True)})  # fmt: skip
            r = self.run_merge(a, os.path.join(b, "summary.json"))
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("| 20 | 18 (90.0%) | 16 |", r.stdout)
            self.assertIn("| pypto accepts: X | 5 | `cds-gen --seed 1` | x.pyir |", r.stdout)
            self.assertIn("| scopes: Y | 1 | `cds-gen --seed 1` | y.pyir (new) |", r.stdout)
            self.assertIn("| parser rejects: Z | 5 |", r.stdout)
            self.assertIn("| allgather | 8 | 6 | 75.0% | 4 | 4 |", r.stdout)

    def test_known_symptoms_only_pass(self):
        with tempfile.TemporaryDirectory() as d:
            a = shard(os.path.join(d, "a"), [1, 10], {"pypto accepts: X": symptom(2, file="x.pyir")})
            out = os.path.join(d, "report.md")
            self.assertEqual(self.run_merge(a, "-o", out).returncode, 0)
            with open(out, encoding="utf-8") as f:
                self.assertIn("(0 new)", f.read())

    def test_a_bad_shard_is_a_usage_error_and_keeps_the_output(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "report.md")
            with open(out, "w", encoding="utf-8") as f:
                f.write("old")
            bad = os.path.join(d, "bad.json")
            with open(bad, "w", encoding="utf-8") as f:
                f.write("{")
            r = self.run_merge(bad, "-o", out)
            self.assertEqual(r.returncode, 2)
            self.assertIn("bad.json:1:2: not JSON", r.stderr)
            r = self.run_merge(os.path.join(d, "missing"), "-o", out)
            self.assertEqual(r.returncode, 2)
            self.assertIn("No such file or directory", r.stderr)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(f.read(), "old")

    def test_help_and_usage_errors(self):
        r = self.run_merge("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("Exit codes", r.stdout)
        self.assertEqual(self.run_merge().returncode, 2)
        r = self.run_merge("shard", "--no-such-flag")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--no-such-flag", r.stderr)


def run_bridge(*args, pypto_absent=True):
    env = dict(os.environ)
    if pypto_absent:
        env["PYTHONPATH"] = NO_PYPTO
    return subprocess.run([sys.executable, BRIDGE, *args], capture_output=True, text=True, env=env, check=False)


class ReservedNamesTest(unittest.TestCase):
    """The exporter avoids exactly the names the harness's printer reserves, so an
    exported Var never takes a name the parser refuses or reads as something else."""

    @staticmethod
    def _cpp_list(path, array):
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        m = re.search(array + r"\[\] = \{(.*?)\};", text, re.S)
        if m is None:
            raise AssertionError(f"{path}: no array {array}")
        return set(re.findall(r'"([^"]+)"', m.group(1)))

    def test_the_exporter_reserves_what_the_printer_reserves(self):
        from cds_pypto.export import _RESERVED

        cpp = self._cpp_list("ir/lexer.h", "kPythonKeywords") | self._cpp_list(
            "ir/printer.cc", "kTextFormatNames")
        self.assertIn("await", cpp)
        self.assertEqual(set(_RESERVED), cpp)


class CommandLineTest(unittest.TestCase):
    def test_help_and_usage_errors(self):
        r = run_bridge("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("cds-pypto export PROGRAM.pyir", r.stdout)
        self.assertEqual(run_bridge("export", "--help").returncode, 0)
        self.assertEqual(run_bridge().returncode, 2)
        self.assertEqual(run_bridge("frobnicate").returncode, 2)
        self.assertEqual(run_bridge("export", "a.pyir").returncode, 2)  # no -o
        self.assertEqual(run_bridge("export", "a.pyir", "b.pyir", "-o", "x").returncode, 2)

    def test_without_pypto_export_fails_clearly_and_keeps_the_output(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.pyir")
            with open(out, "w") as f:
                f.write("previous\n")
            prog = os.path.join(d, "p.pyir")
            with open(prog, "w") as f:
                f.write(CALLER_FIRST)
            r = run_bridge("export", prog, "-o", out)
            self.assertEqual(r.returncode, 1)
            self.assertIn("cds-pypto: error: cannot import pypto", r.stderr)
            self.assertIn("PYTHONPATH", r.stderr)
            with open(out) as f:
                self.assertEqual(f.read(), "previous\n")
            v = run_bridge("--version")
            self.assertEqual(v.returncode, 0)
            self.assertIn("pypto: not importable", v.stdout)

    def test_scopes_command_needs_no_pypto(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "d.pyir")
            with open(path, "w") as f:
                f.write(DUMPED)
            r = run_bridge("scopes", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.splitlines()[0], "# EXPECT-SCOPE: a_host comm_d0 devices=[1] slots=w")
            r = run_bridge("scopes", os.path.join(d, "missing.pyir"))
            self.assertEqual(r.returncode, 1)
            self.assertIn("missing.pyir: error: cannot read: No such file or directory", r.stderr)

    def test_a_failed_write_leaves_the_old_file(self):
        from cds_pypto.cli import Failure, write_atomically

        with tempfile.TemporaryDirectory() as d:
            target = os.path.join(d, "sub")
            os.mkdir(target)  # os.replace cannot put a file over a directory
            with self.assertRaises(Failure):
                write_atomically(target, "text")
            self.assertTrue(os.path.isdir(target))
            self.assertEqual(sorted(os.listdir(d)), ["sub"])  # no temporary file left


if __name__ == "__main__":
    unittest.main()
