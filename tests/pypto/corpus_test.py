#!/usr/bin/env python3
"""PyPTO through the bridge on a corpus folder, end to end (ctest label `pypto`).

Every program is exported with `cds-pypto export`; each export must be read back
by the harness (`cds-opt --verify-only --contract=pypto`). PyPTO's outcome is
compared with the reference pass's (`cds-opt --default-pipeline`, which the corpus
tests hold to the files' headers) exactly as ci/differential.sh compares them.
Each symptom (PyPTO accepts or rejects otherwise, another error line, other
scopes, verifier errors on the export) must be listed in KNOWN
(`FILE | SYMPTOM | corpus/upstream/REPRODUCER or a reason`), and every listed
one must still show, so the list follows upstream. For corpus/upstream itself
(--upstream), each `# SYMPTOM:` of a file must show while its `# STATUS:` says
open. Without an importable PyPTO the test exits 77, which CTest reports as
skipped (SKIP_RETURN_CODE), never as passed.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bridge", "pypto"))

from cds_pypto.outcome import bridge_outcomes, export_outcome, reference_outcome, symptoms  # noqa: E402

SKIP = 77


def header_values(text, key):
    values = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(f"# {key}: "):
            values.append(line[len(f"# {key}: ") :])
    return values


def header_value(text, key):
    values = header_values(text, key)
    return values[0] if values else None


def read_known(path):
    known = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 3:
                sys.exit(f"{path}:{n}: expected `FILE | SYMPTOM | REPRODUCER or REASON`")
            if parts[2].endswith(".pyir") and not os.path.exists(os.path.join(ROOT, parts[2])):
                sys.exit(f"{path}:{n}: no reproducer {parts[2]}")
            known.setdefault(parts[0], {})[parts[1]] = parts[2]
    return known


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bridge", required=True)
    ap.add_argument("--cds-opt", required=True)
    ap.add_argument("--known")
    ap.add_argument("--upstream", action="store_true")
    ap.add_argument("folder")
    args = ap.parse_args()

    version = subprocess.run([sys.executable, args.bridge, "--version"], capture_output=True, text=True, check=False)
    if version.returncode != 0 or "(commit " not in version.stdout:
        print(f"SKIPPED: pypto is not importable: {version.stdout.strip()} {version.stderr.strip()}")
        print("Put a PyPTO build's python/ folder on PYTHONPATH to run this test (docs/pypto.md).")
        return SKIP
    print(version.stdout.strip())

    files = sorted(os.path.join(args.folder, f) for f in os.listdir(args.folder) if f.endswith(".pyir"))
    texts = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            texts[path] = f.read()
    groups = {}  # bridge arguments -> files
    for path in files:
        extra = header_value(texts[path], "BRIDGE-ARGS") if args.upstream else None
        groups.setdefault(tuple(extra.split()) if extra else (), []).append(path)

    known = read_known(args.known) if args.known else {}
    work = tempfile.mkdtemp(prefix="cds-pypto-test-")
    failures, counts = [], {}
    try:
        for pass_args, paths in groups.items():
            out_dir = os.path.join(work, str(len(os.listdir(work))))
            os.mkdir(out_dir)
            results = bridge_outcomes(args.bridge, paths, out_dir, list(pass_args))
            for path in paths:
                rel = os.path.relpath(path, ROOT)
                export = os.path.join(out_dir, os.path.basename(path))
                got = export_outcome(results[path], args.cds_opt, export)
                counts[got.status] = counts.get(got.status, 0) + 1
                reference = reference_outcome(args.cds_opt, path, os.path.join(work, "reference.pyir"))
                seen = symptoms(reference, got)
                if args.upstream:
                    status = header_value(texts[path], "STATUS") or ""
                    wanted = header_values(texts[path], "SYMPTOM")
                    if not wanted:
                        failures.append(f"{rel}: no # SYMPTOM: line")
                    for want in wanted if status.startswith("open") else []:
                        if want not in seen:
                            failures.append(f"{rel}: its symptom no longer shows (fixed upstream? update STATUS)\n"
                                            f"    SYMPTOM: {want}\n    seen: {seen}")  # fmt: skip
                    print(f"{rel}: {got.status}; symptoms: {seen}")
                    continue
                listed = known.get(rel, {})
                for s in seen:
                    if s not in listed:
                        failures.append(f"{rel}: unexpected departure from its header: {s}"
                                        + (f" ({got.message})" if got.message else ""))  # fmt: skip
                for s, repro in listed.items():
                    if s not in seen:
                        failures.append(f"{rel}: listed departure not seen any more: {s} ({repro})")
                note = "; ".join(f"{s} -> {listed[s]}" for s in seen if s in listed)
                print(f"{rel}: {got.status}" + (f": {got.message}" if got.status != "ok" and got.message else "")
                      + (f" [known: {note}]" if note else ""))  # fmt: skip
        for rel in known:
            if not os.path.exists(os.path.join(ROOT, rel)):
                failures.append(f"{args.known}: lists {rel}, which does not exist")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(files)} programs: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
