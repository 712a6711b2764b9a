"""The comm-domain scopes of a program in the `pl._dump` form, as header lines.

Reads the text (whichever tool printed it) with Python's `ast`, so the scopes of
the reference pass's output and of PyPTO's export are read by one reader and
compared line for line. A slot names a window declaration; its alloc is the first
assignment of the declaration's base variable (where the harness's parser builds
the window), and the slot is reported by the alloc's logical name.
"""

import ast


class ScopeError(Exception):
    def __init__(self, message, line=0):
        super().__init__(message)
        self.line = line


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _call_name(node):
    return _dotted(node.func) if isinstance(node, ast.Call) else None


def _kwarg(call, key):
    for k in call.keywords:
        if k.arg == key:
            return k.value
    return None


def _literal(node, what):
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ScopeError(f"{what} is not a literal", getattr(node, "lineno", 0)) from None


_ALLOC_OPS = ("pld.alloc_window_buffer", "pld.tensor.alloc_window_buffer")


def _alloc_name(target, value):
    """The logical alloc name when `target = value` is an alloc, else None."""
    name = _call_name(value)
    if name in _ALLOC_OPS:
        return target
    if name == "pl._dump.alloc_window_buffer":
        return _literal(_kwarg(value, "name"), "name=")
    if name == "pl._dump.call" and value.args:
        op = _literal(value.args[0], "the op name")
        if op == "pld.tensor.alloc_window_buffer":
            kwargs = _kwarg(value, "kwargs")
            if kwargs is not None:
                for k, v in zip(kwargs.keys, kwargs.values):
                    if isinstance(k, ast.Constant) and k.value == "name":
                        return _literal(v, "name=")
            return target
    return None


def _function_scopes(func):
    windows = {}  # window name -> base variable
    allocs = {}  # variable -> alloc name, first assignment only
    scopes = []

    def visit(stmts):
        for s in stmts:
            if isinstance(s, ast.Expr) and _call_name(s.value) == "pl._dump.window_buffer":
                call = s.value
                windows[_literal(call.args[0], "the window name")] = _literal(_kwarg(call, "base"), "base=")
            elif isinstance(s, (ast.Assign, ast.AnnAssign)):
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and s.value is not None:
                    name = _alloc_name(targets[0].id, s.value)
                    if name is not None:
                        allocs.setdefault(targets[0].id, name)
            elif isinstance(s, ast.With):
                call = s.items[0].context_expr
                if _call_name(call) == "pl._dump.comm_domain":
                    scopes.append(
                        (
                            _literal(_kwarg(call, "name"), "name="),
                            _literal(_kwarg(call, "devices"), "devices="),
                            _literal(_kwarg(call, "slots"), "slots="),
                            s.lineno,
                        )
                    )
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and not isinstance(s, ast.FunctionDef):
                    visit(inner)

    visit(func.body)
    lines = []
    for name, devices, slots, lineno in scopes:
        names = []
        for slot in slots:
            if slot not in windows:
                raise ScopeError(f"slot '{slot}' of {name} names no window declaration", lineno)
            base = windows[slot]
            names.append(allocs.get(base, f"<{base}: no alloc>"))
        if devices == "all":
            dev = "all"
        else:
            dev = "[" + ", ".join(str(d) for d in devices) + "]"
        lines.append(f"# EXPECT-SCOPE: {func.name} {name} devices={dev} slots={','.join(names)}")
    return lines


def scope_lines(text):
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise ScopeError(f"not Python syntax: {e.msg}", e.lineno or 0) from None
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            funcs = [f for f in node.body if isinstance(f, ast.FunctionDef)]
            for f in sorted(funcs, key=lambda f: f.name):
                out.extend(_function_scopes(f))
    return out
