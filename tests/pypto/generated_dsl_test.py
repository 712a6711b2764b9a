#!/usr/bin/env python3
"""The generator writes PyPTO's DSL (docs/pypto.md): programs of the campaign's
default features and invalid kinds go through a short differential campaign, and
PyPTO's parser must refuse none of them. Without an importable PyPTO the test exits
77, which CTest reports as skipped."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIFFERENTIAL = os.path.join(ROOT, "bridge", "pypto", "differential.py")
BRIDGE = os.path.join(ROOT, "bridge", "pypto", "cds-pypto")
sys.path.insert(0, os.path.join(ROOT, "bridge", "pypto"))

from cds_pypto.outcome import FRONT_END  # noqa: E402

SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True, help="the build folder holding the harness tools")
    ap.add_argument("-n", type=int, default=150)
    args = ap.parse_args()
    version = subprocess.run([sys.executable, BRIDGE, "--version"], capture_output=True, text=True, check=False)
    if version.returncode != 0 or "(commit " not in version.stdout:
        print(f"SKIPPED: pypto is not importable: {version.stdout.strip()} {version.stderr.strip()}")
        return SKIP
    with tempfile.TemporaryDirectory() as work:
        # New symptoms are filed into a copy: this test judges the generator, not PyPTO.
        upstream = os.path.join(work, "upstream")
        shutil.copytree(os.path.join(ROOT, "corpus", "upstream"), upstream)
        out = os.path.join(work, "out")
        run = subprocess.run([sys.executable, DIFFERENTIAL, "run", "--build", args.build, "-n", str(args.n),
                              "--seed", "500001", "--no-reduce", "--out", out, "--upstream-dir", upstream],
                             capture_output=True, text=True, check=False)  # fmt: skip
        if run.returncode not in (0, 1):
            print(run.stdout[-4000:], run.stderr[-4000:])
            return 1
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
    refused = {s: r for s, r in summary["symptoms"].items() if s.startswith(f"{FRONT_END}:")}
    print(f"{summary['programs']} programs, {summary['compared']} compared by both passes")
    for s, r in refused.items():
        print(f"FAIL PyPTO's parser refuses generated text ({r['programs']} programs, e.g. {r['example']}): {s}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
