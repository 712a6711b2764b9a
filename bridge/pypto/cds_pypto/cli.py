"""cds-pypto: runs PyPTO's own passes on a `.pyir` program and writes the result in
the harness's `pl._dump` form, for the harness's verifier to judge (docs/pypto.md).

Exit codes: 0 success; 1 the input has a problem (PyPTO rejects it, it is not
PyPTO DSL, PyPTO's result holds a construct the text format lacks, an I/O error)
or PyPTO cannot be imported; 2 usage error.
"""

import argparse
import os
import sys
import tempfile

from . import VERSION
from .scopes import ScopeError, scope_lines
from .source import PreparedSource, SourceError

PROG = "cds-pypto"
DEFAULT_PASSES = ("SynthesizeAllReduceSignals", "MaterializeCommDomainScopes")
FIRST_PASS = DEFAULT_PASSES[0]

USAGE = f"""\
{PROG} export PROGRAM.pyir [--passes LIST | --until PASS] -o OUT.pyir
{PROG} export --out-dir DIR [--passes LIST | --until PASS] PROGRAM.pyir...
{PROG} passes
{PROG} scopes FILE.pyir
{PROG} --version | --help"""

DESCRIPTION = """\
export   parse PROGRAM with PyPTO, run PyPTO's passes and write the result in the
         pl._dump form (docs/text-format.md) to OUT (or, with --out-dir, each
         program to DIR/<its file name>, with one status line per program on
         stdout). Default passes: SynthesizeAllReduceSignals,MaterializeCommDomainScopes.
         --passes LIST: PyPTO pass names, comma-separated, run in that order on the
         parsed program. --until PASS: the passes of PyPTO's default pipeline from
         SynthesizeAllReduceSignals through PASS.
passes   list the pass names of PyPTO's default pipeline that --passes and
         --until accept, in pipeline order.
scopes   print the comm-domain scopes of a program in the pl._dump form as
         `# EXPECT-SCOPE:` lines (docs/corpus.md); needs no PyPTO.

PyPTO is imported from the Python path (PYTHONPATH may name the python/ folder of
a PyPTO build); run the bridge with the Python PyPTO was built for.
Exit codes: 0 success; 1 the input has a problem (PyPTO rejects it, it is not
PyPTO DSL, PyPTO's result holds a construct the .pyir format lacks) or PyPTO
cannot be imported; 2 usage error."""


class Failure(Exception):
    """A failure of one program: printed as one diagnostic, exit code 1."""

    def __init__(self, kind, message, path=None, line=0, column=0):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def location(self):
        if not self.path:
            return PROG
        if self.line:
            return f"{self.path}:{self.line}:{self.column or 1}"
        return self.path


# Status words of batch mode, one per kind of Failure (docs/pypto.md).
KINDS = {
    "rejected": "REJECTED",  # PyPTO's parser or a pass raised an error
    "not-dsl": "NOT-DSL",  # the input is not PyPTO DSL (pl._dump forms, not Python)
    "not-exportable": "NOT-EXPORTABLE",  # PyPTO's result has a construct .pyir lacks
    "io": "IO-ERROR",
}


def _usage_error(message):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    print(f"usage:\n{USAGE}", file=sys.stderr)
    sys.exit(2)


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise Failure("io", f"cannot read: {e.strerror}", path) from None
    except UnicodeDecodeError as e:
        raise Failure("io", f"not UTF-8 text ({e.reason} at byte {e.start})", path) from None


def write_atomically(path, text):
    """Write `text` to `path` through a temporary file beside it, so a failed run
    leaves an existing file as it was."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".cds-pypto-", dir=directory)
    except OSError as e:
        raise Failure("io", f"cannot write: {e.strerror}", path) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise Failure("io", f"cannot write: {e.strerror}", path) from None


def _import_pypto():
    from . import upstream  # noqa: PLC0415 (imports pypto)

    return upstream


def _load_upstream():
    try:
        return _import_pypto()
    except ImportError as e:
        print(
            f"{PROG}: error: cannot import pypto ({e}); install PyPTO as docs/pypto.md says, or set "
            "PYTHONPATH to the python/ folder of a PyPTO build",
            file=sys.stderr,
        )
        sys.exit(1)


def _pass_list(upstream, args):
    pipeline = upstream.pipeline_pass_names()
    if args.passes is not None and args.until is not None:
        _usage_error("--passes and --until cannot be combined")
    if args.until is not None:
        if args.until not in pipeline:
            _usage_error(f"unknown pass '{args.until}' (known passes: {', '.join(pipeline)})")
        first = pipeline.index(FIRST_PASS)
        if args.until not in pipeline[first:]:
            _usage_error(f"--until {args.until}: that pass does not run after {FIRST_PASS}")
        return pipeline[first : pipeline.index(args.until, first) + 1]
    if args.passes is not None:
        names = [n.strip() for n in args.passes.split(",") if n.strip()]
        for n in names:
            if n not in pipeline:
                _usage_error(f"unknown pass '{n}' (known passes: {', '.join(pipeline)})")
        return names
    return list(DEFAULT_PASSES)


def export_one(upstream, path, passes):
    """The exported text of one program; raises Failure."""
    text = _read(path)
    try:
        source = PreparedSource(path, text)
    except SourceError as e:
        raise Failure("not-dsl", e.message, path, e.line, e.column) from None
    return upstream.export(source, passes)


def _print_failure(f):
    print(f"{f.location()}: error: {f.message}", file=sys.stderr)


def cmd_export(args):
    if args.out_dir is None and args.output is None:
        _usage_error("export needs -o OUT (or --out-dir DIR)")
    if args.out_dir is None and len(args.programs) != 1:
        _usage_error("-o takes exactly one PROGRAM (use --out-dir for several)")
    if args.out_dir is not None and args.output is not None:
        _usage_error("-o and --out-dir cannot be combined")
    upstream = _load_upstream()
    passes = _pass_list(upstream, args)
    if args.output is not None:
        try:
            write_atomically(args.output, export_one(upstream, args.programs[0], passes))
        except Failure as f:
            _print_failure(f)
            return 1
        return 0
    if not os.path.isdir(args.out_dir):
        _usage_error(f"--out-dir {args.out_dir}: not a directory")
    failed = 0
    for path in args.programs:
        out = os.path.join(args.out_dir, os.path.basename(path))
        try:
            write_atomically(out, export_one(upstream, path, passes))
            print(f"OK {path}", flush=True)
        except Failure as f:
            failed += 1
            print(f"{KINDS[f.kind]} {f.location()}: {f.message}", flush=True)
    return 1 if failed else 0


def cmd_passes(_args):
    upstream = _load_upstream()
    for name in upstream.pipeline_pass_names():
        print(name)
    return 0


def cmd_scopes(args):
    try:
        text = _read(args.file)
        for line in scope_lines(text):
            print(line)
    except Failure as f:
        _print_failure(f)
        return 1
    except ScopeError as e:
        print(f"{args.file}:{e.line}: error: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_version():
    print(f"{PROG} {VERSION}")
    try:
        upstream = _import_pypto()
    except ImportError as e:
        print(f"pypto: not importable ({e})")
        return 0
    print(f"pypto {upstream.pypto_version()} at {upstream.pypto_location()} (commit {upstream.pypto_commit()})")
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        _usage_error(message)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        if not argv:
            _usage_error("missing command")
        print(f"usage:\n{USAGE}\n\n{DESCRIPTION}")
        return 0
    if argv[0] == "--version":
        return cmd_version()
    command, rest = argv[0], argv[1:]
    parser = _Parser(prog=f"{PROG} {command}", add_help=True)
    if command == "export":
        parser.add_argument("programs", nargs="+", metavar="PROGRAM.pyir")
        parser.add_argument("-o", dest="output", metavar="OUT.pyir")
        parser.add_argument("--out-dir", metavar="DIR")
        parser.add_argument("--passes", metavar="LIST")
        parser.add_argument("--until", metavar="PASS")
        return cmd_export(parser.parse_args(rest))
    if command == "passes":
        return cmd_passes(parser.parse_args(rest))
    if command == "scopes":
        parser.add_argument("file", metavar="FILE.pyir")
        return cmd_scopes(parser.parse_args(rest))
    _usage_error(f"unknown command '{command}'")
    return 2
