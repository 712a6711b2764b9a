#!/usr/bin/env bash
# Fails when the repository's text narrates its own development instead of
# describing the product: diary headings and their dating words, and build
# folders that no preset or script of the repository makes.
#
#   ci/doc-check.sh [--root DIR]
#
#   --root DIR  check the tree at DIR instead of this repository (the probe test
#               points it at a tree that must fail)
#
# Scanned: README.md and docs/*.md whole; source comments under ir/ pass/
# verifier/ fuzz/ tools/ driver/ bench/ ci/ tests/ bridge/ (every line of .h, .cc,
# .py, .sh, .cmake, CMakeLists.txt and the '#' lines of .pyir files).
# Rejected:
#   - "<ordinal> session", "session <n>", "<word> round (", "(issue <n>",
#     "issue-<n>", "Current figures (": the words diary headings date their text with;
#   - a calendar date (YYYY-MM-DD), except in a table row of docs/benchmarks.md,
#     where the date says when the figures were measured;
#   - build/<name> where <name> is not a CMake preset and not a folder a script in
#     ci/ or bench/ creates.
# Exit codes: 0 clean, 1 findings (each printed as FILE:LINE: reason: text),
# 2 usage error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
while (($#)); do
  case "$1" in
    --root)
      [[ $# -ge 2 ]] || { echo "doc-check.sh: --root needs a directory" >&2; exit 2; }
      ROOT=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "doc-check.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[[ -d $ROOT ]] || { echo "doc-check.sh: '$ROOT' is not a directory" >&2; exit 2; }
cd "$ROOT"

python3 - <<'EOF'
import json, os, re, sys

ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
            "eleventh|twelfth|last|previous|earlier|next")
DIARY = [
    (re.compile(rf"\b({ORDINALS}) sessions?\b", re.I), "a session is dated"),
    (re.compile(r"\bsessions? [0-9]+\b", re.I), "a session is dated"),
    (re.compile(r"\b\w+ round \(", re.I), "a round of work is dated"),
    (re.compile(r"\(issue [0-9]+", re.I), "a change is dated by its issue"),
    (re.compile(r"\bissue-[0-9]+\b", re.I), "a change is dated by its issue"),
    (re.compile(r"Current figures \(", re.I), "figures are dated by session"),
]
DATE = re.compile(r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b")
BUILD = re.compile(r"\bbuild/([A-Za-z0-9_.-]+)")

def allowed_build_dirs():
    names = set()
    try:
        presets = json.load(open("CMakePresets.json"))
        names |= {p["name"] for p in presets.get("configurePresets", [])}
    except (OSError, ValueError):
        pass
    for d in ("ci", "bench"):
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            p = os.path.join(d, f)
            if os.path.isfile(p) and f.endswith(".sh"):
                text = open(p, encoding="utf-8", errors="replace").read()
                names |= {n.rstrip(".") for n in BUILD.findall(text)}
    return names

def files():
    if os.path.isfile("README.md"):
        yield "README.md", False
    if os.path.isdir("docs"):
        for f in sorted(os.listdir("docs")):
            if f.endswith(".md"):
                yield os.path.join("docs", f), False
    exts = (".h", ".cc", ".py", ".sh", ".cmake", ".in")
    for top in ("ir", "pass", "verifier", "fuzz", "tools", "driver", "bench", "ci", "tests", "bridge"):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for f in sorted(filenames):
                p = os.path.join(dirpath, f)
                if f.endswith(exts) or f == "CMakeLists.txt":
                    yield p, False
                elif f.endswith(".pyir"):
                    yield p, True

builds = allowed_build_dirs()
findings = 0
for path, comments_only in files():
    if path in ("ci/doc-check.sh", "tests/docs/doc_check_probe.sh"):
        continue  # they spell out the patterns rejected here
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        print(f"{path}: cannot read: {e.strerror}", file=sys.stderr)
        findings += 1
        continue
    for n, line in enumerate(lines, 1):
        if comments_only and not line.lstrip().startswith("#"):
            continue
        for rx, why in DIARY:
            if rx.search(line):
                print(f"{path}:{n}: {why}: {line.strip()}")
                findings += 1
        if DATE.search(line) and not (path == "docs/benchmarks.md" and line.lstrip().startswith("|")):
            print(f"{path}:{n}: a date of work: {line.strip()}")
            findings += 1
        for name in BUILD.findall(line):
            name = name.rstrip(".")  # a sentence's full stop
            # A script's folder named with a suffix (build/bug-hunt-fuzz-$K) allows its prefix.
            if name not in builds and not any(name.startswith(b) for b in builds if b.endswith("-")):
                print(f"{path}:{n}: build/{name} is no preset's or script's folder: {line.strip()}")
                findings += 1
print(f"doc-check: {findings} finding{'s' if findings != 1 else ''}")
sys.exit(1 if findings else 0)
EOF
