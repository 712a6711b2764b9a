"""The `.pyir` source as PyPTO's parser needs it.

A `.pyir` program is PyPTO DSL text, with two differences that matter here:
PyPTO's `@pl.program` parses methods in class order and a call needs its
callee's return type, so a caller must come after its callees (the harness's
parser has no such rule); and the `pl._dump` extension is the harness's own.
`PreparedSource` moves whole method blocks (decorators to the line before the
next method) so callees come first, keeps each line's text unchanged, and maps
every line of the reordered text back to its line in the file, so a span PyPTO
reports can be translated back without losing its column.
"""

import ast
from dataclasses import dataclass, field


class SourceError(Exception):
    """A problem of the input text, with its 1-based position."""

    def __init__(self, message, line=0, column=0):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass
class Method:
    name: str
    first_line: int  # 1-based: the first decorator (or `def`) line
    end_line: int  # 1-based, inclusive: the last line of the body
    block_end: int  # 1-based, inclusive: the line before the next method
    callees: list = field(default_factory=list)


def _is_pl_attr(node, *names):
    """True for `pl.<names...>` written as an attribute chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    parts.append(node.id)
    return list(reversed(parts)) == ["pl", *names]


def _decorated_with(node, node_type, decorator):
    """True for a `node_type` node decorated with `@pl.<decorator>` (called or not)."""
    if not isinstance(node, node_type):
        return False
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if _is_pl_attr(target, decorator):
            return True
    return False


def _is_program_class(node):
    return _decorated_with(node, ast.ClassDef, "program")


def _is_pl_function(node):
    return _decorated_with(node, ast.FunctionDef, "function")


def _self_callees(func, names):
    found = []
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
            and node.func.attr in names
            and node.func.attr not in found
        ):
            found.append(node.func.attr)
    return found


def _first_dump_use(tree):
    """The first `pl._dump.*` node of the program, or None."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_pl_attr(node.value, "_dump"):
            return node
    return None


class PreparedSource:
    """One `.pyir` file: its text, its methods, and the text handed to PyPTO."""

    def __init__(self, path, text):
        self.path = path
        self.text = text
        self.lines = text.splitlines(keepends=True)
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as e:
            raise SourceError(f"not Python syntax: {e.msg}", e.lineno or 0, e.offset or 0) from None
        classes = [n for n in tree.body if _is_program_class(n)]
        if len(classes) != 1:
            raise SourceError(f"expected exactly one @pl.program class, found {len(classes)}")
        dump = _first_dump_use(tree)
        if dump is not None:
            raise SourceError(
                f"the program uses pl._dump.{dump.attr}, a form of the harness's text format that "
                "PyPTO's DSL lacks",
                dump.lineno,
                dump.col_offset + 1,
            )
        self.program_class = classes[0]
        self.module_assignments = [
            n for n in tree.body if isinstance(n, ast.Assign) and n.lineno < self.program_class.lineno
        ]
        self.dynamic_dims = {}  # name given to pl.dynamic -> the module-level name bound to it
        for n in self.module_assignments:
            v = n.value
            if (
                len(n.targets) == 1
                and isinstance(n.targets[0], ast.Name)
                and isinstance(v, ast.Call)
                and _is_pl_attr(v.func, "dynamic")
                and v.args
                and isinstance(v.args[0], ast.Constant)
                and isinstance(v.args[0].value, str)
            ):
                self.dynamic_dims[v.args[0].value] = n.targets[0].id
        defs = [n for n in self.program_class.body if _is_pl_function(n)]
        names = {d.name for d in defs}
        self.methods = []
        for i, d in enumerate(defs):
            first = min([d.lineno] + [x.lineno for x in d.decorator_list])
            if i + 1 < len(defs):
                nxt = defs[i + 1]
                block_end = min([nxt.lineno] + [x.lineno for x in nxt.decorator_list]) - 1
            else:
                block_end = self.program_class.end_lineno
            self.methods.append(Method(d.name, first, d.end_lineno, block_end, _self_callees(d, names)))
        self.method_by_name = {m.name: m for m in self.methods}
        self._reorder()

    def _callees_first(self):
        order, state = [], {}

        def visit(m):
            if state.get(m.name) is not None:
                return  # done, or on the stack (recursion: PyPTO reports it)
            state[m.name] = "open"
            for c in m.callees:
                visit(self.method_by_name[c])
            state[m.name] = "done"
            order.append(m)

        for m in self.methods:
            visit(m)
        return order

    def _reorder(self):
        order = self._callees_first()
        if not self.methods or order == self.methods:
            self.pypto_text = self.text
            self.line_map = None
            return
        head_end = self.methods[0].first_line - 1
        out_lines = list(range(1, head_end + 1))
        for m in order:
            out_lines.extend(range(m.first_line, m.block_end + 1))
        out_lines.extend(range(self.methods[-1].block_end + 1, len(self.lines) + 1))
        self.pypto_text = "".join(self.lines[n - 1] for n in out_lines)
        self.line_map = {i + 1: n for i, n in enumerate(out_lines)}

    def original_line(self, line):
        """The file's line for a line of the text handed to PyPTO."""
        if self.line_map is None or line <= 0:
            return line
        return self.line_map.get(line, line)

    def method_text(self, name):
        """The method's lines as written (decorators to the end of its body)."""
        m = self.method_by_name[name]
        return "".join(self.lines[m.first_line - 1 : m.end_line])
