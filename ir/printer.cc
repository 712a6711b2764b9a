#include "ir/printer.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/op_registry.h"
#include "ir/structural_equal.h"

namespace cds::ir {

namespace {

bool IsReservedName(std::string_view s) {
  static constexpr std::string_view kWords[] = {
      "and",    "as",    "assert", "async",  "await",  "break",   "class",    "continue",
      "def",    "del",   "elif",   "else",   "except", "finally", "for",      "from",
      "global", "if",    "import", "in",     "is",     "lambda",  "nonlocal", "not",
      "or",     "pass",  "raise",  "return", "try",    "while",   "with",     "yield",
      "True",   "False", "None",   "pl",     "pld",    "self"};
  for (auto w : kWords) {
    if (w == s) return true;
  }
  return false;
}

// A valid, non-reserved identifier close to the hint.
std::string Sanitize(std::string_view hint) {
  std::string s;
  s.reserve(hint.size() + 2);
  for (char c : hint) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty()) s = "v";
  if (s[0] >= '0' && s[0] <= '9') s = "v_" + s;
  if (IsReservedName(s)) s += '_';
  return s;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
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
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

// Shortest text that reads back to the same double, always lexed as a float.
std::string FloatLiteral(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
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

int BinaryPrec(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
      return kPrecOr;
    case BinaryOp::kAnd:
      return kPrecAnd;
    case BinaryOp::kEq:
    case BinaryOp::kNe:
    case BinaryOp::kLt:
    case BinaryOp::kLe:
    case BinaryOp::kGt:
    case BinaryOp::kGe:
      return kPrecCmp;
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
      return kPrecAdd;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod:
      return kPrecMul;
    case BinaryOp::kMin:
    case BinaryOp::kMax:
      return kPrecAtom;
  }
  return kPrecAtom;
}

std::string_view BinaryOpText(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return " + ";
    case BinaryOp::kSub:
      return " - ";
    case BinaryOp::kMul:
      return " * ";
    case BinaryOp::kDiv:
      return " / ";
    case BinaryOp::kFloorDiv:
      return " // ";
    case BinaryOp::kFloorMod:
      return " % ";
    case BinaryOp::kEq:
      return " == ";
    case BinaryOp::kNe:
      return " != ";
    case BinaryOp::kLt:
      return " < ";
    case BinaryOp::kLe:
      return " <= ";
    case BinaryOp::kGt:
      return " > ";
    case BinaryOp::kGe:
      return " >= ";
    case BinaryOp::kAnd:
      return " and ";
    case BinaryOp::kOr:
      return " or ";
    case BinaryOp::kMin:
    case BinaryOp::kMax:
      return ", ";
  }
  return " ? ";
}

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

class Printer {
 public:
  explicit Printer(const Program* program) : program_(program) {}

  std::string Take() { return std::move(out_); }

  void PrintProgram(const Program& p) {
    std::unordered_set<std::string> dim_names;
    for (const auto& d : p.dynamic_dims) {
      if (!d) continue;
      std::string base = Sanitize(d->name_hint), cand = base;
      for (int k = 1; dim_names.count(cand); ++k) cand = fmt::format("{}_{}", base, k);
      dim_names.insert(cand);
      out_ += fmt::format("{} = pl.dynamic({})\n", cand, Quote(cand));
      dim_names_.emplace_back(d.get(), std::move(cand));
    }
    if (!p.dynamic_dims.empty()) out_ += '\n';
    out_ += "@pl.program\n";
    out_ += fmt::format("class {}:\n", p.name);
    if (p.functions.empty()) out_ += "    pass\n";
    bool first = true;
    for (const auto& f : p.functions) {
      if (!first) out_ += '\n';
      first = false;
      PrintFunction(*f);
    }
  }

  void PrintFunction(const Function& f) {
    ResetFunction();
    // Program-level dims keep their module name in every function.
    for (const auto& [v, n] : dim_names_) {
      used_names_.insert(n);
      names_.emplace(v, n);
    }
    for (const auto& p : f.params) AssignName(p);
    CollectDefs(f.body);
    std::vector<std::string> deco;
    if (f.func_type != FunctionType::kOpaque) {
      deco.push_back(fmt::format("type=pl.FunctionType.{}", FunctionTypeName(f.func_type)));
    }
    if (f.level) deco.push_back(fmt::format("level=pl.Level.{}", LevelName(*f.level)));
    if (f.role) deco.push_back(fmt::format("role=pl.Role.{}", RoleName(*f.role)));
    out_ += deco.empty() ? "    @pl.function\n"
                         : fmt::format("    @pl.function({})\n", fmt::join(deco, ", "));
    out_ += fmt::format("    def {}(self", f.name);
    for (size_t i = 0; i < f.params.size(); ++i) {
      out_ += ", ";
      out_ += NameOf(f.params[i]);
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
      for (size_t i = 0; i < f.return_types.size(); ++i) {
        if (i) out_ += ", ";
        PrintType(f.return_types[i]);
      }
      out_ += ']';
    } else if (FirstReturnHasValues(f.body)) {
      // Without it the reader would deduce return types from that return.
      out_ += " -> None";
    }
    out_ += ":\n";
    // The body first: window declarations are named in order of first use.
    std::string header = std::move(out_);
    out_.clear();
    PrintBodyStmts(f.body, 2);
    std::string body = std::move(out_);
    out_ = std::move(header);
    for (size_t i = 0; i < window_order_.size(); ++i) {
      const WindowBuffer* wb = window_order_[i];
      std::string decl =
          fmt::format("        pl._dump.window_buffer({}, base={}, size=", Quote(window_names_[wb]),
                      Quote(wb->base ? NameOf(wb->base) : std::string()));
      std::string saved = std::move(out_);
      out_.clear();
      if (wb->size) {
        PrintExpr(wb->size, 0);
      } else {
        out_ += "None";
      }
      decl += out_;
      out_ = std::move(saved);
      decl +=
          fmt::format(", load_from_host={}, store_to_host={})\n",
                      wb->load_from_host ? "True" : "False", wb->store_to_host ? "True" : "False");
      out_ += decl;
    }
    if (body.empty() && window_order_.empty()) body = "        pass\n";
    out_ += body;
  }

  // ---- names

  void ResetFunction() {
    names_.clear();
    used_names_.clear();
    window_names_.clear();
    window_order_.clear();
    used_window_names_.clear();
  }

  const std::string& AssignName(const VarPtr& v) {
    auto it = names_.find(v.get());
    if (it != names_.end()) return it->second;
    std::string base = Sanitize(v->name_hint);
    std::string cand = base;
    for (int k = 1; used_names_.count(cand); ++k) cand = fmt::format("{}_{}", base, k);
    used_names_.insert(cand);
    return names_.emplace(v.get(), std::move(cand)).first->second;
  }

  const std::string& NameOf(const VarPtr& v) { return AssignName(v); }

  const std::string& WindowName(const WindowBuffer* wb) {
    auto it = window_names_.find(wb);
    if (it != window_names_.end()) return it->second;
    std::string base = (wb->base ? NameOf(wb->base) : std::string("window")) + "_window";
    std::string cand = base;
    for (int k = 1; used_window_names_.count(cand); ++k) cand = fmt::format("{}_{}", base, k);
    used_window_names_.insert(cand);
    window_order_.push_back(wb);
    return window_names_.emplace(wb, std::move(cand)).first->second;
  }

  // Definitions in text order, so names are handed out the way a reader meets them.
  void CollectDefs(const StmtPtr& s) {
    if (!s) return;
    switch (s->kind()) {
      case NodeKind::kSeqStmts:
        for (const auto& c : static_cast<const SeqStmts&>(*s).stmts) CollectDefs(c);
        break;
      case NodeKind::kAssignStmt:
        AssignName(static_cast<const AssignStmt&>(*s).var);
        break;
      case NodeKind::kUnpackAssignStmt:
        for (const auto& v : static_cast<const UnpackAssignStmt&>(*s).vars) AssignName(v);
        break;
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ForStmt&>(*s);
        AssignName(f.loop_var);
        for (const auto& a : f.iter_args) AssignName(a);
        CollectDefs(f.body);
        for (const auto& r : f.return_vars) AssignName(r);
        break;
      }
      case NodeKind::kWhileStmt:
        CollectDefs(static_cast<const WhileStmt&>(*s).body);
        break;
      case NodeKind::kIfStmt:
        CollectDefs(static_cast<const IfStmt&>(*s).then_body);
        CollectDefs(static_cast<const IfStmt&>(*s).else_body);
        break;
      case NodeKind::kCommDomainScopeStmt:
        CollectDefs(static_cast<const CommDomainScopeStmt&>(*s).body);
        break;
      case NodeKind::kScopeStmt: {
        const auto& sc = static_cast<const ScopeStmt&>(*s);
        if (sc.as_var) AssignName(sc.as_var);
        CollectDefs(sc.body);
        break;
      }
      default:
        break;
    }
  }

  static bool FirstReturnHasValues(const StmtPtr& s) {
    int found = 0;  // 0 none yet, 1 empty return, 2 return with values
    FindFirstReturn(s, &found);
    return found == 2;
  }
  static void FindFirstReturn(const StmtPtr& s, int* found) {
    if (!s || *found) return;
    switch (s->kind()) {
      case NodeKind::kReturnStmt:
        *found = static_cast<const ReturnStmt&>(*s).values.empty() ? 1 : 2;
        return;
      case NodeKind::kSeqStmts:
        for (const auto& c : static_cast<const SeqStmts&>(*s).stmts) FindFirstReturn(c, found);
        return;
      case NodeKind::kForStmt:
        FindFirstReturn(static_cast<const ForStmt&>(*s).body, found);
        return;
      case NodeKind::kWhileStmt:
        FindFirstReturn(static_cast<const WhileStmt&>(*s).body, found);
        return;
      case NodeKind::kIfStmt:
        FindFirstReturn(static_cast<const IfStmt&>(*s).then_body, found);
        FindFirstReturn(static_cast<const IfStmt&>(*s).else_body, found);
        return;
      case NodeKind::kCommDomainScopeStmt:
        FindFirstReturn(static_cast<const CommDomainScopeStmt&>(*s).body, found);
        return;
      case NodeKind::kScopeStmt:
        FindFirstReturn(static_cast<const ScopeStmt&>(*s).body, found);
        return;
      default:
        return;
    }
  }

  // ---- statements

  void Indent(int level) { out_.append(static_cast<size_t>(level) * 4, ' '); }

  void PrintBodyStmts(const StmtPtr& body, int level) {
    if (!body) return;
    if (body->kind() == NodeKind::kSeqStmts) {
      for (const auto& s : static_cast<const SeqStmts&>(*body).stmts) PrintStmt(s, level);
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
    switch (s->kind()) {
      case NodeKind::kSeqStmts:
        PrintBodyStmts(s, level);
        return;
      case NodeKind::kAssignStmt: {
        const auto& a = static_cast<const AssignStmt&>(*s);
        Indent(level);
        const std::string& name = NameOf(a.var);
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
          if (var_known) assign_type_ = a.var->type;
        }
        PrintExpr(a.value, 0);
        alloc_lhs_ = nullptr;
        assign_type_ = nullptr;
        out_ += '\n';
        return;
      }
      case NodeKind::kEvalStmt:
        Indent(level);
        PrintExpr(static_cast<const EvalStmt&>(*s).expr, 0);
        out_ += '\n';
        return;
      case NodeKind::kReturnStmt: {
        const auto& r = static_cast<const ReturnStmt&>(*s);
        Indent(level);
        out_ += "return";
        for (size_t i = 0; i < r.values.size(); ++i) {
          out_ += i ? ", " : " ";
          PrintExpr(r.values[i], 0);
        }
        out_ += '\n';
        return;
      }
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ForStmt&>(*s);
        Indent(level);
        out_ += fmt::format("for {}", NameOf(f.loop_var));
        if (!f.iter_args.empty()) {
          out_ += ", (";
          for (size_t k = 0; k < f.iter_args.size(); ++k) {
            if (k) out_ += ", ";
            out_ += NameOf(f.iter_args[k]);
          }
          out_ += f.iter_args.size() == 1 ? ",)" : ")";
        }
        out_ += fmt::format(" in pl.{}(", ForKindName(f.kind));
        const bool unit_step = IsInt64(f.step, 1);
        if (IsInt64(f.start, 0) && unit_step) {
          PrintExpr(f.stop, 0);
        } else {
          PrintExpr(f.start, 0);
          out_ += ", ";
          PrintExpr(f.stop, 0);
          if (!unit_step) {
            out_ += ", ";
            PrintExpr(f.step, 0);
          }
        }
        if (!f.iter_args.empty()) {
          out_ += ", init_values=(";
          for (size_t k = 0; k < f.iter_args.size(); ++k) {
            if (k) out_ += ", ";
            PrintExpr(f.iter_args[k]->init_value, 0);
          }
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
        Indent(level);
        const ForStmt* owner = yield_owner_;
        if (owner && !owner->return_vars.empty()) {
          for (size_t k = 0; k < owner->return_vars.size(); ++k) {
            if (k) out_ += ", ";
            out_ += NameOf(owner->return_vars[k]);
          }
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
        Indent(level);
        for (size_t k = 0; k < u.vars.size(); ++k) {
          if (k) out_ += ", ";
          out_ += NameOf(u.vars[k]);
        }
        if (u.vars.size() == 1) out_ += ',';
        out_ += " = ";
        PrintExpr(u.value, 0);
        out_ += '\n';
        return;
      }
      case NodeKind::kSubscriptAssignStmt: {
        const auto& a = static_cast<const SubscriptAssignStmt&>(*s);
        Indent(level);
        PrintExpr(a.target, 0);
        out_ += " = ";
        PrintExpr(a.value, 0);
        out_ += '\n';
        return;
      }
      case NodeKind::kScopeStmt: {
        const auto& sc = static_cast<const ScopeStmt&>(*s);
        Indent(level);
        out_ += fmt::format("with {}(", sc.kind_name);
        PrintArgs(sc.args);
        PrintKwargs(sc.kwargs, sc.args.empty());
        out_ += ')';
        if (sc.as_var) out_ += fmt::format(" as {}", NameOf(sc.as_var));
        out_ += ":\n";
        const ForStmt* saved_owner = yield_owner_;
        yield_owner_ = nullptr;
        PrintBlock(sc.body, level + 1);
        yield_owner_ = saved_owner;
        return;
      }
      case NodeKind::kWhileStmt: {
        const auto& w = static_cast<const WhileStmt&>(*s);
        Indent(level);
        out_ += "while ";
        PrintExpr(w.cond, 0);
        out_ += ":\n";
        PrintBlock(w.body, level + 1);
        return;
      }
      case NodeKind::kIfStmt: {
        const auto* i = static_cast<const IfStmt*>(s.get());
        Indent(level);
        out_ += "if ";
        while (true) {
          PrintExpr(i->cond, 0);
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
        Indent(level);
        out_ += fmt::format("with pl._dump.comm_domain(name={}, devices=", Quote(c.name_hint));
        if (c.devices.all) {
          out_ += "\"all\"";
        } else {
          out_ += fmt::format("[{}]", fmt::join(c.devices.ids, ", "));
        }
        out_ += ", slots=[";
        for (size_t k = 0; k < c.slots.size(); ++k) {
          if (k) out_ += ", ";
          out_ += c.slots[k] ? Quote(WindowName(c.slots[k].get())) : std::string("\"\"");
        }
        out_ += "], attrs=";
        PrintKwargDict(c.attrs);
        out_ += "):\n";
        PrintBlock(c.body, level + 1);
        return;
      }
      default:
        // Whole-program statements come with a later task; make the text fail to
        // parse rather than silently drop the statement.
        Indent(level);
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

  void PrintShape(const std::vector<ExprPtr>& shape) {
    out_ += '[';
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) out_ += ", ";
      PrintExpr(shape[i], 0);
    }
    out_ += ']';
  }

  void PrintType(const TypePtr& t) {
    if (!t) {
      out_ += "pl._dump.Unknown";
      return;
    }
    switch (t->kind()) {
      case NodeKind::kScalarType:
        out_ +=
            fmt::format("pl.Scalar[pl.{}]", DataTypeName(static_cast<const ScalarType&>(*t).dtype));
        return;
      case NodeKind::kPtrType:
        out_ += "pl.Ptr";
        return;
      case NodeKind::kUnknownType:
        out_ += "pl._dump.Unknown";
        return;
      case NodeKind::kTensorType: {
        const auto& x = static_cast<const TensorType&>(*t);
        out_ += "pl.Tensor[";
        PrintShape(x.shape);
        out_ += fmt::format(", pl.{}]", DataTypeName(x.dtype));
        return;
      }
      case NodeKind::kTileType: {
        const auto& x = static_cast<const TileType&>(*t);
        out_ += "pl.Tile[";
        PrintShape(x.shape);
        out_ += fmt::format(", pl.{}]", DataTypeName(x.dtype));
        return;
      }
      case NodeKind::kDistributedTensorType: {
        const auto& x = static_cast<const DistributedTensorType&>(*t);
        out_ += "pld.DistributedTensor[";
        PrintShape(x.shape);
        out_ += fmt::format(", pl.{}", DataTypeName(x.dtype));
        if (x.window_buffer)
          out_ +=
              fmt::format(", pl._dump.window_ref({})", Quote(WindowName(x.window_buffer.get())));
        out_ += ']';
        return;
      }
      case NodeKind::kTupleType: {
        const auto& x = static_cast<const TupleType&>(*t);
        out_ += "pl.Tuple[";
        for (size_t i = 0; i < x.types.size(); ++i) {
          if (i) out_ += ", ";
          PrintType(x.types[i]);
        }
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
        return BinaryPrec(static_cast<const BinaryExpr&>(e).op);
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

  void PrintOperand(const ExprPtr& e, int min_prec) {
    bool parens = e && PrecOf(*e) < min_prec;
    if (parens) out_ += '(';
    PrintExpr(e, 0);
    if (parens) out_ += ')';
  }

  void PrintExpr(const ExprPtr& e, int /*unused*/) {
    if (!e) {
      out_ += "None";
      return;
    }
    switch (e->kind()) {
      case NodeKind::kVar:
      case NodeKind::kIterArg:
        out_ += NameOf(std::static_pointer_cast<const Var>(e));
        return;
      case NodeKind::kWindowBuffer:
        out_ += fmt::format("pl._dump.window_ref({})",
                            Quote(WindowName(static_cast<const WindowBuffer*>(e.get()))));
        return;
      case NodeKind::kConstInt: {
        const auto& c = static_cast<const ConstInt&>(*e);
        if (c.dtype == DataType::kInt64) {
          out_ += fmt::format("{}", c.value);
        } else {
          out_ += fmt::format("pl.const({}, pl.{})", c.value, DataTypeName(c.dtype));
        }
        return;
      }
      case NodeKind::kConstFloat: {
        const auto& c = static_cast<const ConstFloat&>(*e);
        if (IsBareLiteral(c)) {
          out_ += FloatLiteral(c.value);
        } else if (std::isfinite(c.value)) {
          out_ += fmt::format("pl.const({}, pl.{})", FloatLiteral(c.value), DataTypeName(c.dtype));
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
        out_ += Quote(static_cast<const ConstString&>(*e).value);
        return;
      case NodeKind::kBinaryExpr: {
        const auto& b = static_cast<const BinaryExpr&>(*e);
        if (b.op == BinaryOp::kMin || b.op == BinaryOp::kMax) {
          out_ += b.op == BinaryOp::kMin ? "pl.min(" : "pl.max(";
          PrintExpr(b.lhs, 0);
          out_ += ", ";
          PrintExpr(b.rhs, 0);
          out_ += ')';
          return;
        }
        int p = BinaryPrec(b.op);
        // Comparisons do not chain: both sides need parentheses at equal precedence.
        PrintOperand(b.lhs, p == kPrecCmp ? p + 1 : p);
        out_ += BinaryOpText(b.op);
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
          PrintExpr(u.operand, 0);
          out_ += ')';
        } else {
          PrintOperand(u.operand, kPrecUnary);
        }
        return;
      }
      case NodeKind::kMakeTuple: {
        const auto& t = static_cast<const MakeTuple&>(*e);
        out_ += '[';
        for (size_t i = 0; i < t.elements.size(); ++i) {
          if (i) out_ += ", ";
          PrintExpr(t.elements[i], 0);
        }
        out_ += ']';
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
        for (size_t i = 0; i < sub.indices.size(); ++i) {
          if (i) out_ += ", ";
          PrintExpr(sub.indices[i], 0);
        }
        out_ += ']';
        return;
      }
      case NodeKind::kSlice: {
        const auto& sl = static_cast<const Slice&>(*e);
        auto simple = [](const ExprPtr& x) { return !x || PrecOf(*x) == kPrecAtom; };
        // `c * 64 : (c + 1) * 64` reads better spaced; atoms stay tight (`0:8`).
        const char* sep = simple(sl.start) && simple(sl.stop) && simple(sl.step) ? ":" : " : ";
        if (sl.start) PrintExpr(sl.start, 0);
        out_ += sl.start ? sep : ":";
        if (sl.stop) PrintExpr(sl.stop, 0);
        if (sl.step) {
          out_ += sl.stop ? sep : ":";
          PrintExpr(sl.step, 0);
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
            out_ += fmt::format("{}", x);
          } else if constexpr (std::is_same_v<X, double>) {
            out_ += FloatLiteral(x);
          } else if constexpr (std::is_same_v<X, std::string>) {
            out_ += Quote(x);
          } else if constexpr (std::is_same_v<X, DataType>) {
            out_ += fmt::format("pl.{}", DataTypeName(x));
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
    if (e && e->kind() == NodeKind::kConstInt) {
      const auto& c = static_cast<const ConstInt&>(*e);
      out_ += fmt::format("pl.const({}, pl.{})", c.value, DataTypeName(c.dtype));
      return;
    }
    if (e && e->kind() == NodeKind::kConstFloat &&
        std::isfinite(static_cast<const ConstFloat&>(*e).value)) {
      const auto& c = static_cast<const ConstFloat&>(*e);
      out_ += fmt::format("pl.const({}, pl.{})", FloatLiteral(c.value), DataTypeName(c.dtype));
      return;
    }
    if (e && e->kind() == NodeKind::kConstBool) {
      out_ += fmt::format("pl.const({}, pl.BOOL)",
                          static_cast<const ConstBool&>(*e).value ? "True" : "False");
      return;
    }
    PrintExpr(e, 0);
  }

  void PrintKwargs(const KwargList& kwargs, bool first) {
    for (const auto& [k, v] : kwargs) {
      if (!first) out_ += ", ";
      first = false;
      out_ += k;
      out_ += '=';
      PrintAttrValue(v);
    }
  }

  void PrintKwargDict(const KwargList& kwargs) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : kwargs) {
      if (!first) out_ += ", ";
      first = false;
      out_ += Quote(k);
      out_ += ": ";
      PrintAttrValue(v);
    }
    out_ += '}';
  }

  void PrintArgs(const std::vector<ExprPtr>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) out_ += ", ";
      PrintExpr(args[i], 0);
    }
  }

  static bool ValidKwargName(const std::string& k) {
    if (k.empty() || IsReservedName(k) || (k[0] >= '0' && k[0] <= '9')) return false;
    for (char c : k) {
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
        return false;
    }
    return true;
  }

  void PrintDumpCall(const Call& c, const std::string& op_name) {
    out_ += fmt::format("pl._dump.call({}, [", Quote(op_name));
    PrintArgs(c.args);
    out_ += "], ";
    PrintType(c.type);
    if (!c.kwargs.empty()) {
      out_ += ", kwargs=";
      PrintKwargDict(c.kwargs);
    }
    if (!c.attrs.empty()) {
      out_ += ", attrs={";
      for (size_t i = 0; i < c.attrs.size(); ++i) {
        if (i) out_ += ", ";
        out_ += Quote(c.attrs[i].first);
        out_ += ": ";
        PrintExpr(c.attrs[i].second, 0);
      }
      out_ += '}';
    }
    out_ += ')';
  }

  // Whether `name` reads back as an opaque call: a dotted pl./pld. path of
  // identifiers that the reader does not give another meaning.
  static bool IsOpaqueSugarName(const std::string& name) {
    size_t dot = name.find('.');
    if (dot == std::string::npos) return false;
    std::string_view root(name.data(), dot);
    if (root != "pl" && root != "pld") return false;
    size_t b = 0;
    while (b <= name.size()) {
      size_t e = name.find('.', b);
      if (e == std::string::npos) e = name.size();
      std::string part = name.substr(b, e - b);
      if (!ValidKwargName(part) && part != "pl" && part != "pld") return false;
      b = e + 1;
    }
    static constexpr std::string_view kSpecial[] = {
        "pl.const",  "pl.min",     "pl.max",         "pl.dynamic",
        "pl.yield_", "pld.window", "pld.world_size", "pld.alloc_window_buffer"};
    for (auto sp : kSpecial) {
      if (name == sp) return false;
    }
    if (name.rfind("pl._dump", 0) == 0) return false;
    if (name.size() > 9 && name.compare(name.size() - 9, 9, ".get_byte") == 0) return false;
    return true;
  }

  bool SugarTypeMatches(const Call& c) {
    try {
      TypePtr deduced = DeduceCallType(c);
      return deduced && StructuralEqual(deduced, c.type);
    } catch (const ValueError&) {
      return false;
    }
  }

  void PrintCall(const Call& c) {
    const std::string* lhs = alloc_lhs_;
    alloc_lhs_ = nullptr;  // only the assignment's top-level call may take the sugar alloc form
    TypePtr annotated = std::move(assign_type_);
    assign_type_ = nullptr;
    bool kw_ok = true;
    for (const auto& [k, v] : c.kwargs) kw_ok = kw_ok && ValidKwargName(k);
    if (auto callee = c.Callee()) {
      PrintDispatch(c, *callee, kw_ok);
      return;
    }
    const std::string& name = c.OpName();
    const Op* op =
        c.op && c.op->kind() == NodeKind::kOp ? static_cast<const Op*>(c.op.get()) : nullptr;
    if (!op) {
      PrintDumpCall(c, "?");
      return;
    }
    if (!op->info) {
      const bool type_ok = c.type->kind() == NodeKind::kUnknownType ||
                           (annotated && StructuralEqual(c.type, annotated));
      if (kw_ok && c.attrs.empty() && type_ok && IsOpaqueSugarName(name)) {
        out_ += name;
        out_ += '(';
        PrintArgs(c.args);
        PrintKwargs(c.kwargs, c.args.empty());
        out_ += ')';
      } else {
        PrintDumpCall(c, name);
      }
      return;
    }
    const bool sugar = op->info && c.attrs.empty() && kw_ok && SugarTypeMatches(c);
    if (sugar && name == ops::kAllocWindowBuffer) {
      const AttrValue* nm = FindKwarg(c.kwargs, "name");
      const std::string* nm_str = nm ? std::get_if<std::string>(nm) : nullptr;
      if (nm_str) {
        const bool last = c.kwargs.back().first == "name";
        if (lhs && last && *nm_str == *lhs && !sugar_allocs_.count(*nm_str)) {
          sugar_allocs_.insert(*nm_str);
          out_ += name;
          out_ += '(';
          PrintArgs(c.args);
          KwargList rest(c.kwargs.begin(), c.kwargs.end() - 1);
          PrintKwargs(rest, c.args.empty());
          out_ += ')';
          return;
        }
        out_ += "pl._dump.alloc_window_buffer(";
        PrintArgs(c.args);
        PrintKwargs(c.kwargs, c.args.empty());
        out_ += ')';
        return;
      }
      PrintDumpCall(c, name);
      return;
    }
    if (!sugar) {
      PrintDumpCall(c, name);
      return;
    }
    out_ += name;
    out_ += '(';
    PrintArgs(c.args);
    PrintKwargs(c.kwargs, c.args.empty());
    out_ += ')';
  }

  void PrintDispatch(const Call& c, const GlobalVar& callee, bool kw_ok) {
    const Function* fn = nullptr;
    if (program_) {
      auto f = program_->FindFunction(callee.name);
      fn = f.get();
    }
    bool sugar = fn && c.kwargs.empty() && c.args.size() == fn->params.size() &&
                 (c.attrs.empty() ||
                  (c.attrs.size() == 1 && c.attrs[0].first == "device" && c.attrs[0].second));
    if (sugar) {
      TypePtr want = fn->return_types.empty() ? TypePtr(UnknownType::Get())
                     : fn->return_types.size() == 1
                         ? fn->return_types[0]
                         : TypePtr(std::make_shared<TupleType>(fn->return_types));
      sugar = StructuralEqual(want, c.type);
    }
    (void)kw_ok;
    if (!sugar) {
      PrintDumpCall(c, "self." + callee.name);
      return;
    }
    out_ += fmt::format("self.{}(", callee.name);
    PrintArgs(c.args);
    if (!c.attrs.empty()) {
      out_ += c.args.empty() ? "device=" : ", device=";
      PrintExpr(c.attrs[0].second, 0);
    }
    out_ += ')';
  }

 private:
  const Program* program_;
  std::string out_;
  std::unordered_map<const Var*, std::string> names_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<const WindowBuffer*, std::string> window_names_;
  std::vector<const WindowBuffer*> window_order_;
  std::unordered_set<std::string> used_window_names_;
  std::unordered_set<std::string> sugar_allocs_;
  const std::string* alloc_lhs_ = nullptr;
  // The type an opaque call may take from the annotation of its assignment.
  TypePtr assign_type_;
  // The loop whose direct body is printed: its YieldStmt binds its return_vars.
  const ForStmt* yield_owner_ = nullptr;
  std::vector<std::pair<const Var*, std::string>> dim_names_;
};

}  // namespace

std::string PrintProgram(const ProgramPtr& program) {
  if (!program) return {};
  Printer p(program.get());
  p.PrintProgram(*program);
  return p.Take();
}

std::string PrintNode(const NodePtr& node) {
  if (!node) return "<null>";
  Printer p(nullptr);
  if (node->kind() == NodeKind::kProgram)
    return PrintProgram(std::static_pointer_cast<const Program>(node));
  if (node->kind() == NodeKind::kFunction) {
    p.PrintFunction(static_cast<const Function&>(*node));
  } else if (IsStmtKind(node->kind())) {
    p.PrintStmt(std::static_pointer_cast<const Stmt>(node), 0);
  } else if (IsExprKind(node->kind())) {
    p.PrintExpr(std::static_pointer_cast<const Expr>(node), 0);
  } else if (IsTypeKind(node->kind())) {
    p.PrintType(std::static_pointer_cast<const Type>(node));
  } else if (node->kind() == NodeKind::kOp) {
    return static_cast<const Op&>(*node).name;
  }
  return p.Take();
}

}  // namespace cds::ir
