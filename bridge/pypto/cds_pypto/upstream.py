"""Everything that touches PyPTO: importing it, parsing, running its passes.

Importing this module imports `pypto`; an ImportError here means PyPTO is not
available (the caller reports it).
"""

import os
import re
import subprocess

import pypto
import pypto.language as pl
from pypto.ir.pass_manager import OptimizationStrategy, PassManager
from pypto.pypto_core import DataType, ir

from . import VERSION
from .cli import Failure
from .export import Exporter, NotExportable, dtype_names

_DTYPES = dtype_names(DataType)

_pipeline = None


def _default_pipeline():
    global _pipeline
    if _pipeline is None:
        _pipeline = list(PassManager.get_strategy(OptimizationStrategy.Default).passes)
    return _pipeline


def pipeline_pass_names():
    return [p.get_name() for p in _default_pipeline()]


def pypto_version():
    return getattr(pypto, "__version__", "(no version)")


def pypto_location():
    return os.path.dirname(os.path.abspath(pypto.__file__))


def pypto_commit():
    """The commit of the PyPTO checkout the package was imported from."""
    try:
        out = subprocess.run(
            ["git", "-C", pypto_location(), "rev-parse", "--short=9", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


_LOCATION = re.compile(r"(?P<file>[^\s:'\"\[\]()]+):(?P<line>[0-9]+):(?P<col>[0-9]+)")


def _rejection(source, exc, stage):
    """A Failure for an error PyPTO's `stage` raised, at its position in the source file."""
    line = col = 0
    span = getattr(exc, "span", None)
    if isinstance(span, dict):
        line, col = span.get("line") or 0, span.get("column") or 0
    elif span is not None and hasattr(span, "begin_line"):
        line, col = span.begin_line, span.begin_column
    text = str(exc)
    if not line:
        for m in _LOCATION.finditer(text):
            if m.group("file") == source.path:
                line, col = int(m.group("line")), int(m.group("col"))
                break
    message = getattr(exc, "message", None) or text
    message = " ".join(message.strip().splitlines()[:1]) if message.strip() else type(exc).__name__
    return Failure(
        "rejected",
        f"PyPTO's {stage} rejected the program: {type(exc).__name__}: {message}",
        source.path,
        source.original_line(line),
        col,
    )


def export(source, pass_names):
    passes_by_name = {p.get_name(): p for p in _default_pipeline()}
    try:
        program = pl.parse(source.pypto_text, filename=source.path)
    except Exception as e:  # noqa: BLE001 (every parser error is a rejection of the input)
        raise _rejection(source, e, "parser") from None
    if not isinstance(program, ir.Program):
        raise Failure("not-dsl", "expected a @pl.program class", source.path)
    before = program
    for name in pass_names:
        try:
            program = passes_by_name[name](program)
        except Exception as e:  # noqa: BLE001
            raise _rejection(source, e, name) from None
    header = [
        f"# Exported by cds-pypto {VERSION} from {source.path}: PyPTO {pypto_commit()}, "
        f"passes {','.join(pass_names)}.",
        "# `# line N` gives each statement's line in that file.",
    ]
    try:
        return Exporter(ir, _DTYPES, source, before, program, header).export()
    except NotExportable as e:
        raise Failure(
            "not-exportable",
            f"PyPTO's result holds {e.describe()}, which the .pyir text format lacks",
            source.path,
            e.line,
            e.column,
        ) from None
