#!/usr/bin/env python3
"""What a failure of a prop_test test means, by the list in tests/prop/verdicts.txt.

  ci/prop-verdict.py classify LIST LOG   the test that failed (or crashed) in one
                                         prop_test run's output, and its class
  ci/prop-verdict.py check LIST BINARY   every test BINARY lists is in exactly one
                                         class, and every pattern names some test

LIST holds lines `CLASS PATTERN` (`#` starts a comment). CLASS is `oracle` (the test
judges the pass's output: its failure is a finding of the pass) or `harness` (the
test judges the harness itself, its budgets and timing: its failure is a fault of
the harness). PATTERN is a gtest name, `*` matching any run of characters.

classify prints `oracle NAME`, `harness NAME`, or `unlisted NAME` (a test the list
does not name), for the first test whose `[  FAILED  ]` line the log holds, or else
the test that was running when the log ends (a crash); nothing when no test failed.
ci/bug-hunt.sh credits prop_test with a finding only for `oracle`.

Exit codes: 0 done (check: the list and the binary agree); 1 the list is malformed,
or check found a test in no class or in both, or a pattern naming no test (each
reported as LIST:LINE or by test name); 2 usage error, or a file or the binary
cannot be read or run.
"""
import fnmatch
import re
import subprocess
import sys

CLASSES = ("oracle", "harness")


def usage_error(message):
    print(f"prop-verdict: {message} (try --help)", file=sys.stderr)
    sys.exit(2)


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        print(f"prop-verdict: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)


def read_list(path):
    """[(class, pattern, line number)]; exits 1 on a malformed line."""
    entries, bad = [], False
    for number, line in enumerate(read_text(path).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or parts[0] not in CLASSES:
            print(f"{path}:{number}:1: expected 'oracle PATTERN' or 'harness PATTERN'",
                  file=sys.stderr)
            bad = True
            continue
        entries.append((parts[0], parts[1], number))
    if bad:
        sys.exit(1)
    return entries


def classes_of(name, entries):
    return sorted({c for c, pattern, _ in entries if fnmatch.fnmatchcase(name, pattern)})


TEST_NAME = r"([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z0-9_/]+)"


def failed_test(log):
    failed = re.search(r"^\[  FAILED  \] " + TEST_NAME, log, re.M)
    if failed:
        return failed.group(1)
    running = None
    for m in re.finditer(r"^\[( RUN      |       OK |  SKIPPED )\] " + TEST_NAME, log, re.M):
        running = m.group(2) if m.group(1) == " RUN      " else None
    return running


def classify(list_path, log_path):
    entries = read_list(list_path)
    name = failed_test(read_text(log_path))
    if name is None:
        return 0
    found = classes_of(name, entries)
    print(f"{found[0] if len(found) == 1 else 'unlisted'} {name}")
    return 0


def check(list_path, binary):
    entries = read_list(list_path)
    try:
        listing = subprocess.run([binary, "--gtest_list_tests"], capture_output=True, text=True,
                                 check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"prop-verdict: cannot list the tests of {binary}: {e}", file=sys.stderr)
        return 2
    tests, suite = [], None
    for line in listing.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        else:
            tests.append(suite + line.split("#")[0].strip())
    problems = 0
    for name in tests:
        found = classes_of(name, entries)
        if len(found) != 1:
            what = "in no class" if not found else "in both classes"
            print(f"{list_path}: {name} is {what}; a test of prop_test is an oracle or a "
                  f"harness test", file=sys.stderr)
            problems += 1
    for c, pattern, number in entries:
        if not any(fnmatch.fnmatchcase(name, pattern) for name in tests):
            print(f"{list_path}:{number}:1: {c} {pattern} names no test of {binary}",
                  file=sys.stderr)
            problems += 1
    if problems:
        return 1
    counts = {c: sum(1 for n in tests if classes_of(n, entries) == [c]) for c in CLASSES}
    print(f"prop-verdict: {len(tests)} tests: {counts['oracle']} oracle, "
          f"{counts['harness']} harness")
    return 0


def main(argv):
    if len(argv) >= 1 and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 3 or argv[0] not in ("classify", "check"):
        usage_error("expected 'classify LIST LOG' or 'check LIST BINARY'")
    return (classify if argv[0] == "classify" else check)(argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
