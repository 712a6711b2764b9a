#include "ir/printer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/op_registry.h"
#include "ir/print_prefetch.h"
#include "ir/structural_equal.h"
#include "ir/walk.h"

namespace cds::ir {

namespace {

bool IsReservedName(std::string_view s) {
  static constexpr std::string_view kWords[] = {
      "and",    "as",    "assert", "async",  "await",  "break",   "class",    "continue",
      "def",    "del",   "elif",   "else",   "except", "finally", "for",      "from",
      "global", "if",    "import", "in",     "is",     "lambda",  "nonlocal", "not",
      "or",     "pass",  "raise",  "return", "try",    "while",   "with",     "yield",
      "True",   "False", "None",   "pl",     "pld",    "self"};
  if (s.empty()) return false;
  for (auto w : kWords) {
    if (w.size() == s.size() && w[0] == s[0] && w == s) return true;
  }
  return false;
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Whether Sanitize would return the hint unchanged.
bool IsPlainName(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!IsIdentChar(c)) return false;
  }
  return !IsReservedName(s);
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

// A name in use, and the k at which the search for a free `name_k` resumes.
using UsedNames = absl::flat_hash_map<std::string_view, uint32_t>;

class Printer {
 public:
  explicit Printer(const Program* program) : program_(program) {}

  std::string Take() { return std::move(out_); }

  void PrintProgram(const Program& p) {
    absl::flat_hash_set<std::string> dim_names;
    for (const auto& d : p.dynamic_dims) {
      if (!d) continue;
      std::string base = Sanitize(d->name_hint), cand = base;
      for (int k = 1; dim_names.contains(cand); ++k) cand = fmt::format("{}_{}", base, k);
      dim_names.insert(cand);
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
      ReserveForTheRest(i + 1, p.functions.size());
    }
  }

  // The text so far predicts the rest: reserve for it once, instead of letting the
  // doubling of a large buffer copy the text and fault in twice its pages. From
  // 64 KiB on, where malloc starts handing out fresh mappings.
  void ReserveForTheRest(size_t done, size_t total) {
    if (done == total || out_.capacity() - out_.size() >= 4096 || out_.size() < (size_t{64} << 10))
      return;
    const double rest = static_cast<double>(out_.size()) / static_cast<double>(done) *
                        static_cast<double>(total - done);
    // A quarter more than predicted, should the first functions be short: a second
    // reserve would copy the whole text again.
    out_.reserve(out_.size() + static_cast<size_t>(rest * 1.25) + (size_t{64} << 10));
    // A buffer this large is a fresh mapping: fault it in with one call rather than
    // a trap per page as the text reaches it.
    node_arena::PopulateForWrite(out_.data() + out_.size(), out_.capacity() - out_.size());
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
    // Program-level dims keep their module name in every function.
    for (const auto& [v, n] : dim_names_) {
      used_names_.try_emplace(n, 1);
      names_.try_emplace(v, n);
    }
    for (const auto& p : f.params) AssignName(p.get());
    if (f.body) CollectDefs(*f.body);
    out_ += "    @pl.function";
    if (f.func_type != FunctionType::kOpaque || f.level || f.role) {
      char sep = '(';
      if (f.func_type != FunctionType::kOpaque) {
        out_ += sep;
        out_ += "type=pl.FunctionType.";
        out_ += FunctionTypeName(f.func_type);
        sep = ',';
      }
      if (f.level) {
        out_ += sep;
        if (sep == ',') out_ += ' ';
        out_ += "level=pl.Level.";
        out_ += LevelName(*f.level);
        sep = ',';
      }
      if (f.role) {
        out_ += sep;
        if (sep == ',') out_ += ' ';
        out_ += "role=pl.Role.";
        out_ += RoleName(*f.role);
      }
      out_ += ')';
    }
    out_ += "\n    def ";
    out_ += f.name;
    out_ += "(self";
    for (size_t i = 0; i < f.params.size(); ++i) {
      out_ += ", ";
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
      for (size_t i = 0; i < f.return_types.size(); ++i) {
        if (i) out_ += ", ";
        PrintType(f.return_types[i]);
      }
      out_ += ']';
    } else if (f.body && FirstReturn(*f.body) == kReturnWithValues) {
      // Without it the reader would deduce return types from that return.
      out_ += " -> None";
    }
    out_ += ":\n";
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
        PrintExpr(wb->size, 0);
      } else {
        out_ += "None";
      }
      out_ += wb->load_from_host ? ", load_from_host=True" : ", load_from_host=False";
      out_ += wb->store_to_host ? ", store_to_host=True)\n" : ", store_to_host=False)\n";
    }
    std::swap(out_, decls);
    out_.insert(body_at, decls);
  }

  // ---- names

  void ResetFunction() {
    names_.clear();
    used_names_.clear();
    window_index_.clear();
    windows_.clear();
    used_window_names_.clear();
    made_names_.clear();
  }

  // Names are views: into the Var's own hint when that is already a usable
  // identifier (nearly always), else into made_names_.
  std::string_view AssignName(const Var* v) {
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

  // A use of a variable: named already when its definition is in the function.
  std::string_view NameOf(const Var* v) { return AssignName(v); }

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

  // Names the definitions of `s` in text order.
  void CollectDefs(const Stmt& s) {
    switch (s.kind()) {
      case NodeKind::kAssignStmt:
        AssignName(static_cast<const AssignStmt&>(s).var.get());
        return;
      case NodeKind::kUnpackAssignStmt:
        for (const auto& v : static_cast<const UnpackAssignStmt&>(s).vars) AssignName(v.get());
        return;
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ForStmt&>(s);
        AssignName(f.loop_var.get());
        for (const auto& a : f.iter_args) AssignName(a.get());
        if (f.body) CollectDefs(*f.body);
        // Bound by the body's yield, written after the body.
        for (const auto& r : f.return_vars) AssignName(r.get());
        return;
      }
      case NodeKind::kScopeStmt: {
        const auto& sc = static_cast<const ScopeStmt&>(s);
        if (sc.as_var) AssignName(sc.as_var.get());
        if (sc.body) CollectDefs(*sc.body);
        return;
      }
      default:
        ForEachSubStmt(s, [&](const StmtPtr& c) { CollectDefs(*c); });
    }
  }

  enum FirstReturnKind { kNoReturn, kEmptyReturn, kReturnWithValues };
  // The first return statement of `s` in text order.
  static FirstReturnKind FirstReturn(const Stmt& s) {
    if (s.kind() == NodeKind::kReturnStmt)
      return static_cast<const ReturnStmt&>(s).values.empty() ? kEmptyReturn : kReturnWithValues;
    FirstReturnKind found = kNoReturn;
    ForEachSubStmt(s, [&](const StmtPtr& c) {
      if (found == kNoReturn) found = FirstReturn(*c);
    });
    return found;
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
    switch (s->kind()) {
      case NodeKind::kSeqStmts:
        PrintBodyStmts(s, level);
        return;
      case NodeKind::kAssignStmt: {
        const auto& a = static_cast<const AssignStmt&>(*s);
        Indent(level);
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
        out_ += "for ";
        out_ += NameOf(f.loop_var.get());
        if (!f.iter_args.empty()) {
          out_ += ", (";
          for (size_t k = 0; k < f.iter_args.size(); ++k) {
            if (k) out_ += ", ";
            out_ += NameOf(f.iter_args[k].get());
          }
          out_ += f.iter_args.size() == 1 ? ",)" : ")";
        }
        out_ += " in pl.";
        out_ += ForKindName(f.kind);
        out_ += '(';
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
            out_ += NameOf(owner->return_vars[k].get());
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
          out_ += NameOf(u.vars[k].get());
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
        out_ += "with pl._dump.comm_domain(name=";
        QuoteTo(out_, c.name_hint);
        out_ += ", devices=";
        if (c.devices.all) {
          out_ += "\"all\"";
        } else {
          out_ += '[';
          for (size_t k = 0; k < c.devices.ids.size(); ++k) {
            if (k) out_ += ", ";
            IntTo(out_, c.devices.ids[k]);
          }
          out_ += ']';
        }
        out_ += ", slots=[";
        for (size_t k = 0; k < c.slots.size(); ++k) {
          if (k) out_ += ", ";
          if (c.slots[k]) {
            WindowRefTo(c.slots[k].get());
          } else {
            out_ += "\"\"";
          }
        }
        out_ += "], attrs=";
        PrintKwargDict(c.attrs);
        out_ += "):\n";
        PrintBlock(c.body, level + 1);
        return;
      }
      default:
        // A statement the printer does not know: make the text fail to parse rather
        // than silently drop the statement.
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

  // `PREFIX[SHAPE], pl.DTYPE`, the common part of the shaped types.
  void PrintShapeAndDtype(std::string_view prefix, std::span<const ExprPtr> shape, DataType dtype) {
    out_ += prefix;
    out_ += '[';
    PrintArgs(shape);
    out_ += "], pl.";
    out_ += DataTypeName(dtype);
  }

  void PrintType(const TypePtr& t) {
    if (!t) {
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
      case NodeKind::kUnknownType:
        out_ += "pl._dump.Unknown";
        return;
      case NodeKind::kTensorType: {
        const auto& x = static_cast<const TensorType&>(*t);
        PrintShapeAndDtype("pl.Tensor[", x.shape, x.dtype);
        out_ += ']';
        return;
      }
      case NodeKind::kTileType: {
        const auto& x = static_cast<const TileType&>(*t);
        PrintShapeAndDtype("pl.Tile[", x.shape, x.dtype);
        out_ += ']';
        return;
      }
      case NodeKind::kDistributedTensorType: {
        const auto& x = static_cast<const DistributedTensorType&>(*t);
        PrintShapeAndDtype("pld.DistributedTensor[", x.shape, x.dtype);
        if (x.window_buffer) {
          out_ += ", pl._dump.window_ref(";
          WindowRefTo(x.window_buffer.get());
          out_ += ')';
        }
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
        out_ += NameOf(static_cast<const Var*>(e.get()));
        return;
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
        out_ += t.parenthesized ? '(' : '[';
        for (size_t i = 0; i < t.elements.size(); ++i) {
          if (i) out_ += ", ";
          PrintExpr(t.elements[i], 0);
        }
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
    if (e && e->kind() == NodeKind::kConstInt) {
      const auto& c = static_cast<const ConstInt&>(*e);
      ConstTo(c.value, c.dtype);
      return;
    }
    if (e && e->kind() == NodeKind::kConstFloat &&
        std::isfinite(static_cast<const ConstFloat&>(*e).value)) {
      const auto& c = static_cast<const ConstFloat&>(*e);
      ConstTo(c.value, c.dtype);
      return;
    }
    if (e && e->kind() == NodeKind::kConstBool) {
      out_ += fmt::format("pl.const({}, pl.BOOL)",
                          static_cast<const ConstBool&>(*e).value ? "True" : "False");
      return;
    }
    PrintExpr(e, 0);
  }

  // The first `count` keyword arguments (all by default).
  void PrintKwargs(std::span<const Kwarg> kwargs, bool first, size_t count = SIZE_MAX) {
    count = std::min(count, kwargs.size());
    for (size_t i = 0; i < count; ++i) {
      const auto& [k, v] = kwargs[i];
      if (!first) out_ += ", ";
      first = false;
      out_ += k;
      out_ += '=';
      PrintAttrValue(v);
    }
  }

  void PrintKwargDict(std::span<const Kwarg> kwargs) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : kwargs) {
      if (!first) out_ += ", ";
      first = false;
      QuoteTo(out_, k);
      out_ += ": ";
      PrintAttrValue(v);
    }
    out_ += '}';
  }

  void PrintArgs(std::span<const ExprPtr> args) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) out_ += ", ";
      PrintExpr(args[i], 0);
    }
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
      out_ += ", attrs={";
      for (size_t i = 0; i < c.attrs.size(); ++i) {
        if (i) out_ += ", ";
        QuoteTo(out_, c.attrs[i].first);
        out_ += ": ";
        PrintExpr(c.attrs[i].second, 0);
      }
      out_ += '}';
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
    for (auto sp : kSpecial) {
      if (name == sp) return false;
    }
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
      const bool type_ok = c.type->kind() == NodeKind::kUnknownType ||
                           (annotated && SameType(c.type, *annotated));
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
      const AttrValue* name_kwarg = FindKwarg(c.kwargs, "name");
      if (const std::string* nm_str = name_kwarg ? std::get_if<std::string>(name_kwarg) : nullptr) {
        const bool last = c.kwargs.back().first == "name";
        if (lhs && last && *nm_str == *lhs && sugar_allocs_.insert(*nm_str).second) {
          out_ += name;
          out_ += '(';
          PrintArgs(c.args);
          PrintKwargs(c.kwargs, c.args.empty(), c.kwargs.size() - 1);
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
      PrintExpr(c.attrs[0].second, 0);
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
    if (callee_valid_ && callee_.name == name) return callee_;
    callee_valid_ = true;
    callee_.name = name;
    callee_.fn = nullptr;
    callee_.want = nullptr;
    if (program_) {
      // The program outlives the printer.
      callee_.fn = program_->FindFunction(name).get();
    }
    if (const Function* fn = callee_.fn) {
      callee_.want = fn->return_types.empty() ? TypePtr(UnknownType::Get())
                     : fn->return_types.size() == 1
                         ? fn->return_types[0]
                         : TypePtr(ir::MakeNode<TupleType>(fn->return_types));
    }
    return callee_;
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
  absl::flat_hash_map<const Var*, std::string_view> names_;
  UsedNames used_names_;
  absl::flat_hash_map<const WindowBuffer*, size_t> window_index_;
  std::vector<WindowEntry> windows_;  // in order of first use = declaration order
  UsedNames used_window_names_;
  std::deque<std::string> made_names_;  // names that are not a Var's own hint
  Callee callee_;
  bool callee_valid_ = false;
  // Alloc names printed in the sugar form, program-wide. Views into the alloc
  // calls' name= strings: the program outlives the printer.
  absl::flat_hash_set<std::string_view> sugar_allocs_;
  print_detail::ArenaSweep sweep_;
  const std::string_view* alloc_lhs_ = nullptr;
  // The type an opaque call may take from the annotation of its assignment.
  const TypePtr* assign_type_ = nullptr;
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
    return PrintProgram(PtrCast<const Program>(node));
  if (node->kind() == NodeKind::kFunction) {
    p.PrintFunction(static_cast<const Function&>(*node));
  } else if (IsStmtKind(node->kind())) {
    p.PrintStmt(PtrCast<const Stmt>(node), 0);
  } else if (IsExprKind(node->kind())) {
    p.PrintExpr(PtrCast<const Expr>(node), 0);
  } else if (IsTypeKind(node->kind())) {
    p.PrintType(PtrCast<const Type>(node));
  } else if (node->kind() == NodeKind::kOp) {
    return static_cast<const Op&>(*node).name;
  }
  return p.Take();
}

}  // namespace cds::ir
