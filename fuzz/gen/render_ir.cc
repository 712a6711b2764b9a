#include <fmt/format.h>

#include "fuzz/gen/render.h"
#include "fuzz/gen/render_common.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace cds::fuzz {

using detail::kReduceSum;
using ir::DataType;
using ir::ExprPtr;
using ir::StmtPtr;
using ir::VarPtr;

namespace {

class IRBuilder {
 public:
  explicit IRBuilder(const ProgramModel& m) : m_(m), vars_(m.values.size()) {}

  ir::ProgramPtr Build() {
    // Callee return types first: dispatches take them as their result type.
    for (const FunctionModel& f : m_.functions) {
      if (f.role != FuncRole::kHostOrch) {
        for (int p : f.params) {
          const TensorSig& sig = m_.values[p].sig;
          vars_[p] = ir::MakeVar(m_.values[p].name, m_.values[p].local
                                                        ? ir::TensorTy(Shape(sig), sig.dtype)
                                                        : ir::DistTensorTy(Shape(sig), sig.dtype));
        }
      }
    }
    std::vector<VarPtr> dynamic_dims;
    if (m_.dynamic_dim >= 0) {
      vars_[m_.dynamic_dim] =
          ir::MakeVar(m_.values[m_.dynamic_dim].name, ir::ScalarTy(ir::DataType::kIndex));
      dynamic_dims.push_back(vars_[m_.dynamic_dim]);
    }
    std::vector<ir::FunctionPtr> fns;
    fns.reserve(m_.functions.size());
    for (const FunctionModel& f : m_.functions) fns.push_back(Function(f));
    return ir::MakeNode<ir::Program>(m_.name, std::move(dynamic_dims), std::move(fns));
  }

 private:
  std::vector<ExprPtr> Shape(const TensorSig& sig) { return Dims(sig.dims); }

  std::vector<ExprPtr> Dims(const absl::InlinedVector<Dim, 2>& model_dims) {
    std::vector<ExprPtr> dims;
    dims.reserve(model_dims.size());
    for (const Dim& d : model_dims) dims.push_back(d.var >= 0 ? Use(d.var) : ir::Int(d.constant));
    return dims;
  }

  ExprPtr Use(int v) {
    CDS_CHECK(vars_[v] != nullptr,
              fmt::format("value '{}' used before its definition", m_.values[v].name));
    return vars_[v];
  }

  VarPtr Def(int v, ir::TypePtr type) {
    vars_[v] = ir::MakeVar(m_.values[v].name, std::move(type));
    return vars_[v];
  }

  ExprPtr WorldSize() { return ir::MakeOpCall(ir::ops::kWorldSize, {}); }

  ExprPtr Expr(const SExpr& e) {
    switch (e.kind) {
      case SExpr::Kind::kConst:
        return ir::Int(e.constant);
      case SExpr::Kind::kVar:
        return Use(e.var);
      case SExpr::Kind::kWorldSize:
        return WorldSize();
      case SExpr::Kind::kBytesOf:
        return ir::Int(ir::DataTypeBytes(e.dtype));
      case SExpr::Kind::kBinary:
        return BinaryOf(e.op, Expr(e.operands[0]), Expr(e.operands[1]));
      case SExpr::Kind::kNeg: {
        ExprPtr x = Expr(e.operands[0]);
        if (IsUnknown(x))
          return ir::MakeNode<ir::UnaryExpr>(ir::UnaryOp::kNeg, x, ir::UnknownType::Get());
        return ir::Unary(ir::UnaryOp::kNeg, std::move(x));
      }
      case SExpr::Kind::kSubscript: {
        std::vector<ExprPtr> idx;
        idx.reserve(e.operands.size());
        for (const SExpr& i : e.operands) idx.push_back(Expr(i));
        return ir::MakeNode<ir::Subscript>(Use(e.var), std::move(idx), ir::UnknownType::Get());
      }
      case SExpr::Kind::kSlice:
        return ir::MakeNode<ir::Slice>(Expr(e.operands[0]), Expr(e.operands[1]),
                                       Expr(e.operands[2]));
      case SExpr::Kind::kNone:
        return nullptr;
      case SExpr::Kind::kTuple: {
        std::vector<ExprPtr> elements;
        elements.reserve(e.operands.size());
        for (const SExpr& x : e.operands) elements.push_back(Expr(x));
        return TupleValue(std::move(elements));
      }
    }
    return nullptr;
  }

  // A tuple written as a value, `(a, b)`: the parser records the parentheses.
  static ExprPtr TupleValue(std::vector<ExprPtr> elements) {
    return ir::MakeNode<ir::MakeTuple>(std::move(elements), /*parenthesized=*/true);
  }

  static bool IsUnknown(const ExprPtr& e) {
    return e && e->type && e->type->kind() == ir::NodeKind::kUnknownType;
  }

  // The parser's rule for operands of unknown type (subscripts): the result is BOOL
  // for comparisons and logic, unknown otherwise.
  static ExprPtr BinaryOf(ir::BinaryOp op, ExprPtr a, ExprPtr b) {
    if (!IsUnknown(a) && !IsUnknown(b)) return ir::Binary(op, std::move(a), std::move(b));
    bool logical = false;
    switch (op) {
      case ir::BinaryOp::kEq:
      case ir::BinaryOp::kNe:
      case ir::BinaryOp::kLt:
      case ir::BinaryOp::kLe:
      case ir::BinaryOp::kGt:
      case ir::BinaryOp::kGe:
      case ir::BinaryOp::kAnd:
      case ir::BinaryOp::kOr:
        logical = true;
        break;
      default:
        break;
    }
    ir::TypePtr t = logical ? ir::ScalarTy(DataType::kBool) : ir::TypePtr(ir::UnknownType::Get());
    return ir::MakeNode<ir::BinaryExpr>(op, std::move(a), std::move(b), std::move(t));
  }

  static std::optional<ir::FunctionType> TypeOf(DeclForm d) {
    switch (d) {
      case DeclForm::kHostTypeLevel:
      case DeclForm::kChipType:
        return ir::FunctionType::kOrchestration;
      case DeclForm::kGraphType:
      case DeclForm::kGraphLevelRole:
        return ir::FunctionType::kGraph;
      case DeclForm::kInCoreType:
        return ir::FunctionType::kInCore;
      default:
        return std::nullopt;
    }
  }

  ir::FunctionPtr Function(const FunctionModel& f) {
    std::optional<ir::Level> level;
    std::optional<ir::Role> role;
    switch (f.decl) {
      case DeclForm::kHostLevelRole:
        level = ir::Level::kHost;
        role = ir::Role::kOrchestrator;
        break;
      case DeclForm::kHostTypeLevel:
        level = ir::Level::kHost;
        break;
      case DeclForm::kChipLevelRole:
      case DeclForm::kGraphLevelRole:
        level = ir::Level::kChip;
        role = ir::Role::kOrchestrator;
        break;
      default:
        break;
    }
    const ir::FunctionType type = TypeOf(f.decl).value_or(ir::FunctionType::kOpaque);
    std::vector<VarPtr> params;
    params.reserve(f.params.size());
    for (int p : f.params) params.push_back(vars_[p]);
    std::vector<ir::ParamDirection> dirs;
    dirs.reserve(f.params.size());
    for (int p : f.params)
      dirs.push_back(m_.values[p].inout ? ir::ParamDirection::kInOut : ir::ParamDirection::kIn);
    std::vector<ir::TypePtr> ret_types;
    ir::SeqStmtsPtr body;
    if (f.role != FuncRole::kHostOrch) {
      ret_types.push_back(params[0]->type);
      std::vector<StmtPtr> stmts;
      stmts.reserve(f.body.size() + 1);
      for (const StmtModel& s : f.body) stmts.push_back(Stmt(s));
      stmts.push_back(ir::Return({params[0]}));
      body = ir::Seq(std::move(stmts));
    } else {
      return_type_ = nullptr;
      body = Body(f.body);
      if (return_type_) ret_types.push_back(return_type_);
    }
    return ir::MakeNode<ir::Function>(f.name, std::move(params), std::move(dirs),
                                      std::move(ret_types), std::move(body), type, level, role);
  }

  ir::SeqStmtsPtr Body(const std::vector<StmtModel>& body) {
    std::vector<StmtPtr> stmts;
    stmts.reserve(body.size());
    for (const StmtModel& s : body) stmts.push_back(Stmt(s));
    return ir::Seq(std::move(stmts));
  }

  ir::TypePtr ReturnTypeOf(int callee) {
    const FunctionModel& f = m_.functions[callee];
    return vars_[f.params[0]]->type;
  }

  ExprPtr Device(const DispatchModel& d) {
    switch (d.form) {
      case DeviceForm::kConst:
      case DeviceForm::kNegative:
        return ir::Int(d.constant);
      case DeviceForm::kLoopVar:
      case DeviceForm::kNotLoopVar:
        return Use(d.device_var);
      case DeviceForm::kExpr:
        return ir::Add(Use(d.device_var), ir::Int(d.constant));
      case DeviceForm::kUnplaced:
        return nullptr;  // MakeFunctionCall then sets no device attr
    }
    return nullptr;
  }

  ExprPtr Dispatch(const DispatchModel& d, ExprPtr first_arg = nullptr) {
    std::vector<ExprPtr> args;
    args.reserve(d.args.size());
    for (size_t i = 0; i < d.args.size(); ++i)
      args.push_back(i == 0 && first_arg ? first_arg : Use(d.args[i]));
    return ir::MakeFunctionCall(m_.functions[d.callee].name, std::move(args), Device(d),
                                ReturnTypeOf(d.callee));
  }

  ExprPtr Collective(const CollectiveModel& c) {
    std::vector<ExprPtr> args;
    args.reserve(c.args.size());
    for (int a : c.args) args.push_back(Use(a));
    ir::KwargList kw;
    switch (c.kind) {
      case CollKind::kAllReduce: {
        const bool core_num = c.core_num > 0 || c.explicit_core_num;
        kw.reserve(core_num ? 2 : 1);
        kw.emplace_back("op", ir::EnumAttr{kReduceSum});
        if (core_num) kw.emplace_back("core_num", c.core_num);
        break;
      }
      case CollKind::kReduceScatter:
        kw.emplace_back("op", ir::EnumAttr{kReduceSum});
        break;
      case CollKind::kBroadcast:
        kw.emplace_back("root", c.root);
        break;
      default:
        break;
    }
    if (IsCollectiveKernel(m_.functions[c.function])) {
      // The kernel-level type rules as the generator states them (all_to_all(_v)
      // and allgather return their target window, every other collective its first
      // argument: data, or a barrier's signal), so parse(RenderText) == RenderIR
      // checks the parser's rules against these.
      ir::TypePtr t = c.kind == CollKind::kAllToAll || c.kind == CollKind::kAllToAllV ||
                              c.kind == CollKind::kAllGather
                          ? args[1]->type
                          : args[0]->type;
      return ir::MakeNode<ir::Call>(ir::OpRegistry::Get().GetOp(CollOpName(c.kind)),
                                    std::move(args), std::move(kw), ir::ExprAttrList{},
                                    std::move(t));
    }
    if (c.kind == CollKind::kAllReduce &&
        (c.args.size() > 2 || (c.explicit_core_num && c.core_num <= 0))) {
      // The registry rejects this arity and a core_num= below 1; the synthesis pass
      // must reject them too.
      ir::TypePtr t = args[0]->type;
      return ir::MakeNode<ir::Call>(ir::OpRegistry::Get().GetOp(ir::ops::kAllReduce),
                                    std::move(args), std::move(kw), ir::ExprAttrList{},
                                    std::move(t));
    }
    return ir::MakeOpCall(CollOpName(c.kind), std::move(args), std::move(kw));
  }

  StmtPtr Bind(const StmtModel& s, ExprPtr value) {
    if (s.def < 0) return ir::Eval(std::move(value));
    ir::TypePtr t = value->type;
    return ir::Assign(Def(s.def, std::move(t)), std::move(value));
  }

  StmtPtr Stmt(const StmtModel& s) {
    switch (s.kind) {
      case StmtKind::kAlloc:
        return Alloc(s);
      case StmtKind::kView:
        return View(s);
      case StmtKind::kAlias:
        return Bind(s, Use(s.src));
      case StmtKind::kScalar:
        return Bind(s, Expr(s.expr));
      case StmtKind::kDispatch:
        return Bind(s, Dispatch(m_.dispatches[s.ref]));
      case StmtKind::kCollective:
        return CollectiveBinding(s);
      case StmtKind::kFor:
        return Loop(s);
      case StmtKind::kScope:
        return Scope(s);
      case StmtKind::kOpaque:
        return Opaque(s);
      case StmtKind::kUnpack:
        return Unpack(s);
      case StmtKind::kSubscriptAssign:
        return SubscriptAssign(s);
      case StmtKind::kYield:
        return Yield(s);
      case StmtKind::kWhile:
        return WhileLoop(s);
      case StmtKind::kIf:
        return IfElse(s);
      case StmtKind::kTensorCreate:
        return TensorCreate(s);
      case StmtKind::kTensorAdd:
        return Bind(s, ir::MakeOpCall(ir::ops::kTensorAdd, {Use(s.src), Use(s.src2)}));
      case StmtKind::kReturn:
        return Return(s);
    }
    return nullptr;
  }

  StmtPtr Alloc(const StmtModel& s) {
    const AllocModel& a = m_.allocs[s.ref];
    ExprPtr call;
    if (a.size_form == SizeForm::kShape) {
      call = ir::MakeOpCall(ir::ops::kAllocWindowBuffer, {ir::Tuple(Dims(a.shape))},
                            {{"dtype", a.dtype}, {"name", a.name}});
    } else {
      call = ir::MakeOpCall(ir::ops::kAllocWindowBuffer, {Expr(a.size)}, {{"name", a.name}});
    }
    return Bind(s, std::move(call));
  }

  StmtPtr View(const StmtModel& s) {
    const ValueModel& v = m_.values[s.def];
    ExprPtr call =
        ir::MakeOpCall(ir::ops::kWindow, {Use(m_.allocs[s.ref].var), ir::Tuple(Shape(v.sig))},
                       {{"dtype", v.sig.dtype}});
    return Bind(s, std::move(call));
  }

  StmtPtr CollectiveBinding(const StmtModel& s) {
    const CollectiveModel& c = m_.collectives[s.ref];
    ExprPtr call = Collective(c);
    switch (c.nested) {
      case CollectiveModel::Nest::kNone:
        return Bind(s, std::move(call));
      case CollectiveModel::Nest::kTensorAdd:
        return Bind(s, ir::MakeOpCall(ir::ops::kTensorAdd, {std::move(call), Use(c.nest_other)}));
      case CollectiveModel::Nest::kDispatch:
        return Bind(s, Dispatch(m_.dispatches[c.nest_other], std::move(call)));
      case CollectiveModel::Nest::kTuple:
        return Bind(s, TupleValue({std::move(call)}));
    }
    return nullptr;
  }

  struct Bounds {
    ExprPtr start, stop, step;
  };

  Bounds LoopBounds(const LoopModel& l) {
    ExprPtr start = ir::Int(l.start), step = ir::Int(l.step), stop;
    switch (l.form) {
      case LoopForm::kWorldSize:
      case LoopForm::kWorldSizeExplicit:
        start = ir::Int(0);
        stop = WorldSize();
        break;
      case LoopForm::kWorldSizeStart:
        stop = WorldSize();
        break;
      case LoopForm::kWorldSizeTemp:
      case LoopForm::kStopTemp:
      case LoopForm::kVarBound:
        start = ir::Int(0);
        stop = Use(l.bound_var);
        break;
      case LoopForm::kStop:
        start = ir::Int(0);
        stop = ir::Int(l.stop);
        break;
      default:
        stop = ir::Int(l.stop);
        break;
    }
    return {std::move(start), std::move(stop), std::move(step)};
  }

  StmtPtr Loop(const StmtModel& s) {
    const LoopModel& l = m_.loops[s.ref];
    Bounds b = LoopBounds(l);
    VarPtr var = Def(l.var, ir::ScalarTy(DataType::kIndex));
    if (!l.iter_args.empty()) {
      std::vector<ir::IterArgPtr> ias;
      ias.reserve(l.iter_args.size());
      for (size_t i = 0; i < l.iter_args.size(); ++i) {
        ExprPtr init = Expr(l.inits[i]);
        auto ia = ir::MakeNode<ir::IterArg>(m_.values[l.iter_args[i]].name, init->type, init);
        vars_[l.iter_args[i]] = ia;
        ias.push_back(ia);
      }
      ir::SeqStmtsPtr body = Body(s.body);
      std::vector<VarPtr> results;
      results.reserve(l.results.size());
      for (size_t i = 0; i < l.results.size(); ++i)
        results.push_back(Def(l.results[i], ias[i]->type));
      auto f = ir::MakeNode<ir::ForStmt>(std::move(var), std::move(b.start), std::move(b.stop),
                                         std::move(b.step), std::move(body));
      f->iter_args = std::move(ias);
      f->return_vars = std::move(results);
      return f;
    }
    if (l.kind == LoopKind::kRange) {
      return ir::For(std::move(var), std::move(b.start), std::move(b.stop), std::move(b.step),
                     Body(s.body));
    }
    const ir::ForKind kind =
        l.kind == LoopKind::kUnroll ? ir::ForKind::kUnroll : ir::ForKind::kParallel;
    return ir::MakeNode<ir::ForStmt>(std::move(var), std::move(b.start), std::move(b.stop),
                                     std::move(b.step), Body(s.body), kind);
  }

  StmtPtr Scope(const StmtModel& s) {
    if (!s.flag) {
      return ir::MakeNode<ir::ScopeStmt>("pl.manual_scope", std::vector<ExprPtr>{}, ir::KwargList{},
                                         nullptr, Body(s.body));
    }
    ir::KwargList kw;
    kw.reserve(2);
    kw.emplace_back("name_hint", fmt::format("s{}", s.id));
    kw.emplace_back("tag", Expr(s.expr));
    return ir::MakeNode<ir::ScopeStmt>("pl.at", std::vector<ExprPtr>{}, std::move(kw), nullptr,
                                       Body(s.body));
  }

  // An op the registry does not model: Op(name, info = nullptr), type unknown.
  StmtPtr Opaque(const StmtModel& s) {
    std::vector<ExprPtr> args;
    args.reserve(2 + s.tuple_args.size());
    if (s.src >= 0) args.push_back(Use(s.src));
    if (s.src2 >= 0) args.push_back(Use(s.src2));
    for (const SExpr& t : s.tuple_args) args.push_back(Expr(t));
    ir::KwargList kw;
    if (s.flag) {
      kw.reserve(2);
      kw.emplace_back("tag", Expr(s.expr));
      kw.emplace_back("deps",
                      ExprPtr(ir::MakeNode<ir::MakeTuple>(std::vector<ExprPtr>{Use(s.src)})));
    }
    return ir::Eval(ir::MakeNode<ir::Call>(ir::OpRegistry::Get().GetOp("pl.touch"), std::move(args),
                                           std::move(kw), ir::ExprAttrList{},
                                           ir::UnknownType::Get()));
  }

  StmtPtr Unpack(const StmtModel& s) {
    ExprPtr call = ir::MakeNode<ir::Call>(
        ir::OpRegistry::Get().GetOp("pl.split"),
        std::vector<ExprPtr>{Use(s.src), ir::Int(static_cast<int64_t>(s.defs.size()))},
        ir::KwargList{}, ir::ExprAttrList{}, ir::UnknownType::Get());
    std::vector<VarPtr> vars;
    vars.reserve(s.defs.size());
    for (int d : s.defs) vars.push_back(Def(d, ir::UnknownType::Get()));
    return ir::MakeNode<ir::UnpackAssignStmt>(std::move(vars), std::move(call));
  }

  StmtPtr SubscriptAssign(const StmtModel& s) {
    ExprPtr target = Expr(s.expr);
    return ir::MakeNode<ir::SubscriptAssignStmt>(std::move(target), Expr(s.expr2));
  }

  StmtPtr Yield(const StmtModel& s) {
    std::vector<ExprPtr> values;
    values.reserve(m_.loops[s.ref].yields.size());
    for (const SExpr& y : m_.loops[s.ref].yields) values.push_back(Expr(y));
    return ir::MakeNode<ir::YieldStmt>(std::move(values));
  }

  StmtPtr WhileLoop(const StmtModel& s) {
    ExprPtr cond = Expr(s.expr);
    return ir::While(std::move(cond), Body(s.body));
  }

  StmtPtr IfElse(const StmtModel& s) {
    ExprPtr cond = Expr(s.expr);
    ir::SeqStmtsPtr then_body = Body(s.body);
    ir::SeqStmtsPtr else_body = s.orelse.empty() ? nullptr : Body(s.orelse);
    return ir::If(std::move(cond), std::move(then_body), std::move(else_body));
  }

  StmtPtr TensorCreate(const StmtModel& s) {
    const TensorSig& sig = m_.values[s.def].sig;
    return Bind(
        s, ir::MakeOpCall(ir::ops::kTensorCreate, {ir::Tuple(Shape(sig))}, {{"dtype", sig.dtype}}));
  }

  StmtPtr Return(const StmtModel& s) {
    ExprPtr v = s.ref >= 0   ? Collective(m_.collectives[s.ref])
                : s.src >= 0 ? Use(s.src)
                             : ir::Int(0);
    if (!return_type_) return_type_ = v->type;
    return ir::Return({std::move(v)});
  }

  const ProgramModel& m_;
  std::vector<VarPtr> vars_;
  ir::TypePtr return_type_;
};

}  // namespace

ir::ProgramPtr RenderIR(const ProgramModel& m) { return IRBuilder(m).Build(); }

}  // namespace cds::fuzz
