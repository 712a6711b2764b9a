#!/usr/bin/env python3
"""Merges the shards of a differential campaign into one report.

usage: ci/differential-merge.py SHARD... [-o REPORT.md]

Each SHARD is a folder a `ci/differential.sh --out SHARD` run wrote (its
summary.json), or that summary.json itself. The merged report gives the
programs, the comparisons and the reach of every feature over all shards, and
one row per symptom with its programs summed; a symptom that some shard filed
as new is new. With -o the report goes to that file (an existing one is kept
when the merge fails), otherwise to stdout.

Exit codes: 0 every symptom of PyPTO's passes is a known one; 1 a shard filed a
new one (the nightly workflow fails on it); 2 usage error or an unreadable shard.
"""

import argparse
import json
import os
import sys
import tempfile


def load(path):
    if os.path.isdir(path):
        path = os.path.join(path, "summary.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise SystemExit(f"differential-merge: {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise SystemExit(f"differential-merge: {path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None


def merge(shards):
    total = {"programs": 0, "compared": 0, "agreeing": 0, "seconds": 0.0, "stopped": [], "features": {},
             "symptoms": {}, "seeds": [], "pypto": sorted({s.get("pypto") or "unknown" for s in shards})}  # fmt: skip
    for s in shards:
        for key in ("programs", "compared", "agreeing", "seconds"):
            total[key] += s[key]
        total["seeds"].append(s["seeds"])
        if s["stopped"]:
            total["stopped"].append(s["seeds"])
        for f, counts in s["features"].items():
            t = total["features"].setdefault(f, [0] * len(counts))
            for i, n in enumerate(counts):
                t[i] += n
        for sig, row in s["symptoms"].items():
            t = total["symptoms"].setdefault(sig, dict(row, programs=0, new=False))
            t["programs"] += row["programs"]
            t["new"] = t["new"] or row["new"]
            t["file"] = t.get("file") or row.get("file")
    return total


def report(t):
    pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
    seeds = ", ".join(f"{a}..{b}" for a, b in sorted(t["seeds"]))
    lines = [
        "# Differential campaign (merged shards): PyPTO's passes against the reference pass",
        "",
        f"PyPTO {', '.join(t['pypto'])}; seeds {seeds}; {len(t['seeds'])} shards, {int(t['seconds'])} s of shard time"
        + (f"; stopped by the time box: {', '.join(f'{a}..{b}' for a, b in t['stopped'])}" if t["stopped"] else ""),
        "",
        "| programs | compared | agreeing |",
        "|---:|---:|---:|",
        f"| {t['programs']} | {t['compared']} ({pct(t['compared'], t['programs'])}) | {t['agreeing']} |",
        "",
    ]
    upstream = {s: r for s, r in t["symptoms"].items() if not r["harness"]}
    new = [s for s, r in upstream.items() if r["new"]]
    lines += [f"## Symptoms of PyPTO's passes: {len(upstream)} ({len(new)} new)", ""]
    if upstream:
        lines += ["| symptom | programs | example | corpus/upstream |", "|---|---:|---|---|"]
        for s, r in sorted(upstream.items(), key=lambda kv: -kv[1]["programs"]):
            where = (r.get("file") or "-") + (" (new)" if r["new"] else "")
            lines.append(f"| {s.replace('|', '/')} | {r['programs']} | `{r['example']}` | {where} |")
        lines.append("")
    harness = {s: r for s, r in t["symptoms"].items() if r["harness"]}
    if harness:
        lines += [f"## On the harness's side: {len(harness)} (not filed)", "", "| symptom | programs | example |",
                  "|---|---:|---|"]  # fmt: skip
        for s, r in sorted(harness.items(), key=lambda kv: -kv[1]["programs"]):
            lines.append(f"| {s.replace('|', '/')} | {r['programs']} | `{r['example']}` |")
        lines.append("")
    lines += ["## Reach by feature", "", "| feature | programs | compared | share | both accept | same scopes |",
              "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for f, (holding, compared, both_ok, same) in t["features"].items():
        lines.append(f"| {f} | {holding} | {compared} | {pct(compared, holding)} | {both_ok} | {same} |")
    return "\n".join(lines) + "\n", bool(new)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="differential-merge.py",
        description="Merge the shards of a differential campaign (ci/differential.sh --out DIR) into one report.",
        epilog="Exit codes: 0 no new symptom; 1 a shard filed a new symptom; 2 usage error or unreadable shard.",
    )
    parser.add_argument("shards", nargs="+", metavar="SHARD", help="a shard's --out folder, or its summary.json")
    parser.add_argument("-o", "--output", help="write the merged report here (default: stdout)")
    args = parser.parse_args(argv)
    try:
        text, new = report(merge([load(p) for p in args.shards]))
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError) as e:
        print(f"differential-merge: a shard's summary.json lacks a field or has a wrong one: {e}", file=sys.stderr)
        return 2
    if args.output:
        folder = os.path.dirname(os.path.abspath(args.output))
        try:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".merge-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, args.output)
        except OSError as e:
            print(f"differential-merge: {args.output}: {e.strerror}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
