// Loops in every range form, loop-carried values, `with` scopes, while and if.

#include <fmt/format.h>

#include "fuzz/gen/generator.h"

namespace cds::fuzz::detail {

SExpr Generator::Condition() {
  ValueList scalars = UsableWhere([](const ValueModel& v) {
    return (v.kind == ValueKind::kScalar && IsIndexLike(v.scalar_dtype)) ||
           v.kind == ValueKind::kLoopVar;
  });
  static const ir::BinaryOp kCmp[] = {ir::BinaryOp::kLt, ir::BinaryOp::kGt, ir::BinaryOp::kEq,
                                      ir::BinaryOp::kNe};
  const ir::BinaryOp op = kCmp[c_.Int(0, 3)];
  SExpr lhs =
      !scalars.empty() && c_.Chance(2, 3) ? SExpr::VarRef(c_.Pick(scalars)) : SExpr::WorldSize();
  return SExpr::Bin(op, std::move(lhs), SExpr::Const(c_.Int(0, 8)));
}

int Generator::NewLoop(LoopForm form, int64_t start, int64_t stop, int64_t step, int bound_var) {
  LoopModel l;
  l.form = form;
  l.start = start;
  l.stop = stop;
  l.step = step;
  l.bound_var = bound_var;
  l.var = NewValue(Fresh("r"), ValueKind::kLoopVar);
  m_.values[l.var].scalar_dtype = DataType::kIndex;
  m_.loops.push_back(l);
  return static_cast<int>(m_.loops.size()) - 1;
}

// Opens a block: statements go to `body` until CloseBlock.
std::vector<StmtModel>* Generator::OpenBlock(std::vector<StmtModel>* body) {
  std::vector<StmtModel>* saved = cur_;
  cur_ = body;
  scopes_.emplace_back();
  return saved;
}

void Generator::CloseBlock(std::vector<StmtModel>* saved) {
  for (int v : scopes_.back()) live_[v] = 0;
  scopes_.pop_back();
  cur_ = saved;
}

int Generator::GenFor(int remaining, int depth) {
  struct Option {
    LoopForm form;
    bool empty;
  };
  absl::InlinedVector<Option, 8> opts;
  if (On(Feature::kLoopRange)) opts.push_back({LoopForm::kStop, false});
  if (On(Feature::kLoopWorldSize)) {
    opts.push_back({LoopForm::kWorldSize, false});
    opts.push_back({LoopForm::kWorldSizeExplicit, false});
  }
  if (On(Feature::kLoopStartStop)) {
    opts.push_back({LoopForm::kStartStop, false});
    opts.push_back({LoopForm::kStartStopStep1, false});
  }
  if (On(Feature::kLoopBoundTemp)) {
    opts.push_back({LoopForm::kWorldSizeTemp, false});
    opts.push_back({LoopForm::kStopTemp, false});
  }
  if (On(Feature::kLoopEmpty)) opts.push_back({LoopForm::kStop, true});
  if (opts.empty()) return 0;
  const Option o = c_.Pick(opts);
  int64_t start = 0, stop = 0;
  int bound = -1;
  if (o.empty) {
    if (c_.Bool()) return FillEmptyLoop(NewLoop(LoopForm::kStop, 0, 0, 1, -1));
    start = c_.Int(1, 5);
    stop = start - c_.Int(0, 1);
    return FillEmptyLoop(NewLoop(LoopForm::kStartStop, start, stop, 1, -1));
  }
  switch (o.form) {
    case LoopForm::kStop:
      stop = c_.Int(1, 8);
      break;
    case LoopForm::kStartStop:
    case LoopForm::kStartStopStep1:
      start = c_.Int(0, 4);
      stop = start + c_.Int(1, 4);
      break;
    case LoopForm::kWorldSizeTemp:
      bound = UsableWorldSizeTemp();
      break;
    case LoopForm::kStopTemp: {
      stop = c_.Int(1, 8);
      StmtModel k = NewStmt(StmtKind::kScalar);
      k.def = NewValue(Fresh("k"), ValueKind::kScalar);
      k.expr = SExpr::Const(stop);
      bound = k.def;
      Push(std::move(k));
      break;
    }
    default:
      break;
  }
  const int loop = NewLoop(o.form, start, stop, 1, bound);
  if (On(Feature::kWholeProgram) && c_.Chance(1, 3)) {
    // PyPTO unrolls only loops whose bounds are integer literals.
    const bool literal_bounds = o.form == LoopForm::kStop || o.form == LoopForm::kStartStop ||
                                o.form == LoopForm::kStartStopStep1;
    m_.loops[loop].kind = literal_bounds && c_.Bool() ? LoopKind::kUnroll : LoopKind::kParallel;
  }
  const bool carried =
      On(Feature::kIterArgs) && m_.loops[loop].kind == LoopKind::kRange && c_.Chance(1, 2);
  if (carried) AddIterArgs(loop);
  const int sub = static_cast<int>(c_.Int(1, std::max(1, std::min(remaining - 1, 8))));
  EmitFor(loop, [&] {
    GenBlock(sub, depth + 1);
    if (carried) EmitYield(loop);
  });
  // The yield's targets are bound after the loop (the parser's reading of PyPTO).
  for (int r : std::vector<int>(m_.loops[loop].results)) Define(r);
  return 1 + sub;
}

// 1-2 loop-carried values: an integer constant, a scalar, a tensor in scope, or
// an element of a view (`x[k]`, whose view the pass must rewrite inside the init).
// A view itself is never carried: the pass rejects it (invalid kind carried_view).
void Generator::AddIterArgs(int loop) {
  const int n = static_cast<int>(c_.Int(1, 2));
  for (int i = 0; i < n; ++i) {
    ValueList scalars = UsableWhere([](const ValueModel& v) {
      return (v.kind == ValueKind::kScalar && IsIndexLike(v.scalar_dtype)) ||
             v.kind == ValueKind::kLoopVar;
    });
    ValueList tensors =
        UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTensor; });
    ValueList views =
        On(Feature::kSubscript)
            ? UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; })
            : ValueList{};
    const int ia = NewValue(Fresh("acc"), ValueKind::kScalar);
    const int pick = static_cast<int>(c_.Int(0, views.empty() ? 2 : 3));
    SExpr init = SExpr::Const(c_.Int(0, 9));
    if (pick == 3) {
      const int view = c_.Pick(views);
      init = ViewSubscript(view, /*element=*/true);
      m_.values[ia].scalar_dtype = m_.values[view].sig.dtype;
    } else if (pick == 1 && !scalars.empty()) {
      const int v = c_.Pick(scalars);
      init = SExpr::VarRef(v);
      m_.values[ia].scalar_dtype = m_.values[v].scalar_dtype;
    } else if (pick == 2 && !tensors.empty()) {
      const int v = c_.Pick(tensors);
      init = SExpr::VarRef(v);
      m_.values[ia].kind = ValueKind::kTensor;
      m_.values[ia].sig = m_.values[v].sig;
    }
    m_.loops[loop].iter_args.push_back(ia);
    m_.loops[loop].inits.push_back(std::move(init));
  }
}

// `res0, res1 = pl.yield_(y0, y1)`, the last statement of an init_values loop's
// body (PyPTO's parser takes no bare pl.yield_ there). A carried element of a view
// may yield `acc + x[0]`, an element of a view of its dtype; another scalar
// `acc + 1` (PyPTO's operators take one dtype category).
void Generator::EmitYield(int loop) {
  LoopModel& l = m_.loops[loop];
  StmtModel s = NewStmt(StmtKind::kYield);
  s.ref = loop;
  ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
  for (size_t k = 0; k < l.iter_args.size(); ++k) {
    const int ia = l.iter_args[k];
    const ValueModel iv = m_.values[ia];
    if (iv.kind == ValueKind::kTensor) {
      ValueList same = UsableWhere([&](const ValueModel& v) {
        return v.kind == ValueKind::kTensor && SigEqual(v.sig, iv.sig);
      });
      m_.loops[loop].yields.push_back(SExpr::VarRef(c_.Pick(same)));
      continue;
    }
    // A scalar of a view's element type meets no integer literal.
    const bool element = !IsIndexLike(iv.scalar_dtype);
    ValueList same_dtype;
    if (element) {
      for (int v : views) {
        if (m_.values[v].sig.dtype == iv.scalar_dtype) same_dtype.push_back(v);
      }
    }
    if (element ? same_dtype.empty() || c_.Bool() : c_.Chance(1, 3)) {
      m_.loops[loop].yields.push_back(SExpr::VarRef(ia));
    } else if (element) {
      m_.loops[loop].yields.push_back(
          SExpr::Bin(ir::BinaryOp::kAdd, SExpr::VarRef(ia),
                     ViewSubscript(c_.Pick(same_dtype), /*element=*/true)));
    } else {
      m_.loops[loop].yields.push_back(
          SExpr::Bin(ir::BinaryOp::kAdd, SExpr::VarRef(ia), SExpr::Const(c_.Int(1, 3))));
    }
  }
  for (int ia : std::vector<int>(m_.loops[loop].iter_args)) {
    const int r = NewValue(Fresh("res"), m_.values[ia].kind);
    m_.values[r].scalar_dtype = m_.values[ia].scalar_dtype;
    m_.values[r].sig = m_.values[ia].sig;
    m_.loops[loop].results.push_back(r);
  }
  cur_->push_back(std::move(s));
}

// An empty range adds an empty subset; its body only dispatches on its own
// variable so nothing else in it could claim coverage.
int Generator::FillEmptyLoop(int loop) {
  EmitFor(loop, [&] {
    const int n = static_cast<int>(c_.Int(1, 2));
    for (int i = 0; i < n; ++i) {
      const int callee = c_.Pick(ChipTargets());
      std::vector<int> args = DispatchArgs(callee, -1, true);
      EmitDispatch(callee, std::move(args), DeviceForm::kLoopVar, 0, m_.loops[loop].var, loop,
                   false);
    }
  });
  return 2;
}

// `with pl.manual_scope():` around a block. Not a loop: collectives that must stay
// out of loops may appear inside, and the pass must see through it to dispatches.
int Generator::GenScope(int remaining, int depth) {
  const bool has_view =
      !UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; }).empty();
  // pl.at(tag=) is not PyPTO's: a kwarg holding a view goes with the other
  // harness-only opaque forms.
  const bool at_form = On(Feature::kOpaqueCall) && On(Feature::kSubscript) && has_view &&
                       (!On(Feature::kWholeProgram) || c_.Bool());
  const int sub = static_cast<int>(c_.Int(1, std::max(1, std::min(remaining - 1, 6))));
  if (!at_form && manual_scopes_ > 0) {
    // PyPTO's parser takes no manual scope inside another: the block stays inline.
    GenBlock(sub, depth + 1);
    return sub;
  }
  StmtModel s = NewStmt(StmtKind::kScope);
  if (at_form) {
    // `with pl.at(name_hint="sN", tag=x[..]):` a kwarg expression holding a view.
    s.flag = true;
    s.expr = ViewSubscript(PickView(), /*element=*/false);
  }
  if (!at_form) ++manual_scopes_;
  std::vector<StmtModel>* saved = OpenBlock(&s.body);
  if (On(Feature::kAllReduceImplicit) && !InLoop() && !host_allocs_.empty() && c_.Chance(1, 3)) {
    // A synthesized signal inside a generic scope (the synthesis pass rewrites its body).
    const int data = AllReduceDataArg();
    const int coll = NewCollective(CollKind::kAllReduce, {data});
    EmitCollectiveStmt(coll, data);
  }
  GenBlock(sub, depth + 1);
  CloseBlock(saved);
  if (!at_form) --manual_scopes_;
  Push(std::move(s));
  return 1 + sub;
}

int Generator::GenWhileOrIf(bool is_while, int remaining, int depth) {
  StmtModel s = NewStmt(is_while ? StmtKind::kWhile : StmtKind::kIf);
  s.expr = Condition();
  const int sub = static_cast<int>(c_.Int(1, std::max(1, std::min(remaining - 1, 6))));
  const bool saved_while = in_while_;
  if (is_while) in_while_ = true;
  std::vector<StmtModel>* saved = OpenBlock(&s.body);
  GenBlock(sub, depth + 1);
  CloseBlock(saved);
  int used = 1 + sub;
  if (!is_while && c_.Chance(1, 2)) {
    const int sub2 = static_cast<int>(c_.Int(1, std::max(1, std::min(remaining - 1, 4))));
    saved = OpenBlock(&s.orelse);
    GenBlock(sub2, depth + 1);
    CloseBlock(saved);
    used += sub2;
  }
  in_while_ = saved_while;
  Push(std::move(s));
  return used;
}

}  // namespace cds::fuzz::detail
