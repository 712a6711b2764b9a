"""PyPTO's IR written in the harness's `pl._dump` text form (docs/text-format.md).

The text is what the harness's parser rebuilds into the same IR: every typed call
is written as `pl._dump.call(op, [args], TYPE, kwargs=..., attrs=...)` so its
recorded type survives as PyPTO holds it (a view whose call type lacks the
back-reference stays that way); every distinct upstream WindowBuffer object (by
`unique_id`) is one `pl._dump.window_buffer` declaration, so two objects that
PyPTO keeps apart stay apart; each statement ends with `# line N`, its line in
the source program. A function PyPTO returns unchanged is copied from the source.
Anything the text format cannot say raises `NotExportable` naming it.
"""

import keyword
import math
import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Names the harness's parser does not read as a variable: Python's keywords and the
# text format's own names (ir/lexer.h kPythonKeywords, ir/printer.cc kTextFormatNames;
# tests/pypto/bridge_test.py compares).
_RESERVED = frozenset(keyword.kwlist) | {"pl", "pld", "self"}
_DTYPES = (
    "BOOL INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64 FP16 BF16 FP32 FP64 INDEX".split()
)
_BARE_INT_DTYPES = ("INT64", "INDEX")
_FUNCTION_TYPES = "Opaque Orchestration InCore AIC AIV Group Spmd Inline Graph".split()
_LEVELS = "AIV AIC CORE_GROUP CHIP_DIE CHIP HOST CLUSTER_0 CLUSTER_1 CLUSTER_2 GLOBAL".split()
_ROLES = ("Orchestrator", "SubWorker")
_LOOP_FORMS = {"Sequential": "pl.range", "Parallel": "pl.parallel", "Unroll": "pl.unroll"}
# Op kwargs PyPTO stores as integers but the harness's registry reads as enum values.
_ENUM_KWARGS = {("pld.tensor.allreduce", "op"): "pld.ReduceOp",
                ("pld.tensor.reduce_scatter", "op"): "pld.ReduceOp"}  # fmt: skip
_BINARY = {
    "Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%", "FloatDiv": "/",
    "Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">=", "And": "and", "Or": "or",
}  # fmt: skip


class NotExportable(Exception):
    """PyPTO's IR holds something the `.pyir` text format has no way to say."""

    def __init__(self, construct, where=None, line=0, column=0):
        super().__init__(construct)
        self.construct = construct
        self.where = where
        self.line = line
        self.column = column

    def describe(self):
        return f"{self.construct}" + (f" (in {self.where})" if self.where else "")


class _Rename(Exception):
    """A name in the text would not refer to the Var the IR holds: print again."""

    def __init__(self, uid):
        super().__init__(uid)
        self.uid = uid


def _enum_name(value):
    name = getattr(value, "name", None)
    if name is None:
        name = str(value).rsplit(".", 1)[-1]
    return name


def _class_name(node):
    return type(node).__name__


class Exporter:
    """Writes one PyPTO Program as `.pyir` text.

    `ir` is `pypto.pypto_core.ir`; `dtypes` comes from dtype_names(); `source` the PreparedSource the program was
    parsed from; `before` the program as parsed (to recognise functions PyPTO
    returned unchanged)."""

    def __init__(self, ir, dtypes, source, before, after, header_lines):
        self.ir = ir
        self.dtypes = dtypes
        self.source = source
        self.before = before
        self.after = after
        self.header_lines = header_lines

    def export(self):
        out = list(self.header_lines)
        out.extend(self._module_assignments())
        out.append("@pl.program")
        out.append(f"class {self.after.name}:")
        functions = sorted(self.after.functions.values(), key=lambda f: f.name)
        for i, func in enumerate(functions):
            if i:
                out.append("")
            out.extend(self._function(func))
        return "\n".join(out) + "\n"

    def _module_assignments(self):
        """Module-level lines before the class other than imports (`NR = pl.dynamic(...)`)."""
        lines = []
        for node in self.source.module_assignments:
            lines.extend(line.rstrip("\n") for line in self.source.lines[node.lineno - 1 : node.end_lineno])
        return lines

    def _unchanged(self, func):
        if func.name not in self.source.method_by_name:
            return False
        old = self.before.get_function(func.name)
        if old is None:
            return False
        return old.same_as(func) or self.ir.structural_equal(old, func)

    def _function(self, func):
        if self._unchanged(func):
            return self._copied(func)
        return FunctionPrinter(self, func).print()

    def _copied(self, func):
        text = self.source.method_text(func.name)
        lines = text.splitlines()
        indent = len(lines[0]) - len(lines[0].lstrip(" "))
        first = self.source.method_by_name[func.name].first_line
        out = [f"    # line {first}: unchanged by PyPTO, copied from the source"]
        for line in lines:
            stripped = line[indent:] if line[:indent].strip() == "" else line.lstrip(" ")
            out.append(("    " + stripped) if stripped else "")
        return out


class FunctionPrinter:
    """Prints one function; names and window declarations are settled by printing
    again until every name in the text refers to the Var the IR holds."""

    def __init__(self, exporter, func):
        self.x = exporter
        self.ir = exporter.ir
        self.func = func
        self.names = {}  # uid -> printed name (kept across attempts)
        self.known_windows = []  # WindowBuffer objects, first-encounter order (grows)

    def print(self):
        for _ in range(10000):
            try:
                return self._attempt()
            except _Rename as r:
                self._rename(r.uid)
        raise NotExportable("a naming that keeps every Var apart", self.func.name)

    # ------------------------------------------------------------------ naming

    def _rename(self, uid):
        used = set(self.names.values())
        base = self.names[uid]
        k = 1
        while f"{base}_{k}" in used:
            k += 1
        self.names[uid] = f"{base}_{k}"

    def _name(self, var):
        uid = var.unique_id
        name = self.names.get(uid)
        if name is None:
            hint = var.name_hint
            if not _IDENT.match(hint) or hint in _RESERVED:
                hint = "v_" + re.sub(r"[^A-Za-z0-9_]", "_", hint)
            name = self.names[uid] = hint
        return name

    def _define(self, var):
        name = self._name(var)
        self.bound[name] = var.unique_id
        self.defined.add(var.unique_id)
        for i, wb in enumerate(self.known_windows):
            if i in self.built:
                continue
            if self._name(wb.base) != name:
                continue
            if wb.base.unique_id != var.unique_id:
                raise _Rename(wb.base.unique_id)
            self.built.add(i)
            self._expr(wb.size)  # the declaration's size is read here
        return name

    def _use(self, var):
        name = self._name(var)
        uid = var.unique_id
        current = self.bound.get(name)
        if current is None:
            if uid not in self.defined:
                # A program-level dynamic dimension: the text names it by its
                # module-level binding (`NR = pl.dynamic("world_size")`).
                name = self.names[uid] = self.x.source.dynamic_dims.get(var.name_hint, name)
                self.bound[name] = uid
            return name
        if current != uid:
            raise _Rename(uid)
        return name

    # ------------------------------------------------------------------ attempt

    def _attempt(self):
        self.bound, self.defined, self.built = {}, set(), set()
        self.window_index = {wb.unique_id: i for i, wb in enumerate(self.known_windows)}
        self.loops = []
        self.lines = []
        found_before = len(self.known_windows)
        f = self.func
        header = self._header()
        params = []
        for var, direction in zip(f.params, f.param_directions):
            t = self._type(var.type)
            dname = _enum_name(direction)
            if dname == "Out":
                t = f"pl.Out[{t}]"
            elif dname == "InOut":
                t = f"pl.InOut[{t}]"
            elif dname != "In":
                raise NotExportable(f"parameter direction {dname}", f.name)
            params.append(f"{self._define(var)}: {t}")
        rets = [self._type(t) for t in f.return_types]
        signature = f"    def {f.name}(self{''.join(', ' + p for p in params)})"
        if len(rets) == 1:
            signature += f" -> {rets[0]}"
        elif rets:
            signature += f" -> tuple[{', '.join(rets)}]"
        elif self._returns_values(f.body):
            signature += " -> None"
        self._stmt(f.body, 2)
        if len(self.known_windows) != found_before or len(self.built) != len(self.known_windows):
            # Windows met for the first time in this attempt: their bases were
            # defined before they were known, so check them in one more attempt.
            unbuilt = [wb for i, wb in enumerate(self.known_windows) if i not in self.built]
            if len(self.known_windows) == found_before and unbuilt:
                wb = unbuilt[0]
                raise NotExportable(
                    f"WindowBuffer '{wb.name_hint}' whose base Var is not assigned in the function",
                    f.name,
                )
            return self._attempt()
        window_names = self._window_names()
        decls = []
        for wb in self.known_windows:
            self.bound = {}  # sizes print with the names they had where the base was assigned
            decls.append(
                f'        pl._dump.window_buffer("{window_names[wb.unique_id]}", '
                f'base="{self._name(wb.base)}", size={self._expr_text(wb.size)}, '
                f"load_from_host={bool(wb.load_from_host)}, store_to_host={bool(wb.store_to_host)})"
            )
        body = decls + self.lines
        if not self.lines:
            body.append("        pass")
        text = "\n".join([*header, signature + ":" + self._line_comment(f), *body])
        text = re.sub(
            "\x00W([0-9]+)\x00",
            lambda m: window_names[self.known_windows[int(m.group(1))].unique_id],
            text,
        )
        return text.split("\n")

    def _window_names(self):
        names, taken = {}, set()
        for wb in self.known_windows:
            base = self._name(wb.base) + "_window"
            name, k = base, 1
            while name in taken:
                name = f"{base}_{k}"
                k += 1
            taken.add(name)
            names[wb.unique_id] = name
        return names

    def _header(self):
        f = self.func
        args = []
        ftype = _enum_name(f.func_type)
        if ftype not in _FUNCTION_TYPES:
            raise NotExportable(f"function type {ftype}", f.name)
        if ftype != "Opaque":
            args.append(f"type=pl.FunctionType.{ftype}")
        if f.level is not None:
            level = _enum_name(f.level)
            if level not in _LEVELS:
                raise NotExportable(f"level {level}", f.name)
            args.append(f"level=pl.Level.{level}")
        if f.role is not None:
            role = _enum_name(f.role)
            if role not in _ROLES:
                raise NotExportable(f"role {role}", f.name)
            args.append(f"role=pl.Role.{role}")
        if dict(f.attrs):
            raise NotExportable(f"function attributes {sorted(dict(f.attrs))}", f.name)
        return ["    @pl.function" + (f"({', '.join(args)})" if args else "")]

    def _returns_values(self, stmt):
        kind = _class_name(stmt)
        if kind == "ReturnStmt":
            return len(stmt.value) > 0
        return any(self._returns_values(s) for s in self._children(stmt))

    def _children(self, stmt):
        kind = _class_name(stmt)
        if kind == "SeqStmts":
            return list(stmt.stmts)
        if kind == "IfStmt":
            return [stmt.then_body] + ([stmt.else_body] if stmt.else_body is not None else [])
        if kind in ("ForStmt", "WhileStmt") or hasattr(stmt, "scope_kind"):
            return [stmt.body]
        return []

    # ------------------------------------------------------------------ statements

    def _line_comment(self, node):
        span = node.span
        line = getattr(span, "begin_line", 0)
        if line is None or line <= 0 or span.filename != self.x.source.path:
            return ""
        return f"  # line {self.x.source.original_line(line)}"

    def _emit(self, depth, text, node):
        self.lines.append("    " * depth + text + self._line_comment(node))

    def _where(self, node):
        span = node.span
        line = getattr(span, "begin_line", 0) or 0
        return self.func.name, self.x.source.original_line(line), getattr(span, "begin_column", 0)

    def _fail(self, construct, node):
        fname, line, col = self._where(node)
        raise NotExportable(construct, fname, line, col)

    def _stmt(self, s, depth):
        kind = _class_name(s)
        handler = getattr(self, "_stmt_" + kind, None)
        if handler is None:
            self._fail(f"statement {kind}", s)
        handler(s, depth)

    def _stmt_SeqStmts(self, s, depth):
        for child in s.stmts:
            self._stmt(child, depth)

    def _stmt_AssignStmt(self, s, depth):
        t = self._type(s.var.type)
        value = self._expr(s.value)
        name = self._define(s.var)
        self._emit(depth, f"{name}: {t} = {value}", s)

    def _stmt_EvalStmt(self, s, depth):
        self._emit(depth, self._expr(s.expr), s)

    def _stmt_ReturnStmt(self, s, depth):
        values = [self._expr(v) for v in s.value]
        self._emit(depth, "return" + (" " + ", ".join(values) if values else ""), s)

    def _stmt_YieldStmt(self, s, depth):
        if not self.loops:
            self._fail("pl.yield_ outside a for loop (an IfStmt or WhileStmt that yields)", s)
        values = ", ".join(self._expr(v) for v in s.value)
        loop = self.loops[-1]
        results = list(loop.return_vars)
        if not results:
            self._emit(depth, f"pl.yield_({values})", s)
            return
        if len(results) == 1:
            t = self._type(results[0].type)
            self._emit(depth, f"{self._define(results[0])}: {t} = pl.yield_({values})", s)
            return
        names = [self._define(r) for r in results]
        self._emit(depth, f"{', '.join(names)} = pl.yield_({values})", s)

    def _stmt_ForStmt(self, s, depth):
        form = _LOOP_FORMS.get(_enum_name(s.kind))
        if form is None:
            self._fail(f"ForKind.{_enum_name(s.kind)} loop", s)
        if dict(s.attrs):
            self._fail(f"for-loop attributes {sorted(dict(s.attrs))}", s)
        start, stop, step = s.start, s.stop, s.step
        if self._is_int(step, 1) and self._is_int(start, 0):
            bounds = self._expr(stop)
        elif self._is_int(step, 1):
            bounds = f"{self._expr(start)}, {self._expr(stop)}"
        else:
            bounds = f"{self._expr(start)}, {self._expr(stop)}, {self._expr(step)}"
        iter_args = list(s.iter_args)
        if iter_args:
            inits = ", ".join(self._expr(a.initValue) for a in iter_args)
            bounds += f", init_values=({inits},)"
        target = self._define(s.loop_var)
        if iter_args:
            target += f", ({', '.join(self._define(a) for a in iter_args)},)"
        self._emit(depth, f"for {target} in {form}({bounds}):", s)
        if list(s.return_vars) and not self._ends_with_yield(s.body):
            self._fail("a loop with results but no pl.yield_ at the end of its body", s)
        self.loops.append(s)
        self._body(s.body, depth + 1)
        self.loops.pop()

    def _ends_with_yield(self, body):
        while _class_name(body) == "SeqStmts" and len(body.stmts):
            body = body.stmts[len(body.stmts) - 1]
        return _class_name(body) == "YieldStmt"

    def _stmt_WhileStmt(self, s, depth):
        if list(s.iter_args) or list(s.return_vars):
            self._fail("a while loop with loop-carried values", s)
        self._emit(depth, f"while {self._expr(s.condition)}:", s)
        self.loops.append(None)
        self._body(s.body, depth + 1)
        self.loops.pop()

    def _stmt_IfStmt(self, s, depth):
        if list(s.return_vars):
            self._fail("an if statement with result variables", s)
        self._emit(depth, f"if {self._expr(s.condition)}:", s)
        self._body(s.then_body, depth + 1)
        if s.else_body is not None:
            self.lines.append("    " * depth + "else:")
            self._body(s.else_body, depth + 1)

    def _body(self, stmt, depth):
        before = len(self.lines)
        self._stmt(stmt, depth)
        if len(self.lines) == before:
            self.lines.append("    " * depth + "pass")

    def _stmt_CommDomainScopeStmt(self, s, depth):
        self._no_scope_attrs(s, ())
        devices = list(s.devices)
        dev = '"all"' if not devices else "[" + ", ".join(str(int(d)) for d in devices) + "]"
        slots = ", ".join(f'"{self._window_ref_name(wb)}"' for wb in s.slots)
        self._emit(
            depth,
            f'with pl._dump.comm_domain(name="{s.name_hint}", devices={dev}, slots=[{slots}], attrs={{}}):',
            s,
        )
        self._body(s.body, depth + 1)

    def _no_scope_attrs(self, s, allowed):
        extra = sorted(k for k in dict(s.attrs) if k not in allowed)
        if extra:
            self._fail(f"{_class_name(s)} attributes {extra}", s)

    def _generic_scope(self, s, depth, callee, kwargs):
        attrs = dict(s.attrs)
        self._no_scope_attrs(s, ("task_id_var", "manual_dep_edges"))
        parts = list(kwargs)
        if s.name_hint:
            parts.append(f'name_hint="{s.name_hint}"')
        deps = attrs.get("manual_dep_edges")
        if deps:
            parts.append("deps=[" + ", ".join(self._expr(d) for d in deps) + "]")
        text = f"with {callee}({', '.join(parts)})"
        target = attrs.get("task_id_var")
        if target is not None:
            text += f" as {self._define(target)}"
        self._emit(depth, text + ":", s)
        self._body(s.body, depth + 1)

    def _stmt_RuntimeScopeStmt(self, s, depth):
        self._generic_scope(s, depth, "pl.manual_scope" if s.manual else "pl.scope", [])

    def _stmt_HierarchyScopeStmt(self, s, depth):
        kwargs = [f"level=pl.Level.{_enum_name(s.level)}"]
        if s.role is not None:
            kwargs.append(f"role=pl.Role.{_enum_name(s.role)}")
        self._generic_scope(s, depth, "pl.at", kwargs)

    def _stmt_InCoreScopeStmt(self, s, depth):
        kwargs = ["level=pl.Level.CORE_GROUP"]
        if _enum_name(s.split) != "NONE":
            kwargs.append(f"optimizations=[pl.split(pl.SplitMode.{_enum_name(s.split)})]")
        self._generic_scope(s, depth, "pl.at", kwargs)

    def _stmt_ClusterScopeStmt(self, s, depth):
        self._generic_scope(s, depth, "pl.cluster", [])

    def _stmt_SpmdScopeStmt(self, s, depth):
        kwargs = [self._expr(s.core_num)]
        if s.sync_start:
            kwargs.append("sync_start=True")
        self._generic_scope(s, depth, "pl.spmd", kwargs)

    # ------------------------------------------------------------------ types

    def _type(self, t):
        kind = _class_name(t)
        if kind == "ScalarType":
            return f"pl.Scalar[{self._dtype(t.dtype)}]"
        if kind == "PtrType":
            return "pl.Ptr"
        if kind == "UnknownType":
            return "pl._dump.Unknown"
        if kind == "TupleType":
            # Python spells the empty tuple type Tuple[()], as the harness's printer does.
            return "pl.Tuple[" + (", ".join(self._type(e) for e in t.types) or "()") + "]"
        if kind in ("TensorType", "DistributedTensorType", "TileType"):
            if getattr(t, "memref", None) is not None:
                raise NotExportable(f"a {kind} with a MemRef", self.func.name)
            for view in ("tensor_view", "tile_view"):
                if getattr(t, view, None) is not None:
                    raise NotExportable(f"a {kind} with a {view}", self.func.name)
            shape = "[" + ", ".join(self._expr(d) for d in t.shape) + "]"
            dtype = self._dtype(t.dtype)
            if kind == "TensorType":
                return f"pl.Tensor[{shape}, {dtype}]"
            if kind == "TileType":
                return f"pl.Tile[{shape}, {dtype}]"
            wb = t.window_buffer
            if wb is None:
                return f"pld.DistributedTensor[{shape}, {dtype}]"
            return f'pld.DistributedTensor[{shape}, {dtype}, pl._dump.window_ref("{self._window_ref_name(wb)}")]'
        raise NotExportable(f"type {kind}", self.func.name)

    def _window_ref_name(self, wb):
        i = self.window_index.get(wb.unique_id)
        if i is None:
            i = len(self.known_windows)
            self.known_windows.append(wb)
            self.window_index[wb.unique_id] = i
        return f"\x00W{i}\x00"

    def _dtype_name(self, dt):
        """The harness's name of a data type, or PyPTO's spelling of one it lacks."""
        return self.x.dtypes.get(str(dt), str(dt))

    def _dtype(self, dt):
        name = self._dtype_name(dt)
        if name not in _DTYPES:
            raise NotExportable(f"data type {name}", self.func.name)
        return f"pl.{name}"

    # ------------------------------------------------------------------ expressions

    def _is_int(self, e, value):
        return _class_name(e) == "ConstInt" and e.value == value

    def _expr_text(self, e):
        """An expression printed outside the statement walk (no name checks)."""
        saved = self._use
        self._use = self._name
        try:
            return self._expr(e)
        finally:
            self._use = saved

    def _expr(self, e):
        kind = _class_name(e)
        if kind in ("Var", "IterArg"):
            return self._use(e)
        if kind == "WindowBuffer":
            raise NotExportable("a WindowBuffer used as a value", self.func.name)
        if kind == "ConstInt":
            dt = self._dtype_name(e.dtype)
            if dt in _BARE_INT_DTYPES:
                return str(e.value)
            return f"pl.const({e.value}, {self._dtype(e.dtype)})"
        if kind == "ConstFloat":
            v = e.value
            dt = self._dtype_name(e.dtype)
            if math.isinf(v) or math.isnan(v):
                text = '"inf"' if v > 0 else '"-inf"' if v < 0 else '"nan"'
                return f"pl.const({text}, {self._dtype(e.dtype)})"
            if dt == "FP32":
                return repr(float(v))
            return f"pl.const({float(v)!r}, {self._dtype(e.dtype)})"
        if kind == "ConstBool":
            return "True" if e.value else "False"
        if kind in _BINARY:
            return f"({self._expr(e.left)} {_BINARY[kind]} {self._expr(e.right)})"
        if kind in ("Min", "Max"):
            return f"pl.{kind.lower()}({self._expr(e.left)}, {self._expr(e.right)})"
        if kind == "Neg":
            return f"-({self._expr(e.operand)})"
        if kind == "Not":
            return f"(not {self._expr(e.operand)})"
        if kind == "MakeTuple":
            return "[" + ", ".join(self._expr(x) for x in e.elements) + "]"
        if kind == "TupleGetItemExpr":
            return f"{self._expr(e.tuple)}[{e.index}]"
        if kind == "Call":
            return self._call(e)
        raise NotExportable(f"expression {kind}", self.func.name)

    def _call(self, c):
        op = c.op
        if _class_name(op) == "GlobalVar":
            name = f"self.{op.name}"
        else:
            name = op.name if op.name.startswith("pld.") else "pl." + op.name
        args = ", ".join(self._expr(a) for a in c.args)
        parts = [f'"{name}"', f"[{args}]", self._type(c.type)]
        kwargs = dict(c.kwargs)
        if kwargs:
            items = [f'"{k}": {self._kwarg(name, k, v)}' for k, v in kwargs.items()]
            parts.append("kwargs={" + ", ".join(items) + "}")
        attrs = dict(c.attrs)
        if attrs:
            items = []
            for k, v in attrs.items():
                if not isinstance(v, self.ir.Expr):
                    raise NotExportable(f"call attribute '{k}' of {name} (not an expression)", self.func.name)
                items.append(f'"{k}": {self._expr(v)}')
            parts.append("attrs={" + ", ".join(items) + "}")
        return f"pl._dump.call({', '.join(parts)})"

    def _kwarg(self, op, key, v):
        enum = _ENUM_KWARGS.get((op, key))
        if enum is not None and isinstance(v, int) and not isinstance(v, bool):
            members = {int(m): m.name for m in _enum_class(self.ir, enum)}
            if v not in members:
                raise NotExportable(f"{enum} value {v} of {op}", self.func.name)
            return f"{enum}.{members[v]}"
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        cls = type(v).__name__
        if cls == "DataType":
            return self._dtype(v)
        if isinstance(getattr(v, "name", None), str):  # an enum member: pl.MemorySpace.Vec
            return f"pl.{cls}.{v.name}"
        raise NotExportable(f"keyword argument {key}={v!r} of {op}", self.func.name)


def dtype_names(data_type_class):
    """{how PyPTO prints a data type: the harness's name} for the types the harness has
    (PyPTO prints BF16 as `bfloat16`)."""
    return {str(getattr(data_type_class, n)): n for n in _DTYPES if getattr(data_type_class, n, None) is not None}


def _enum_class(ir, qualified):
    name = qualified.split(".")[-1]
    return getattr(ir, name)
