// Statements the pass must see through without counting them: subscripts of
// views, tensors, tuples, scalar arithmetic and names that look synthesized.

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "fuzz/gen/generator.h"
#include "fuzz/gen/weights.h"
#include "ir/builder.h"
#include "ir/op_registry.h"

namespace cds::fuzz::detail {

namespace {

DataType SExprDType(const ProgramModel& m, const SExpr& e) {
  switch (e.kind) {
    case SExpr::Kind::kConst:
    case SExpr::Kind::kBytesOf:
      return DataType::kInt64;
    case SExpr::Kind::kVar:
      return m.values[e.var].scalar_dtype;
    case SExpr::Kind::kWorldSize:
      return DataType::kIndex;
    case SExpr::Kind::kBinary:
      return ir::PromoteDataTypes(e.op, SExprDType(m, e.operands[0]), SExprDType(m, e.operands[1]));
    case SExpr::Kind::kNeg:
      return SExprDType(m, e.operands[0]);
    case SExpr::Kind::kSubscript:
    case SExpr::Kind::kSlice:
    case SExpr::Kind::kNone:
    case SExpr::Kind::kTuple:
      break;  // never a scalar operand
  }
  return DataType::kInt64;
}
}  // namespace

// A subscript of `view`: `v[i]`, `v[a:b]`, `v[r:8:2]`, `v[:, 0:4]`, `v[::2]`.
SExpr Generator::ViewSubscript(int view) {
  ValueList scalars = UsableWhere([](const ValueModel& v) {
    return v.kind == ValueKind::kScalar || v.kind == ValueKind::kLoopVar;
  });
  switch (c_.Int(0, 4)) {
    case 0:
      return SExpr::Sub(view, {SExpr::Const(c_.Int(0, 7))});
    case 1: {
      const int64_t a = c_.Int(0, 4);
      return SExpr::Sub(
          view, {SExpr::SliceOf(SExpr::Const(a), SExpr::Const(a + c_.Int(1, 8)), SExpr::None())});
    }
    case 2: {
      SExpr start = scalars.empty() ? SExpr::Const(0) : SExpr::VarRef(c_.Pick(scalars));
      return SExpr::Sub(view, {SExpr::SliceOf(std::move(start), SExpr::Const(8), SExpr::Const(2))});
    }
    case 3:
      return SExpr::Sub(
          view, {SExpr::SliceOf(SExpr::None(), SExpr::None(), SExpr::None()),
                 SExpr::SliceOf(SExpr::Const(0), SExpr::Const(c_.Int(1, 8)), SExpr::None())});
    default:
      return SExpr::Sub(view, {SExpr::SliceOf(SExpr::None(), SExpr::None(), SExpr::Const(2))});
  }
}

int Generator::PickView() {
  return c_.Pick(UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; }));
}

// `e = x[..]`, `e = x[..] + 1`, `e = -(x[..])`, `e = k * x[..]`: unknown-typed values.
void Generator::GenSubscriptRead() {
  SExpr sub = ViewSubscript(PickView());
  ValueList scalars = UsableWhere([](const ValueModel& v) {
    return v.kind == ValueKind::kScalar || v.kind == ValueKind::kLoopVar;
  });
  SExpr e;
  switch (c_.Int(0, 3)) {
    case 0:
      e = std::move(sub);
      break;
    case 1:
      e = SExpr::Bin(ir::BinaryOp::kAdd, std::move(sub), SExpr::Const(c_.Int(1, 9)));
      break;
    case 2:
      e = SExpr::Neg(std::move(sub));
      break;
    default:
      e = SExpr::Bin(ir::BinaryOp::kMul,
                     scalars.empty() ? SExpr::WorldSize() : SExpr::VarRef(c_.Pick(scalars)),
                     std::move(sub));
      break;
  }
  StmtModel s = NewStmt(StmtKind::kScalar);
  s.def = NewValue(Fresh("e"), ValueKind::kOpaque);
  s.expr = std::move(e);
  Push(std::move(s));
}

// `t[0:4, 0:8] = x[0:4]`, `x[0:8] = t`, `x[i] = 0`: slice and indexed assignment.
void Generator::GenSubscriptAssign() {
  ValueList tensors = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTensor; });
  StmtModel s = NewStmt(StmtKind::kSubscriptAssign);
  const bool into_tensor = !tensors.empty() && c_.Bool();
  s.expr = ViewSubscript(into_tensor ? c_.Pick(tensors) : PickView());
  const int form = static_cast<int>(c_.Int(0, 2));
  if (form == 0 || into_tensor) {
    s.expr2 = ViewSubscript(PickView());
  } else if (form == 1 && !tensors.empty()) {
    s.expr2 = SExpr::VarRef(c_.Pick(tensors));
  } else {
    s.expr2 = SExpr::Const(c_.Int(0, 9));
  }
  Push(std::move(s));
}

// `u0, u1 = pl.split(v, 2)`: unknown-typed results of an opaque call over a view.
void Generator::GenUnpack() {
  ValueList srcs = UsableWhere([](const ValueModel& v) {
    return v.kind == ValueKind::kView || v.kind == ValueKind::kTensor;
  });
  StmtModel s = NewStmt(StmtKind::kUnpack);
  s.src = c_.Pick(srcs);
  const int n = static_cast<int>(c_.Int(1, 3));
  for (int i = 0; i < n; ++i) s.defs.push_back(NewValue(Fresh("u"), ValueKind::kOpaque));
  for (int d : s.defs) Define(d);
  cur_->push_back(std::move(s));
}

void Generator::GenNoiseTensor() {
  ValueList tensors = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTensor; });
  StmtModel s = NewStmt(StmtKind::kTensorCreate);
  if (!tensors.empty() && c_.Bool()) {
    s.kind = StmtKind::kTensorAdd;
    s.src = c_.Pick(tensors);
    ValueList same = UsableWhere([&](const ValueModel& v) {
      return v.kind == ValueKind::kTensor && SigEqual(v.sig, m_.values[s.src].sig);
    });
    s.src2 = c_.Pick(same);
  }
  s.def = NewValue(Fresh("t"), ValueKind::kTensor);
  m_.values[s.def].sig =
      s.src >= 0 ? m_.values[s.src].sig
                 : Sig({c_.Int(1, 4) * 16, 64}, c_.Bool() ? DataType::kFP32 : DataType::kFP16);
  Push(std::move(s));
}

// A tuple of 0-3 elements: views, scalars, tensors, tuple values, constants and,
// above the innermost level, tuples written in place.
SExpr Generator::TupleExpr(int depth) {
  const int n = static_cast<int>(c_.Int(0, 3));
  std::vector<SExpr> elements;
  for (int i = 0; i < n; ++i) {
    ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
    ValueList scalars = UsableWhere([](const ValueModel& v) {
      return v.kind == ValueKind::kScalar || v.kind == ValueKind::kLoopVar ||
             v.kind == ValueKind::kTensor;
    });
    ValueList tuples = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTuple; });
    std::array<int, 5> w = kTupleElementWeights;
    if (views.empty()) w[0] = 0;
    if (scalars.empty()) w[1] = 0;
    if (tuples.empty()) w[2] = 0;
    if (depth >= 2) w[4] = 0;
    switch (c_.Weighted(w)) {
      case 0:
        elements.push_back(SExpr::VarRef(c_.Pick(views)));
        break;
      case 1:
        elements.push_back(SExpr::VarRef(c_.Pick(scalars)));
        break;
      case 2:
        elements.push_back(SExpr::VarRef(c_.Pick(tuples)));
        break;
      case 3:
        elements.push_back(SExpr::Const(c_.Int(0, 9)));
        break;
      default:
        elements.push_back(TupleExpr(depth + 1));
        break;
    }
  }
  return SExpr::TupleOf(std::move(elements));
}

// Whether the type of a tuple mentions a variable of the body (a view shaped
// `[n0, 2]`): such a value cannot be returned, since the function's return
// type, written in its signature, could not name that variable.
bool Generator::MentionsBodyVariable(const SExpr& e) const {
  if (e.kind == SExpr::Kind::kTuple) {
    return std::any_of(e.operands.begin(), e.operands.end(),
                       [this](const SExpr& x) { return MentionsBodyVariable(x); });
  }
  if (e.kind != SExpr::Kind::kVar) return false;
  const ValueModel& v = m_.values[e.var];
  if (v.kind == ValueKind::kTuple) return shaped_by_body_.contains(e.var);
  return std::any_of(v.sig.dims.begin(), v.sig.dims.end(), [](const Dim& d) { return d.var >= 0; });
}

// `t = (x, 1)`, or a tuple as a call argument: `pl.touch(v, (x, t))`.
void Generator::GenTuple() {
  ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
  ValueList tuples = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTuple; });
  if (c_.Chance(2, 3)) {
    StmtModel s = NewStmt(StmtKind::kScalar);
    s.def = NewValue(Fresh("tup"), ValueKind::kTuple);
    s.expr = TupleExpr(0);
    if (MentionsBodyVariable(s.expr)) shaped_by_body_.insert(s.def);
    Push(std::move(s));
    return;
  }
  StmtModel s = NewStmt(StmtKind::kOpaque);
  if (!views.empty() && c_.Bool()) s.src = c_.Pick(views);
  s.tuple_args.push_back(!tuples.empty() && c_.Bool() ? SExpr::VarRef(c_.Pick(tuples))
                                                      : TupleExpr(0));
  Push(std::move(s));
}

void Generator::GenNoiseScalar() {
  ValueList scalars = UsableWhere([](const ValueModel& v) {
    return v.kind == ValueKind::kScalar || v.kind == ValueKind::kLoopVar;
  });
  SExpr base =
      !scalars.empty() && c_.Chance(3, 4) ? SExpr::VarRef(c_.Pick(scalars)) : SExpr::WorldSize();
  if (On(Feature::kWholeProgram) && c_.Chance(1, 3)) base = SExpr::Neg(std::move(base));
  static const ir::BinaryOp kOps[] = {ir::BinaryOp::kAdd, ir::BinaryOp::kMul, ir::BinaryOp::kSub,
                                      ir::BinaryOp::kFloorDiv, ir::BinaryOp::kFloorMod};
  SExpr e = SExpr::Bin(kOps[c_.Int(0, 4)], std::move(base), SExpr::Const(c_.Int(1, 9)));
  if (c_.Bool()) e = SExpr::Bin(ir::BinaryOp::kAdd, std::move(e), SExpr::Const(c_.Int(1, 9)));
  StmtModel s = NewStmt(StmtKind::kScalar);
  s.def = NewValue(Fresh("c"), ValueKind::kScalar);
  m_.values[s.def].scalar_dtype = SExprDType(m_, e);
  s.expr = std::move(e);
  Push(std::move(s));
}

void Generator::GenNameCollision() {
  collision_done_ = true;
  static const char* kNames[] = {"__allreduce_signal_", "__allreduce_signal_buf_",
                                 "__allreduce_signal_world_size_", "__allreduce_result_"};
  StmtModel s = NewStmt(StmtKind::kScalar);
  s.def = NewValue(fmt::format("{}{}", kNames[c_.Int(0, 3)], c_.Int(0, 2)), ValueKind::kScalar);
  s.expr = SExpr::Const(c_.Int(0, 3));
  Push(std::move(s));
}

// Views handed to an opaque call: the pass must not count them as consumed.
void Generator::GenOpaqueCall() {
  ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
  StmtModel s = NewStmt(StmtKind::kOpaque);
  s.src = c_.Pick(views);
  if (c_.Bool()) s.src2 = c_.Pick(views);
  if (On(Feature::kSubscript) && c_.Chance(1, 3)) {
    s.flag = true;  // pl.touch(v, tag=x[..]): a call kwarg holding a view
    s.expr = ViewSubscript(PickView());
  }
  Push(std::move(s));
}

// `k = 7`.
void Generator::GenConstant() {
  StmtModel s = NewStmt(StmtKind::kScalar);
  s.def = NewValue(Fresh("k"), ValueKind::kScalar);
  s.expr = SExpr::Const(c_.Int(0, 9));
  Push(std::move(s));
}

}  // namespace cds::fuzz::detail
