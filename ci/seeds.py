#!/usr/bin/env python3
"""Assembles a fuzz target's seed corpus from the repository's corpora.

  ci/seeds.py TARGET DIR     write TARGET's seed inputs into DIR (created if needed;
                             files of the same name are replaced, others kept)
  ci/seeds.py --dict TARGET  print the path of TARGET's dictionary (nothing if none)
  ci/seeds.py --targets      print the targets that have seeds, one per line

The text targets, fuzz_parse and fuzz_text_mutate, share one seed set: every
program of corpus/real/ and corpus/regressions/, every .pyir of tests/lit/ (split
at its `# -----` lines, one seed per part), and corpus/text/ (generated programs
that no corpus holds). The corpora are copied when a campaign or the
ClusterFuzzLite build starts, so a seed is never a second committed copy of a
corpus program. A seed's name is its path with `/` written `__`, and `__NN` for
the part of a split file. fuzz_pipeline's seeds are the byte strings of
corpus/fuzz_pipeline/.

Exit codes: 0 done; 1 a corpus file cannot be read or DIR cannot be written (the
system's reason is printed); 2 usage error (an unknown target).
"""
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (folder, pattern, how a seed is named and cut): "path" names it by its path and
# keeps it whole, "split" by its path and one seed per `# -----` part, "own" keeps
# its file name (the folder holds seeds and nothing else).
TEXT_SEEDS = {
    "sources": [("corpus/real", "*.pyir", "path"), ("corpus/regressions", "*.pyir", "path"),
                ("tests/lit", "**/*.pyir", "split"), ("corpus/text", "*", "own")],
    "dict": "corpus/text.dict",
}
TARGETS = {
    "fuzz_parse": TEXT_SEEDS,
    "fuzz_text_mutate": TEXT_SEEDS,
    "fuzz_pipeline": {"sources": [("corpus/fuzz_pipeline", "*", "own")], "dict": None},
}
SPLIT_MARKER = "# -----"


def fail(message, code):
    print(f"seeds: {message}", file=sys.stderr)
    sys.exit(code)


def target_or_exit(name):
    if name not in TARGETS:
        fail(f"no seeds for target '{name}' (known: {', '.join(sorted(TARGETS))}; try --help)", 2)
    return TARGETS[name]


def seeds_of(spec):
    """(name, bytes) for every seed of `spec`, in a stable order."""
    for folder, pattern, form in spec["sources"]:
        for path in sorted(glob.glob(os.path.join(ROOT, folder, pattern), recursive=True)):
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            if form == "own":
                yield os.path.basename(path), data
                continue
            stem = os.path.relpath(path, ROOT).replace(os.sep, "__")
            lines = data.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
            if form != "split" or not any(l.startswith(SPLIT_MARKER) for l in lines):
                yield stem, data
                continue
            parts, current = [], []
            for line in lines:
                if line.startswith(SPLIT_MARKER):
                    parts.append(current)
                    current = []
                else:
                    current.append(line)
            parts.append(current)
            base = stem[:-len(".pyir")] if stem.endswith(".pyir") else stem
            for i, part in enumerate(parts):
                yield f"{base}__{i:02d}.pyir", "".join(part).encode("utf-8", errors="surrogateescape")


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if argv == ["--targets"]:
        print("\n".join(sorted(TARGETS)))
        return 0
    if len(argv) == 2 and argv[0] == "--dict":
        spec = target_or_exit(argv[1])
        if spec["dict"]:
            print(os.path.join(ROOT, spec["dict"]))
        return 0
    if len(argv) != 2 or argv[0].startswith("-"):
        fail("expected 'TARGET DIR', '--dict TARGET' or '--targets' (try --help)", 2)
    spec = target_or_exit(argv[0])
    out = argv[1]
    count = 0
    try:
        os.makedirs(out, exist_ok=True)
        for name, data in seeds_of(spec):
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
            count += 1
    except OSError as e:
        fail(f"{e.filename}: {e.strerror}", 1)
    print(f"seeds: {count} seed(s) of {argv[0]} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
