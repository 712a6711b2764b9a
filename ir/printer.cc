#include "ir/printer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/field_values.h"
#include "ir/lexer.h"
#include "ir/op_registry.h"
#include "ir/parser.h"
#include "ir/print_prefetch.h"
#include "ir/string_hash.h"
#include "ir/structural_equal.h"
#include "ir/walk.h"

namespace cds::ir {

namespace {

// The names the text format gives a meaning of its own (the PyPTO bridge's exporter
// avoids them too; tests/pypto compares).
constexpr std::string_view kTextFormatNames[] = {"pl", "pld", "self"};

// Python's keywords and the text format's own names.
bool IsReservedName(std::string_view s) {
  return IsKeyword(s) || std::find(std::begin(kTextFormatNames), std::end(kTextFormatNames), s) !=
                             std::end(kTextFormatNames);
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Whether Sanitize would return the hint unchanged.
bool IsPlainName(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), IsIdentChar) && !IsReservedName(s);
}

// A valid, non-reserved identifier close to the hint.
std::string Sanitize(std::string_view hint) {
  std::string s;
  s.reserve(hint.size() + 2);
  for (char c : hint) s += IsIdentChar(c) ? c : '_';
  if (s.empty()) s = "v";
  if (s[0] >= '0' && s[0] <= '9') s = "v_" + s;
  if (IsReservedName(s)) s += '_';
  return s;
}

void QuoteTo(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Shortest text that reads back to the same double, always lexed as a float.
void FloatLiteralTo(std::string& out, double v) {
  size_t at = out.size();
  fmt::format_to(std::back_inserter(out), "{}", v);
  if (std::string_view(out).substr(at).find_first_of(".eEn") == std::string_view::npos) {
    out += ".0";
  }
}

void IntTo(std::string& out, int64_t v) {
  fmt::format_int f(v);
  out.append(f.data(), f.size());
}

enum Prec : int {
  kPrecOr = 1,
  kPrecAnd,
  kPrecNot,
  kPrecCmp,
  kPrecAdd,
  kPrecMul,
  kPrecUnary,
  kPrecAtom
};

// How a binary operator prints: the text between its operands (the call's name
// for pl.min and pl.max, which print as calls) and its precedence.
struct BinaryOpSyntax {
  std::string_view text;
  int prec;
};
// Indexed by BinaryOp.
constexpr BinaryOpSyntax kBinaryOps[] = {
    {" + ", kPrecAdd},  {" - ", kPrecAdd},  {" * ", kPrecMul},     {" // ", kPrecMul},
    {" % ", kPrecMul},  {" / ", kPrecMul},  {"pl.min", kPrecAtom}, {"pl.max", kPrecAtom},
    {" == ", kPrecCmp}, {" != ", kPrecCmp}, {" < ", kPrecCmp},     {" <= ", kPrecCmp},
    {" > ", kPrecCmp},  {" >= ", kPrecCmp}, {" and ", kPrecAnd},   {" or ", kPrecOr}};
static_assert(std::size(kBinaryOps) == static_cast<size_t>(BinaryOp::kOr) + 1);

const BinaryOpSyntax& SyntaxOf(BinaryOp op) { return kBinaryOps[static_cast<size_t>(op)]; }

// Whether the expression prints as a bare literal (and so reads back as one).
bool IsBareLiteral(const Expr& e) {
  if (e.kind() == NodeKind::kConstInt)
    return static_cast<const ConstInt&>(e).dtype == DataType::kInt64;
  if (e.kind() == NodeKind::kConstFloat) {
    const auto& f = static_cast<const ConstFloat&>(e);
    return f.dtype == DataType::kFP32 && std::isfinite(f.value);
  }
  return false;
}

// A name in use, and the k at which the search for a free `name_k` resumes.
using UsedNames = StringViewMap<uint32_t>;

class Printer {
 public:
  explicit Printer(const Program* program) : program_(program) {}

  std::string Take() { return std::move(out_); }
  void Reserve(size_t bytes) { out_.reserve(bytes); }

  void PrintProgram(const Program& p) {
    for (const auto& d : p.dynamic_dims) {
      if (!d) continue;
      std::string cand = UniqueDimName(d.get());
      out_ += cand;
      out_ += " = pl.dynamic(";
      QuoteTo(out_, cand);
      out_ += ")\n";
      dim_names_.emplace_back(d.get(), std::move(cand));
    }
    if (!p.dynamic_dims.empty()) out_ += '\n';
    out_ += "@pl.program\n";
    out_ += "class ";
    out_ += p.name;
    out_ += ":\n";
    if (p.functions.empty()) out_ += "    pass\n";
    for (size_t i = 0; i < p.functions.size(); ++i) {
      if (i) out_ += '\n';
      PrintFunction(*p.functions[i]);
    }
  }

  // Every variable the function defines is named before anything is printed:
  // parameters, then the body's definitions in text order. The first definition of
  // a hint keeps it and later ones get `_1`, `_2`, ... in the order a reader meets
  // them, wherever a use happens to be printed (a loop's results are written at its
  // yield, window declarations name their bases ahead of the body). A variable
  // defined nowhere in the function is named at its first use. Windows are named at
  // their first use in the text and declared before the body.
  void PrintFunction(const Function& f) {
    ResetFunction();
    if (f.body) Prescan(*f.body);
    // Sized up front, as growth rehashes every name. An alloc is named after its target.
    const size_t named = dim_names_.size() + f.params.size() + defs_.size();
    names_.reserve(named);
    used_names_.reserve(named);
    sugar_allocs_.reserve(sugar_allocs_.size() + defs_.size());
    // Program-level dims keep their module name in every function.
    for (const auto& [v, n] : dim_names_) {
      used_names_.try_emplace(n, 1);
      names_.try_emplace(v, n);
    }
    for (const auto& p : f.params) NameOf(p.get());
    for (const Var* v : defs_) NameOf(v);
    out_ += "    @pl.function";
    std::string_view sep = "(";
    auto decorator_arg = [&](std::string_view key, std::string_view value) {
      out_ += sep;
      out_ += key;
      out_ += value;
      sep = ", ";
    };
    if (f.func_type != FunctionType::kOpaque)
      decorator_arg("type=pl.FunctionType.", FunctionTypeName(f.func_type));
    if (f.level) decorator_arg("level=pl.Level.", LevelName(*f.level));
    if (f.role) decorator_arg("role=pl.Role.", RoleName(*f.role));
    if (sep != "(") out_ += ')';
    out_ += "\n    def ";
    out_ += f.name;
    // A host SubWorker (plain Python body) takes no `self`.
    out_ += f.python_body ? "(" : "(self";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i || !f.python_body) out_ += ", ";
      out_ += NameOf(f.params[i].get());
      out_ += ": ";
      ParamDirection d =
          i < f.param_directions.size() ? f.param_directions[i] : ParamDirection::kIn;
      if (d == ParamDirection::kOut) out_ += "pl.Out[";
      if (d == ParamDirection::kInOut) out_ += "pl.InOut[";
      PrintType(f.params[i]->type);
      if (d != ParamDirection::kIn) out_ += ']';
    }
    out_ += ')';
    if (f.return_types.size() == 1) {
      out_ += " -> ";
      PrintType(f.return_types[0]);
    } else if (f.return_types.size() > 1) {
      out_ += " -> tuple[";
      Join(f.return_types, [&](const TypePtr& t) { PrintType(t); });
      out_ += ']';
    } else if (first_return_ && !first_return_->values.empty()) {
      // Without it the reader would deduce return types from that return.
      out_ += " -> None";
    }
    out_ += ":\n";
    if (f.python_body) {
      PythonBodyTo(*f.python_body);
      return;
    }
    // The body goes straight into the output; the window declarations, known once
    // it is printed, are inserted before it (one move of the body's text).
    const size_t body_at = out_.size();
    PrintBodyStmts(f.body, 2);
    if (windows_.empty()) {
      if (out_.size() == body_at) out_ += "        pass\n";
      return;
    }
    // The declarations are printed aside (into out_'s place, so that the printing
    // functions write there). Printing a size may name further windows, which the
    // loop then declares too.
    std::string& decls = scratch_;
    decls.clear();
    std::swap(out_, decls);
    for (size_t i = 0; i < windows_.size(); ++i) {
      const WindowBuffer* wb = windows_[i].wb;
      out_ += "        pl._dump.window_buffer(\"";
      out_ += windows_[i].name;
      out_ += "\", base=";
      QuoteTo(out_, wb->base ? NameOf(wb->base.get()) : std::string_view());
      out_ += ", size=";
      if (wb->size) {
        PrintExpr(wb->size);
      } else {
        out_ += "None";
      }
      out_ += wb->load_from_host ? ", load_from_host=True" : ", load_from_host=False";
      out_ += wb->store_to_host ? ", store_to_host=True)\n" : ", store_to_host=False)\n";
    }
    std::swap(out_, decls);
    out_.insert(body_at, decls);
  }

  // The text as kept, each line indented as a function body (blank lines stay empty).
  void PythonBodyTo(std::string_view body) {
    for (size_t at = 0; at <= body.size();) {
      size_t nl = body.find('\n', at);
      if (nl == std::string_view::npos) nl = body.size();
      if (nl > at) out_ += "        ";
      out_.append(body.substr(at, nl - at));
      out_ += '\n';
      at = nl + 1;
    }
  }

  // ---- names

  // A program-level dimension's name, unique among the module-level and inline ones.
  std::string UniqueDimName(const Var* v) {
    std::string base = Sanitize(v->name_hint), cand = base;
    for (int k = 1; dim_names_in_use_.contains(cand); ++k) cand = fmt::format("{}_{}", base, k);
    dim_names_in_use_.insert(cand);
    return cand;
  }

  // A Var in a type that the function does not define: a dimension written inline,
  // `pl.dynamic("NR")`, one name per Var over the whole program (the parser reads
  // every inline use of a name as one Var).
  void InlineDimTo(const Var* v) {
    auto [it, fresh] = inline_dim_names_.try_emplace(v);
    if (fresh) it->second = UniqueDimName(v);
    out_ += "pl.dynamic(";
    QuoteTo(out_, it->second);
    out_ += ')';
  }

  void ResetFunction() {
    defs_.clear();
    first_return_ = nullptr;
    names_.clear();
    used_names_.clear();
    window_index_.clear();
    windows_.clear();
    used_window_names_.clear();
    made_names_.clear();
  }

  // A variable's name, given at its first definition or use: definitions in the
  // function are named before it is printed. Names are views: into the Var's own
  // hint when that is a usable identifier (nearly always), else into made_names_.
  std::string_view NameOf(const Var* v) {
    auto [it, fresh] = names_.try_emplace(v);
    if (!fresh) return it->second;
    std::string_view base = v->name_hint;
    if (!IsPlainName(base)) base = made_names_.emplace_back(Sanitize(base));
    // Unique inserts into another table: `it` stays valid.
    it->second = Unique(used_names_, base);
    return it->second;
  }

  // `base`, or `base_k` for the smallest k >= 1 not in `used`; the result is added.
  // A name's entry holds the k its search resumes at: names are never removed within
  // a function, so every `base_j` below it stays taken.
  std::string_view Unique(UsedNames& used, std::string_view base) {
    auto [it, fresh] = used.try_emplace(base, 1);
    if (fresh) return it->first;
    uint32_t k = it->second;
    std::string name;
    do {
      name.assign(base);
      name += '_';
      fmt::format_int num(k++);
      name.append(num.data(), num.size());
    } while (used.contains(name));
    it->second = k;
    std::string_view stored = made_names_.emplace_back(std::move(name));
    used.try_emplace(stored, 1);
    return stored;
  }

  std::string_view MakeWindowName(const WindowBuffer* wb) {
    std::string base(wb->base ? NameOf(wb->base.get()) : std::string_view("window"));
    base += "_window";
    return Unique(used_window_names_, made_names_.emplace_back(std::move(base)));
  }

  // `"NAME"` of the window (always identifier characters, so no escapes). A window
  // is named, and takes its place among the declarations, at its first use.
  void WindowRefTo(const WindowBuffer* wb) {
    auto [it, fresh] = window_index_.try_emplace(wb, windows_.size());
    if (fresh) windows_.push_back({wb, MakeWindowName(wb)});
    out_ += '"';
    out_ += windows_[it->second].name;
    out_ += '"';
  }

  // What printing a function needs to know first: its definitions in text order,
  // which is the order of the field tables (a loop's variable, its iter args, its
  // body's definitions, then its results, bound by the body's yield and written
  // after the body), and its first return statement.
  void Prescan(const Stmt& s) {
    if (!first_return_ && s.kind() == NodeKind::kReturnStmt)
      first_return_ = static_cast<const ReturnStmt*>(&s);
    DispatchNode(s, [&](const auto& node) {
      ForEachField(node, [&](std::string_view, const auto& value, FieldRole role) {
        detail::ForEachNodeRef(value, [&](const auto& ref) {
          using N = typename std::decay_t<decltype(ref)>::element_type;
          if constexpr (std::is_base_of_v<Stmt, N>) {
            if (ref) Prescan(*ref);
          } else if constexpr (std::is_base_of_v<Var, N>) {
            if (ref && role == FieldRole::kDef) defs_.push_back(ref.get());
          }
        });
      });
    });
  }

  // ---- statements

  void Indent(int level) { out_.append(static_cast<size_t>(level) * 4, ' '); }

  void PrintBodyStmts(const StmtPtr& body, int level) {
    if (!body) return;
    if (body->kind() == NodeKind::kSeqStmts) {
      for (const auto& stmt : static_cast<const SeqStmts&>(*body).stmts) {
        sweep_.Step(stmt.get());
        PrintStmt(stmt, level);
      }
    } else {
      PrintStmt(body, level);
    }
  }

  void PrintBlock(const StmtPtr& body, int level) {
    size_t before = out_.size();
    PrintBodyStmts(body, level);
    if (out_.size() == before) {
      Indent(level);
      out_ += "pass\n";
    }
  }

  void PrintStmt(const StmtPtr& s, int level) {
    if (!s) return;
    if (s->kind() == NodeKind::kSeqStmts) {
      PrintBodyStmts(s, level);
      return;
    }
    Indent(level);
    switch (s->kind()) {
      case NodeKind::kAssignStmt: {
        const auto& a = static_cast<const AssignStmt&>(*s);
        const std::string_view name = NameOf(a.var.get());
        out_ += name;
        const bool var_known = a.var->type && a.var->type->kind() != NodeKind::kUnknownType;
        const bool value_known =
            a.value && a.value->type && a.value->type->kind() != NodeKind::kUnknownType;
        if (var_known || value_known) {
          out_ += ": ";
          PrintType(a.var->type);
        }
        out_ += " = ";
        if (a.value && a.value->kind() == NodeKind::kCall) {
          alloc_lhs_ = &name;
          if (var_known) assign_type_ = &a.var->type;
        }
        PrintExpr(a.value);
        alloc_lhs_ = nullptr;
        assign_type_ = nullptr;
        out_ += '\n';
        return;
      }
      case NodeKind::kEvalStmt:
        PrintExpr(static_cast<const EvalStmt&>(*s).expr);
        out_ += '\n';
        return;
      case NodeKind::kReturnStmt: {
        const auto& r = static_cast<const ReturnStmt&>(*s);
        out_ += r.values.empty() ? "return" : "return ";
        PrintArgs(r.values);
        out_ += '\n';
        return;
      }
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ForStmt&>(*s);
        out_ += "for ";
        out_ += NameOf(f.loop_var.get());
        if (!f.iter_args.empty()) {
          out_ += ", (";
          PrintNames(f.iter_args);
          out_ += f.iter_args.size() == 1 ? ",)" : ")";
        }
        out_ += " in pl.";
        out_ += ForKindName(f.kind);
        out_ += '(';
        const bool unit_step = IsInt64(f.step, 1);
        if (IsInt64(f.start, 0) && unit_step) {
          PrintExpr(f.stop);
        } else {
          PrintExpr(f.start);
          out_ += ", ";
          PrintExpr(f.stop);
          if (!unit_step) {
            out_ += ", ";
            PrintExpr(f.step);
          }
        }
        if (!f.iter_args.empty()) {
          out_ += ", init_values=(";
          Join(f.iter_args, [&](const IterArgPtr& a) { PrintExpr(a->init_value); });
          out_ += f.iter_args.size() == 1 ? ",))" : "))";
        } else {
          out_ += ')';
        }
        out_ += ":\n";
        const ForStmt* saved_owner = yield_owner_;
        yield_owner_ = &f;
        PrintBlock(f.body, level + 1);
        yield_owner_ = saved_owner;
        return;
      }
      case NodeKind::kYieldStmt: {
        const auto& y = static_cast<const YieldStmt&>(*s);
        const ForStmt* owner = yield_owner_;
        if (owner && !owner->return_vars.empty()) {
          PrintNames(owner->return_vars);
          // One target may carry an annotation; without one the reader types it
          // like the matching carried value.
          if (owner->return_vars.size() == 1 && !owner->iter_args.empty() &&
              !StructuralEqual(owner->return_vars[0]->type, owner->iter_args[0]->type)) {
            out_ += ": ";
            PrintType(owner->return_vars[0]->type);
          }
          out_ += " = ";
        }
        out_ += "pl.yield_(";
        PrintArgs(y.values);
        out_ += ")\n";
        return;
      }
      case NodeKind::kUnpackAssignStmt: {
        const auto& u = static_cast<const UnpackAssignStmt&>(*s);
        PrintNames(u.vars);
        if (u.vars.size() == 1) out_ += ',';
        out_ += " = ";
        PrintExpr(u.value);
        out_ += '\n';
        return;
      }
      case NodeKind::kSubscriptAssignStmt: {
        const auto& a = static_cast<const SubscriptAssignStmt&>(*s);
        PrintExpr(a.target);
        out_ += " = ";
        PrintExpr(a.value);
        out_ += '\n';
        return;
      }
      case NodeKind::kScopeStmt: {
        const auto& sc = static_cast<const ScopeStmt&>(*s);
        out_ += "with ";
        out_ += sc.kind_name;
        out_ += '(';
        PrintArgs(sc.args);
        PrintKwargs(sc.kwargs, sc.args.empty());
        out_ += ')';
        if (sc.as_var) {
          out_ += " as ";
          out_ += NameOf(sc.as_var.get());
        }
        out_ += ":\n";
        const ForStmt* saved_owner = yield_owner_;
        yield_owner_ = nullptr;
        PrintBlock(sc.body, level + 1);
        yield_owner_ = saved_owner;
        return;
      }
      case NodeKind::kWhileStmt: {
        const auto& w = static_cast<const WhileStmt&>(*s);
        out_ += "while ";
        PrintExpr(w.cond);
        out_ += ":\n";
        PrintBlock(w.body, level + 1);
        return;
      }
      case NodeKind::kIfStmt: {
        const auto* i = static_cast<const IfStmt*>(s.get());
        out_ += "if ";
        while (true) {
          PrintExpr(i->cond);
          out_ += ":\n";
          PrintBlock(i->then_body, level + 1);
          if (!i->else_body) return;
          // `else:` holding exactly one if reads back as `elif`.
          const IfStmt* nested = nullptr;
          if (i->else_body->kind() == NodeKind::kSeqStmts) {
            const auto& seq = static_cast<const SeqStmts&>(*i->else_body);
            if (seq.stmts.size() == 1 && seq.stmts[0] &&
                seq.stmts[0]->kind() == NodeKind::kIfStmt) {
              nested = static_cast<const IfStmt*>(seq.stmts[0].get());
            }
          }
          Indent(level);
          if (!nested) {
            out_ += "else:\n";
            PrintBlock(i->else_body, level + 1);
            return;
          }
          out_ += "elif ";
          i = nested;
        }
      }
      case NodeKind::kCommDomainScopeStmt: {
        const auto& c = static_cast<const CommDomainScopeStmt&>(*s);
        out_ += "with pl._dump.comm_domain(name=";
        QuoteTo(out_, c.name_hint);
        out_ += ", devices=";
        if (c.devices.all) {
          out_ += "\"all\"";
        } else {
          out_ += '[';
          Join(c.devices.ids, [&](int64_t id) { IntTo(out_, id); });
          out_ += ']';
        }
        out_ += ", slots=[";
        Join(c.slots, [&](const WindowBufferPtr& slot) {
          if (slot) {
            WindowRefTo(slot.get());
          } else {
            out_ += "\"\"";
          }
        });
        out_ += "], attrs=";
        PrintKwargDict(c.attrs);
        out_ += "):\n";
        PrintBlock(c.body, level + 1);
        return;
      }
      default:
        // A statement the printer does not know: make the text fail to parse rather
        // than silently drop the statement.
        out_ += fmt::format("pl._dump.unsupported(\"{}\")\n", NodeKindName(s->kind()));
        return;
    }
  }

  static bool IsInt64(const ExprPtr& e, int64_t v) {
    if (!e || e->kind() != NodeKind::kConstInt) return false;
    const auto& c = static_cast<const ConstInt&>(*e);
    return c.dtype == DataType::kInt64 && c.value == v;
  }

  // ---- types

  // `PREFIX[[SHAPE], pl.DTYPE]`, with the window of a view before the `]`.
  template <typename T>
  void PrintShapedType(std::string_view prefix, const T& t) {
    out_ += prefix;
    out_ += "[[";
    PrintArgs(t.shape);
    out_ += "], pl.";
    out_ += DataTypeName(t.dtype);
    if constexpr (std::is_same_v<T, DistributedTensorType>) {
      if (t.window_buffer) {
        out_ += ", pl._dump.window_ref(";
        WindowRefTo(t.window_buffer.get());
        out_ += ')';
      }
    }
    out_ += ']';
  }

  void PrintType(const TypePtr& t) {
    struct InType {
      int* depth;
      explicit InType(int* d) : depth(d) { ++*depth; }
      ~InType() { --*depth; }
    } in_type(&in_type_);
    if (!t || t->kind() == NodeKind::kUnknownType) {
      out_ += "pl._dump.Unknown";
      return;
    }
    switch (t->kind()) {
      case NodeKind::kScalarType:
        out_ += "pl.Scalar[pl.";
        out_ += DataTypeName(static_cast<const ScalarType&>(*t).dtype);
        out_ += ']';
        return;
      case NodeKind::kPtrType:
        out_ += "pl.Ptr";
        return;
      case NodeKind::kTensorType:
        PrintShapedType("pl.Tensor", static_cast<const TensorType&>(*t));
        return;
      case NodeKind::kTileType:
        PrintShapedType("pl.Tile", static_cast<const TileType&>(*t));
        return;
      case NodeKind::kDistributedTensorType:
        PrintShapedType("pld.DistributedTensor", static_cast<const DistributedTensorType&>(*t));
        return;
      case NodeKind::kTupleType: {
        const auto& x = static_cast<const TupleType&>(*t);
        // Python spells the empty tuple type `Tuple[()]`; `Tuple[]` is no Python.
        out_ += "pl.Tuple[";
        if (x.types.empty()) out_ += "()";
        Join(x.types, [&](const TypePtr& type) { PrintType(type); });
        out_ += ']';
        return;
      }
      default:
        out_ += fmt::format("pl._dump.unsupported_type(\"{}\")", NodeKindName(t->kind()));
        return;
    }
  }

  // ---- expressions

  static int PrecOf(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::kBinaryExpr:
        return SyntaxOf(static_cast<const BinaryExpr&>(e).op).prec;
      case NodeKind::kUnaryExpr:
        return static_cast<const UnaryExpr&>(e).op == UnaryOp::kNot ? kPrecNot : kPrecUnary;
      case NodeKind::kConstInt:
        return static_cast<const ConstInt&>(e).value < 0 &&
                       static_cast<const ConstInt&>(e).dtype == DataType::kInt64
                   ? kPrecUnary
                   : kPrecAtom;
      case NodeKind::kConstFloat:
        return IsBareLiteral(e) && std::signbit(static_cast<const ConstFloat&>(e).value)
                   ? kPrecUnary
                   : kPrecAtom;
      default:
        return kPrecAtom;
    }
  }

  // `pl.const(VALUE, pl.DTYPE)` for a finite value.
  template <typename T>
  void ConstTo(T value, DataType dt) {
    out_ += "pl.const(";
    if constexpr (std::is_same_v<T, double>) {
      FloatLiteralTo(out_, value);
    } else {
      IntTo(out_, value);
    }
    out_ += ", pl.";
    out_ += DataTypeName(dt);
    out_ += ')';
  }

  void PrintOperand(const ExprPtr& e, int min_prec) {
    bool parens = e && PrecOf(*e) < min_prec;
    if (parens) out_ += '(';
    PrintExpr(e);
    if (parens) out_ += ')';
  }

  void PrintExpr(const ExprPtr& e) {
    if (!e) {
      out_ += "None";
      return;
    }
    switch (e->kind()) {
      case NodeKind::kVar:
      case NodeKind::kIterArg: {
        const auto* v = static_cast<const Var*>(e.get());
        if (in_type_ > 0 && program_ && !names_.contains(v)) {
          InlineDimTo(v);
          return;
        }
        out_ += NameOf(v);
        return;
      }
      case NodeKind::kWindowBuffer:
        out_ += "pl._dump.window_ref(";
        WindowRefTo(static_cast<const WindowBuffer*>(e.get()));
        out_ += ')';
        return;
      case NodeKind::kConstInt: {
        const auto& c = static_cast<const ConstInt&>(*e);
        if (c.dtype == DataType::kInt64) {
          IntTo(out_, c.value);
        } else {
          ConstTo(c.value, c.dtype);
        }
        return;
      }
      case NodeKind::kConstFloat: {
        const auto& c = static_cast<const ConstFloat&>(*e);
        if (IsBareLiteral(c)) {
          FloatLiteralTo(out_, c.value);
        } else if (std::isfinite(c.value)) {
          ConstTo(c.value, c.dtype);
        } else {
          const char* s = std::isnan(c.value) ? "nan" : c.value > 0 ? "inf" : "-inf";
          out_ += fmt::format("pl.const(\"{}\", pl.{})", s, DataTypeName(c.dtype));
        }
        return;
      }
      case NodeKind::kConstBool:
        out_ += static_cast<const ConstBool&>(*e).value ? "True" : "False";
        return;
      case NodeKind::kConstString:
        QuoteTo(out_, static_cast<const ConstString&>(*e).value);
        return;
      case NodeKind::kBinaryExpr: {
        const auto& b = static_cast<const BinaryExpr&>(*e);
        const BinaryOpSyntax& syntax = SyntaxOf(b.op);
        if (b.op == BinaryOp::kMin || b.op == BinaryOp::kMax) {
          out_ += syntax.text;
          out_ += '(';
          PrintExpr(b.lhs);
          out_ += ", ";
          PrintExpr(b.rhs);
          out_ += ')';
          return;
        }
        const int p = syntax.prec;
        // Comparisons do not chain: both sides need parentheses at equal precedence.
        PrintOperand(b.lhs, p == kPrecCmp ? p + 1 : p);
        out_ += syntax.text;
        PrintOperand(b.rhs, p + 1);
        return;
      }
      case NodeKind::kUnaryExpr: {
        const auto& u = static_cast<const UnaryExpr&>(*e);
        if (u.op == UnaryOp::kNot) {
          out_ += "not ";
          PrintOperand(u.operand, kPrecNot);
          return;
        }
        out_ += '-';
        // `-5` would read back as the constant -5, not a negation of 5.
        bool literal = u.operand && IsBareLiteral(*u.operand) && PrecOf(*u.operand) == kPrecAtom;
        if (literal) {
          out_ += '(';
          PrintExpr(u.operand);
          out_ += ')';
        } else {
          PrintOperand(u.operand, kPrecUnary);
        }
        return;
      }
      case NodeKind::kMakeTuple: {
        const auto& t = static_cast<const MakeTuple&>(*e);
        out_ += t.parenthesized ? '(' : '[';
        PrintArgs(t.elements);
        if (t.parenthesized && t.elements.size() == 1) out_ += ',';
        out_ += t.parenthesized ? ')' : ']';
        return;
      }
      case NodeKind::kCall:
        PrintCall(static_cast<const Call&>(*e));
        return;
      case NodeKind::kGlobalVar:
        // A dotted constant used as a value (pl.INDEX, pl.MemorySpace.Vec).
        out_ += static_cast<const GlobalVar&>(*e).name;
        return;
      case NodeKind::kSubscript: {
        const auto& sub = static_cast<const Subscript&>(*e);
        PrintOperand(sub.value, kPrecAtom);
        out_ += '[';
        PrintArgs(sub.indices);
        out_ += ']';
        return;
      }
      case NodeKind::kSlice: {
        const auto& sl = static_cast<const Slice&>(*e);
        auto simple = [](const ExprPtr& x) { return !x || PrecOf(*x) == kPrecAtom; };
        // `c * 64 : (c + 1) * 64` reads better spaced; atoms stay tight (`0:8`).
        const char* sep = simple(sl.start) && simple(sl.stop) && simple(sl.step) ? ":" : " : ";
        if (sl.start) PrintExpr(sl.start);
        out_ += sl.start ? sep : ":";
        if (sl.stop) PrintExpr(sl.stop);
        if (sl.step) {
          out_ += sl.stop ? sep : ":";
          PrintExpr(sl.step);
        }
        return;
      }
      default:
        out_ += fmt::format("pl._dump.unsupported(\"{}\")", NodeKindName(e->kind()));
        return;
    }
  }

  void PrintAttrValue(const AttrValue& v) {
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, bool>) {
            out_ += x ? "True" : "False";
          } else if constexpr (std::is_same_v<X, int64_t>) {
            IntTo(out_, x);
          } else if constexpr (std::is_same_v<X, double>) {
            FloatLiteralTo(out_, x);
          } else if constexpr (std::is_same_v<X, std::string>) {
            QuoteTo(out_, x);
          } else if constexpr (std::is_same_v<X, DataType>) {
            out_ += "pl.";
            out_ += DataTypeName(x);
          } else if constexpr (std::is_same_v<X, EnumAttr>) {
            out_ += x.qualified;
          } else {
            PrintExprValue(x);
          }
        },
        v);
  }

  // An IR expression in a keyword position: literals must not read back as
  // attribute literals, so constants keep their pl.const form there.
  void PrintExprValue(const ExprPtr& e) {
    const NodeKind kind = e ? e->kind() : NodeKind::kVar;
    if (kind == NodeKind::kConstInt) {
      const auto& c = static_cast<const ConstInt&>(*e);
      ConstTo(c.value, c.dtype);
    } else if (kind == NodeKind::kConstFloat &&
               std::isfinite(static_cast<const ConstFloat&>(*e).value)) {
      const auto& c = static_cast<const ConstFloat&>(*e);
      ConstTo(c.value, c.dtype);
    } else if (kind == NodeKind::kConstBool) {
      out_ += static_cast<const ConstBool&>(*e).value ? "pl.const(True, pl.BOOL)"
                                                      : "pl.const(False, pl.BOOL)";
    } else {
      PrintExpr(e);
    }
  }

  // The first `count` keyword arguments (all by default).
  void PrintKwargs(std::span<const Kwarg> kwargs, bool first, size_t count = SIZE_MAX) {
    kwargs = kwargs.first(std::min(count, kwargs.size()));
    if (!first && !kwargs.empty()) out_ += ", ";
    Join(kwargs, [&](const Kwarg& kv) {
      out_ += kv.first;
      out_ += '=';
      PrintAttrValue(kv.second);
    });
  }

  // `{"KEY": VALUE, ...}`
  template <typename Pairs, typename PrintValue>
  void PrintDict(const Pairs& pairs, PrintValue print_value) {
    out_ += '{';
    Join(pairs, [&](const auto& kv) {
      QuoteTo(out_, kv.first);
      out_ += ": ";
      print_value(kv.second);
    });
    out_ += '}';
  }

  void PrintKwargDict(std::span<const Kwarg> kwargs) {
    PrintDict(kwargs, [&](const AttrValue& v) { PrintAttrValue(v); });
  }

  void PrintArgs(std::span<const ExprPtr> args) {
    Join(args, [&](const ExprPtr& e) { PrintExpr(e); });
  }

  // Each element of `list` through `each`, separated by ", ".
  template <typename List, typename Each>
  void Join(const List& list, Each each) {
    bool first = true;
    for (const auto& x : list) {
      if (!first) out_ += ", ";
      first = false;
      each(x);
    }
  }

  template <typename Vars>
  void PrintNames(const Vars& vars) {
    Join(vars, [&](const auto& v) { out_ += NameOf(v.get()); });
  }

  void PrintDumpCall(const Call& c, std::string_view op_name) {
    out_ += "pl._dump.call(";
    QuoteTo(out_, op_name);
    out_ += ", [";
    PrintArgs(c.args);
    out_ += "], ";
    PrintType(c.type);
    if (!c.kwargs.empty()) {
      out_ += ", kwargs=";
      PrintKwargDict(c.kwargs);
    }
    if (!c.attrs.empty()) {
      out_ += ", attrs=";
      PrintDict(c.attrs, [&](const ExprPtr& e) { PrintExpr(e); });
    }
    out_ += ')';
  }

  // Whether `name` reads back as an opaque call: a dotted pl./pld. path of
  // identifiers that the reader does not give another meaning.
  static bool IsOpaqueSugarName(std::string_view name) {
    size_t dot = name.find('.');
    if (dot == std::string_view::npos) return false;
    std::string_view root(name.data(), dot);
    if (root != "pl" && root != "pld") return false;
    size_t b = 0;
    while (b <= name.size()) {
      size_t e = name.find('.', b);
      if (e == std::string_view::npos) e = name.size();
      std::string_view part = name.substr(b, e - b);
      if (!IsPlainName(part) && part != "pl" && part != "pld") return false;
      b = e + 1;
    }
    static constexpr std::string_view kSpecial[] = {
        "pl.const",  "pl.min",     "pl.max",         "pl.dynamic",
        "pl.yield_", "pld.window", "pld.world_size", "pld.alloc_window_buffer"};
    if (std::find(std::begin(kSpecial), std::end(kSpecial), name) != std::end(kSpecial))
      return false;
    if (name.substr(0, 8) == "pl._dump") return false;
    if (name.size() > 9 && name.substr(name.size() - 9) == ".get_byte") return false;
    return true;
  }

  // Structural equality is reflexive: the common case (a type the parser took
  // from an argument or the shared scalar instances) needs no walk.
  static bool SameType(const TypePtr& a, const TypePtr& b) {
    return a.get() == b.get() || StructuralEqual(a, b);
  }

  bool SugarTypeMatches(const Call& c) {
    try {
      TypePtr deduced = DeduceCallType(c);
      return deduced && SameType(deduced, c.type);
    } catch (const ValueError&) {
      return false;
    }
  }

  // `NAME(ARGS, KWARGS)`, with the first `kwarg_count` keyword arguments.
  void PrintSugarCall(std::string_view name, const Call& c, size_t kwarg_count = SIZE_MAX) {
    out_ += name;
    out_ += '(';
    PrintArgs(c.args);
    PrintKwargs(c.kwargs, c.args.empty(), kwarg_count);
    out_ += ')';
  }

  void PrintCall(const Call& c) {
    const std::string_view* lhs = alloc_lhs_;
    alloc_lhs_ = nullptr;  // only the assignment's top-level call may take the sugar alloc form
    const TypePtr* annotated = assign_type_;
    assign_type_ = nullptr;
    if (c.op && c.op->kind() == NodeKind::kGlobalVar) {
      PrintDispatch(c, static_cast<const GlobalVar&>(*c.op));
      return;
    }
    bool kw_ok = true;
    for (const auto& [k, v] : c.kwargs) kw_ok = kw_ok && IsPlainName(k);
    const std::string& name = c.OpName();
    const Op* op =
        c.op && c.op->kind() == NodeKind::kOp ? static_cast<const Op*>(c.op.get()) : nullptr;
    if (!op) {
      PrintDumpCall(c, "?");
      return;
    }
    if (!op->info) {
      const bool type_ok =
          c.type->kind() == NodeKind::kUnknownType || (annotated && SameType(c.type, *annotated));
      if (kw_ok && c.attrs.empty() && type_ok && IsOpaqueSugarName(name)) {
        PrintSugarCall(name, c);
      } else {
        PrintDumpCall(c, name);
      }
      return;
    }
    // The sugar form re-deduces the call's type and holds the annotation to it: a
    // variable typed apart from its call keeps the recorded type in a dump call.
    const bool sugar = c.attrs.empty() && kw_ok && SugarTypeMatches(c) &&
                       (!annotated || AnnotationAgrees(*annotated, c.type));
    const AttrValue* name_kwarg =
        sugar && name == ops::kAllocWindowBuffer ? FindKwarg(c.kwargs, "name") : nullptr;
    const std::string* alloc_name = name_kwarg ? std::get_if<std::string>(name_kwarg) : nullptr;
    if (!sugar || (name == ops::kAllocWindowBuffer && !alloc_name)) {
      PrintDumpCall(c, name);
    } else if (!alloc_name) {
      PrintSugarCall(name, c);
    } else if (lhs && c.kwargs.back().first == "name" && *alloc_name == *lhs &&
               sugar_allocs_.insert(*alloc_name).second) {
      // The sugar alloc form: the name is the assignment's target.
      PrintSugarCall(name, c, c.kwargs.size() - 1);
    } else {
      PrintSugarCall("pl._dump.alloc_window_buffer", c);
    }
  }

  void PrintDispatch(const Call& c, const GlobalVar& callee) {
    const Callee& cal = LookUpCallee(callee.name);
    const Function* fn = cal.fn;
    bool sugar = fn && c.kwargs.empty() && c.args.size() == fn->params.size() &&
                 (c.attrs.empty() ||
                  (c.attrs.size() == 1 && c.attrs[0].first == "device" && c.attrs[0].second));
    if (sugar) sugar = SameType(cal.want, c.type);
    if (!sugar) {
      PrintDumpCall(c, "self." + callee.name);
      return;
    }
    out_ += "self.";
    out_ += callee.name;
    out_ += '(';
    PrintArgs(c.args);
    if (!c.attrs.empty()) {
      out_ += c.args.empty() ? "device=" : ", device=";
      PrintExpr(c.attrs[0].second);
    }
    out_ += ')';
  }

  // Dispatches mostly call the same few functions: remember the last lookup (a
  // binary search over all functions, by name, otherwise) and the type a call of
  // it has in the sugar form.
  struct Callee {
    std::string name;
    const Function* fn = nullptr;
    TypePtr want;
  };
  const Callee& LookUpCallee(const std::string& name) {
    if (callee_ && callee_->name == name) return *callee_;
    // The program outlives the printer.
    const Function* fn = program_ ? program_->FindFunction(name).get() : nullptr;
    TypePtr want;
    if (fn) {
      want = fn->return_types.empty()       ? TypePtr(UnknownType::Get())
             : fn->return_types.size() == 1 ? fn->return_types[0]
                                            : TypePtr(ir::MakeNode<TupleType>(fn->return_types));
    }
    callee_ = Callee{name, fn, std::move(want)};
    return *callee_;
  }

 private:
  struct WindowEntry {
    const WindowBuffer* wb;
    std::string_view name;
  };

  const Program* program_;
  std::string out_;
  std::string scratch_;
  // Per function.
  std::vector<const Var*> defs_;  // in text order (Prescan)
  const ReturnStmt* first_return_ = nullptr;
  absl::flat_hash_map<const Var*, std::string_view> names_;
  UsedNames used_names_;
  absl::flat_hash_map<const WindowBuffer*, size_t> window_index_;
  std::vector<WindowEntry> windows_;  // in order of first use = declaration order
  UsedNames used_window_names_;
  std::deque<std::string> made_names_;  // names that are not a Var's own hint
  std::optional<Callee> callee_;
  // Alloc names printed in the sugar form, program-wide. Views into the alloc
  // calls' name= strings: the program outlives the printer.
  StringViewSet sugar_allocs_;
  print_detail::ArenaSweep sweep_;
  const std::string_view* alloc_lhs_ = nullptr;
  // The type an opaque call may take from the annotation of its assignment.
  const TypePtr* assign_type_ = nullptr;
  // The loop whose direct body is printed: its YieldStmt binds its return_vars.
  const ForStmt* yield_owner_ = nullptr;
  std::vector<std::pair<const Var*, std::string>> dim_names_;
  StringSet dim_names_in_use_;
  absl::flat_hash_map<const Var*, std::string> inline_dim_names_;
  int in_type_ = 0;  // PrintType calls open: a Var there may be an inline dimension
};

}  // namespace

std::string PrintProgram(const ProgramPtr& program, size_t expected_bytes) {
  if (!program) return {};
  Printer p(program.get());
  p.Reserve(expected_bytes);
  p.PrintProgram(*program);
  return p.Take();
}

std::string PrintNode(const NodePtr& node) {
  if (!node) return "<null>";
  Printer p(nullptr);
  if (node->kind() == NodeKind::kProgram) return PrintProgram(PtrCast<const Program>(node));
  if (node->kind() == NodeKind::kFunction) {
    p.PrintFunction(static_cast<const Function&>(*node));
  } else if (IsStmtKind(node->kind())) {
    p.PrintStmt(PtrCast<const Stmt>(node), 0);
  } else if (IsExprKind(node->kind())) {
    p.PrintExpr(PtrCast<const Expr>(node));
  } else if (IsTypeKind(node->kind())) {
    p.PrintType(PtrCast<const Type>(node));
  } else if (node->kind() == NodeKind::kOp) {
    return static_cast<const Op&>(*node).name;
  }
  return p.Take();
}

}  // namespace cds::ir
