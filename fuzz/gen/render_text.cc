#include <iterator>

#include <fmt/format.h>

#include "fuzz/gen/render.h"
#include "fuzz/gen/render_common.h"
#include "ir/error.h"

namespace cds::fuzz {

using detail::kReduceSum;
using ir::DataType;

namespace {

std::string DTypeText(DataType dt) { return fmt::format("pl.{}", ir::DataTypeName(dt)); }

std::string_view BinOpText(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::kAdd:
      return "+";
    case ir::BinaryOp::kSub:
      return "-";
    case ir::BinaryOp::kMul:
      return "*";
    case ir::BinaryOp::kFloorDiv:
      return "//";
    case ir::BinaryOp::kFloorMod:
      return "%";
    case ir::BinaryOp::kLt:
      return "<";
    case ir::BinaryOp::kLe:
      return "<=";
    case ir::BinaryOp::kGt:
      return ">";
    case ir::BinaryOp::kGe:
      return ">=";
    case ir::BinaryOp::kEq:
      return "==";
    case ir::BinaryOp::kNe:
      return "!=";
    default:
      break;
  }
  CDS_CHECK(false, "binary op without an infix spelling in the generator");
  return "?";
}

// Appends piece(i) for each i in [0, n) to `text`, separated by ", ": a list
// spelled straight into its line, without a string per element.
template <typename Piece>
void AppendList(std::string& text, size_t n, Piece&& piece) {
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) text += ", ";
    piece(i);
  }
}

class TextWriter {
 public:
  explicit TextWriter(const ProgramModel& m, std::vector<int>* lines) : m_(m), lines_(lines) {}

  std::string Render() {
    // Roughly a line per statement and a few per function: the text grows once or not at all.
    out_.reserve(512 + 160 * m_.functions.size() + 64 * static_cast<size_t>(m_.num_stmts));
    Line(0, "import pypto.language as pl");
    Line(0, "import pypto.language.distributed as pld");
    Line(0, "");
    if (m_.dynamic_dim >= 0) {
      LineF(0, "{} = pl.dynamic(\"{}\")", Name(m_.dynamic_dim), Name(m_.dynamic_dim));
      Line(0, "");
    }
    Line(0, "");
    Line(0, "@pl.program");
    LineF(0, "class {}:", m_.name);
    for (size_t i = 0; i < m_.functions.size(); ++i) {
      if (i > 0) Line(0, "");
      Function(m_.functions[i]);
    }
    return std::move(out_);
  }

 private:
  void Line(int indent, std::string_view text) {
    if (!text.empty()) out_.append(static_cast<size_t>(indent) * 4, ' ');
    out_.append(text);
    out_.push_back('\n');
    ++line_;
  }
  // A non-empty line formatted straight into the text, with `name = ` in front when
  // `bind` defines a value: no temporary string per line.
  template <typename... Args>
  void BindLineF(int indent, const StmtModel* bind, fmt::format_string<Args...> format,
                 Args&&... args) {
    out_.append(static_cast<size_t>(indent) * 4, ' ');
    if (bind && bind->def >= 0) {
      out_.append(Name(bind->def));
      out_.append(" = ");
    }
    fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
    out_.push_back('\n');
    ++line_;
  }
  template <typename... Args>
  void LineF(int indent, fmt::format_string<Args...> format, Args&&... args) {
    BindLineF(indent, nullptr, format, std::forward<Args>(args)...);
  }
  void BindLine(int indent, const StmtModel& s, std::string_view rhs) {
    BindLineF(indent, &s, "{}", rhs);
  }
  void Mark(const StmtModel& s) {
    if (lines_ && s.id >= 0) {
      if (lines_->size() <= static_cast<size_t>(s.id))
        lines_->resize(static_cast<size_t>(s.id) + 1, 0);
      (*lines_)[static_cast<size_t>(s.id)] = line_ + 1;
    }
  }

  const std::string& Name(int v) const { return m_.values[v].name; }

  std::string SigText(const TensorSig& sig) const { return DimsText(sig.dims); }

  std::string DimsText(const absl::InlinedVector<Dim, 2>& dims) const {
    std::string text = "[";
    AppendList(text, dims.size(), [&](size_t i) {
      const Dim& d = dims[i];
      if (d.var >= 0) {
        text += Name(d.var);
      } else {
        fmt::format_to(std::back_inserter(text), "{}", d.constant);
      }
    });
    text += ']';
    return text;
  }

  std::string Expr(const SExpr& e, bool nested = false) const {
    switch (e.kind) {
      case SExpr::Kind::kConst:
        return std::to_string(e.constant);
      case SExpr::Kind::kVar:
        return Name(e.var);
      case SExpr::Kind::kWorldSize:
        return "pld.world_size()";
      case SExpr::Kind::kBytesOf:
        return fmt::format("{}.get_byte()", DTypeText(e.dtype));
      case SExpr::Kind::kBinary: {
        std::string s = fmt::format("{} {} {}", Expr(e.operands[0], true), BinOpText(e.op),
                                    Expr(e.operands[1], true));
        return nested ? "(" + s + ")" : s;
      }
      // Parenthesized so that a leading `-` never meets a literal (`-5` is a ConstInt).
      case SExpr::Kind::kNeg:
        return fmt::format("-({})", Expr(e.operands[0]));
      case SExpr::Kind::kSubscript: {
        std::string text = Name(e.var) + "[";
        AppendList(text, e.operands.size(), [&](size_t i) { text += Expr(e.operands[i]); });
        text += ']';
        return text;
      }
      case SExpr::Kind::kSlice: {
        std::string t = Expr(e.operands[0]) + ":" + Expr(e.operands[1]);
        if (e.operands[2].kind != SExpr::Kind::kNone) t += ":" + Expr(e.operands[2]);
        return t;
      }
      case SExpr::Kind::kNone:
        return "";
      case SExpr::Kind::kTuple: {
        std::string text = "(";
        AppendList(text, e.operands.size(), [&](size_t i) { text += Expr(e.operands[i]); });
        text += e.operands.size() == 1 ? ",)" : ")";
        return text;
      }
    }
    return "?";
  }

  std::string ParamText(int p) const {
    const ValueModel& v = m_.values[p];
    if (v.local)
      return fmt::format("{}: pl.Tensor[{}, {}]", v.name, SigText(v.sig), DTypeText(v.sig.dtype));
    const std::string window =
        fmt::format("pld.DistributedTensor[{}, {}]", SigText(v.sig), DTypeText(v.sig.dtype));
    return fmt::format("{}: {}", v.name, v.inout ? "pl.InOut[" + window + "]" : window);
  }

  void Function(const FunctionModel& f) {
    std::string deco;
    switch (f.decl) {
      case DeclForm::kHostLevelRole:
        deco = "level=pl.Level.HOST, role=pl.Role.Orchestrator";
        break;
      case DeclForm::kHostTypeLevel:
        deco = "type=pl.FunctionType.Orchestration, level=pl.Level.HOST";
        break;
      case DeclForm::kChipType:
        deco = "type=pl.FunctionType.Orchestration";
        break;
      case DeclForm::kChipLevelRole:
        deco = "level=pl.Level.CHIP, role=pl.Role.Orchestrator";
        break;
      case DeclForm::kGraphType:
        deco = "type=pl.FunctionType.Graph";
        break;
      case DeclForm::kGraphLevelRole:
        deco = "type=pl.FunctionType.Graph, level=pl.Level.CHIP, role=pl.Role.Orchestrator";
        break;
      case DeclForm::kInCoreType:
        deco = "type=pl.FunctionType.InCore";
        break;
    }
    LineF(1, "@pl.function({})", deco);
    std::string params = "self";
    for (int p : f.params) params += ", " + ParamText(p);
    def_lines_.push_back(line_ + 1);
    LineF(1, "def {}({}):", f.name, params);
    if (f.role != FuncRole::kHostOrch) {
      for (const StmtModel& s : f.body) Stmt(s, 2);
      LineF(2, "return {}", Name(f.params[0]));
      return;
    }
    Body(f.body, 2);
  }

  void Body(const std::vector<StmtModel>& body, int indent) {
    if (body.empty()) Line(indent, "pass");
    for (const StmtModel& s : body) Stmt(s, indent);
  }

  std::string AllocText(const AllocModel& a) const {
    std::string size = a.size_form == SizeForm::kShape
                           ? fmt::format("{}, dtype={}", DimsText(a.shape), DTypeText(a.dtype))
                           : Expr(a.size);
    if (a.dump_form)
      return fmt::format("pl._dump.alloc_window_buffer({}, name=\"{}\")", size, a.name);
    return fmt::format("pld.alloc_window_buffer({})", size);
  }

  std::string LoopText(const LoopModel& l) const {
    switch (l.form) {
      case LoopForm::kWorldSize:
        return "pl.range(pld.world_size())";
      case LoopForm::kWorldSizeExplicit:
        return "pl.range(0, pld.world_size(), 1)";
      case LoopForm::kWorldSizeTemp:
      case LoopForm::kStopTemp:
      case LoopForm::kVarBound:
        return fmt::format("pl.range({})", Name(l.bound_var));
      case LoopForm::kStop:
        return fmt::format("pl.range({})", l.stop);
      case LoopForm::kStartStop:
        return fmt::format("pl.range({}, {})", l.start, l.stop);
      case LoopForm::kStartStopStep1:
        return fmt::format("pl.range({}, {}, 1)", l.start, l.stop);
      case LoopForm::kStep:
        return fmt::format("pl.range({}, {}, {})", l.start, l.stop, l.step);
      case LoopForm::kWorldSizeStart:
        return fmt::format("pl.range({}, pld.world_size())", l.start);
    }
    return "?";
  }

  std::string DeviceText(const DispatchModel& d) const {
    switch (d.form) {
      case DeviceForm::kConst:
      case DeviceForm::kNegative:
        return std::to_string(d.constant);
      case DeviceForm::kLoopVar:
      case DeviceForm::kNotLoopVar:
        return Name(d.device_var);
      case DeviceForm::kExpr:
        return fmt::format("{} + {}", Name(d.device_var), d.constant);
      case DeviceForm::kUnplaced:
        return "";
    }
    return "?";
  }

  std::string DispatchText(const DispatchModel& d, const std::string* first_arg = nullptr) const {
    std::string text = fmt::format("self.{}(", m_.functions[d.callee].name);
    AppendList(text, d.args.size(),
               [&](size_t i) { text += i == 0 && first_arg ? *first_arg : Name(d.args[i]); });
    if (d.form != DeviceForm::kUnplaced) {
      fmt::format_to(std::back_inserter(text), "{}device={}", d.args.empty() ? "" : ", ",
                     DeviceText(d));
    }
    text += ')';
    return text;
  }

  std::string CollText(const CollectiveModel& c) const {
    std::string text = fmt::format("{}(", CollOpName(c.kind));
    auto arg = [&text, first = true]<typename... Args>(fmt::format_string<Args...> format,
                                                       Args&&... args) mutable {
      if (!first) text += ", ";
      first = false;
      fmt::format_to(std::back_inserter(text), format, std::forward<Args>(args)...);
    };
    for (int a : c.args) arg("{}", Name(a));
    switch (c.kind) {
      case CollKind::kAllReduce:
        arg("op={}", kReduceSum);
        if (c.core_num > 0 || c.explicit_core_num) arg("core_num={}", c.core_num);
        break;
      case CollKind::kReduceScatter:
        arg("op={}", kReduceSum);
        break;
      case CollKind::kBroadcast:
        arg("root={}", c.root);
        break;
      default:
        break;
    }
    text += ')';
    return text;
  }

  void Stmt(const StmtModel& s, int indent) {
    Mark(s);
    switch (s.kind) {
      case StmtKind::kAlloc:
        return BindLine(indent, s, AllocText(m_.allocs[s.ref]));
      case StmtKind::kView:
        return View(s, indent);
      case StmtKind::kAlias:
        return BindLine(indent, s, Name(s.src));
      case StmtKind::kScalar:
        return BindLine(indent, s, Expr(s.expr));
      case StmtKind::kDispatch:
        return BindLine(indent, s, DispatchText(m_.dispatches[s.ref]));
      case StmtKind::kCollective:
        return CollectiveBinding(s, indent);
      case StmtKind::kFor:
        return Loop(s, indent);
      case StmtKind::kYield:
        return Yield(s, indent);
      case StmtKind::kScope:
        return Scope(s, indent);
      case StmtKind::kOpaque:
        return Opaque(s, indent);
      case StmtKind::kUnpack:
        return Unpack(s, indent);
      case StmtKind::kSubscriptAssign:
        return LineF(indent, "{} = {}", Expr(s.expr), Expr(s.expr2));
      case StmtKind::kWhile:
        return WhileLoop(s, indent);
      case StmtKind::kIf:
        return IfElse(s, indent);
      case StmtKind::kTensorCreate:
        return TensorCreate(s, indent);
      case StmtKind::kTensorAdd:
        return BindLineF(indent, &s, "pl.tensor.add({}, {})", Name(s.src), Name(s.src2));
      case StmtKind::kReturn:
        return Return(s, indent);
    }
  }

  void View(const StmtModel& s, int indent) {
    const ValueModel& v = m_.values[s.def];
    BindLineF(indent, &s, "pld.window({}, {}, dtype={})", Name(m_.allocs[s.ref].var),
              SigText(v.sig), DTypeText(v.sig.dtype));
  }

  void CollectiveBinding(const StmtModel& s, int indent) {
    const CollectiveModel& c = m_.collectives[s.ref];
    const std::string call = CollText(c);
    switch (c.nested) {
      case CollectiveModel::Nest::kNone:
        BindLine(indent, s, call);
        break;
      case CollectiveModel::Nest::kTensorAdd:
        BindLineF(indent, &s, "pl.tensor.add({}, {})", call, Name(c.nest_other));
        break;
      case CollectiveModel::Nest::kDispatch:
        BindLine(indent, s, DispatchText(m_.dispatches[c.nest_other], &call));
        break;
      case CollectiveModel::Nest::kTuple:
        BindLineF(indent, &s, "({},)", call);
        break;
    }
  }

  void Loop(const StmtModel& s, int indent) {
    std::string loop = LoopText(m_.loops[s.ref]);
    static constexpr std::string_view kRange = "pl.range(";
    if (m_.loops[s.ref].kind != LoopKind::kRange && loop.rfind(kRange, 0) == 0) {
      loop = (m_.loops[s.ref].kind == LoopKind::kUnroll ? "pl.unroll(" : "pl.parallel(") +
             loop.substr(kRange.size());
    }
    const LoopModel& l = m_.loops[s.ref];
    std::string target = Name(l.var);
    if (!l.iter_args.empty()) {
      // `for r, (a,) in pl.range(4, init_values=(i,)):`
      std::vector<std::string> names, inits;
      for (int ia : l.iter_args) names.push_back(Name(ia));
      for (const SExpr& i : l.inits) inits.push_back(Expr(i));
      const char* one = names.size() == 1 ? "," : "";
      target = fmt::format("{}, ({}{})", target, fmt::join(names, ", "), one);
      loop = fmt::format("{}, init_values=({}{}))", loop.substr(0, loop.size() - 1),
                         fmt::join(inits, ", "), one);
    }
    LineF(indent, "for {} in {}:", target, loop);
    Body(s.body, indent + 1);
  }

  void Yield(const StmtModel& s, int indent) {
    const LoopModel& l = m_.loops[s.ref];
    std::vector<std::string> ys, rs;
    for (const SExpr& y : l.yields) ys.push_back(Expr(y));
    for (int r : l.results) rs.push_back(Name(r));
    const std::string call = fmt::format("pl.yield_({})", fmt::join(ys, ", "));
    Line(indent, rs.empty() ? call : fmt::format("{} = {}", fmt::join(rs, ", "), call));
  }

  void Scope(const StmtModel& s, int indent) {
    Line(indent, s.flag ? fmt::format("with pl.at(name_hint=\"s{}\", tag={}):", s.id, Expr(s.expr))
                        : std::string("with pl.manual_scope():"));
    Body(s.body, indent + 1);
  }

  void Opaque(const StmtModel& s, int indent) {
    std::vector<std::string> args;
    if (s.src >= 0) args.push_back(Name(s.src));
    if (s.src2 >= 0) args.push_back(Name(s.src2));
    for (const SExpr& t : s.tuple_args) args.push_back(Expr(t));
    // deps=[v]: a view inside a list, whose tuple type the pass must re-derive.
    if (s.flag) {
      args.push_back("tag=" + Expr(s.expr));
      args.push_back("deps=[" + Name(s.src) + "]");
    }
    Line(indent, fmt::format("pl.touch({})", fmt::join(args, ", ")));
  }

  void Unpack(const StmtModel& s, int indent) {
    std::vector<std::string> names;
    for (int d : s.defs) names.push_back(Name(d));
    Line(indent, fmt::format("{}{} = pl.split({}, {})", fmt::join(names, ", "),
                             names.size() == 1 ? "," : "", Name(s.src), s.defs.size()));
  }

  void WhileLoop(const StmtModel& s, int indent) {
    LineF(indent, "while {}:", Expr(s.expr));
    Body(s.body, indent + 1);
  }

  void IfElse(const StmtModel& s, int indent) {
    LineF(indent, "if {}:", Expr(s.expr));
    Body(s.body, indent + 1);
    if (!s.orelse.empty()) {
      Line(indent, "else:");
      Body(s.orelse, indent + 1);
    }
  }

  void TensorCreate(const StmtModel& s, int indent) {
    const TensorSig& sig = m_.values[s.def].sig;
    BindLineF(indent, &s, "pl.tensor.create({}, dtype={})", SigText(sig), DTypeText(sig.dtype));
  }

  void Return(const StmtModel& s, int indent) {
    if (s.ref >= 0) {
      LineF(indent, "return {}", CollText(m_.collectives[s.ref]));
    } else {
      LineF(indent, "return {}",
            s.src >= 0 ? std::string_view(Name(s.src)) : std::string_view("0"));
    }
  }

 public:
  std::vector<int> def_lines_;

 private:
  const ProgramModel& m_;
  std::vector<int>* lines_;
  std::string out_;
  int line_ = 0;
};

}  // namespace

std::string RenderText(const ProgramModel& m) { return TextWriter(m, nullptr).Render(); }

std::string AssignLines(ProgramModel& m) {
  std::vector<int> lines(static_cast<size_t>(m.num_stmts), 0);
  TextWriter w(m, &lines);
  std::string text = w.Render();
  m.stmt_lines = std::move(lines);
  for (size_t i = 0; i < m.functions.size() && i < w.def_lines_.size(); ++i)
    m.functions[i].line = w.def_lines_[i];
  return text;
}

}  // namespace cds::fuzz
