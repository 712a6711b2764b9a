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

// A subscript of `view` as PyPTO's parser takes it: one entry per dim, no slice
// step. `element`: an integer index per dim (`x[3]`, `x[1, 5]`). Otherwise a slice
// per dim (`x[2:6]`, `x[0:1, 8:16]`, `x[:, 0:4]`, a start that is a scalar), of the
// lengths in `lens` when it is given (both sides of a slice assignment), else of
// lengths drawn here. A dim that is not a constant takes an index 0 or a slice `0:1`.
SExpr Generator::ViewSubscript(int view, bool element, const std::vector<int64_t>* lens) {
  const TensorSig sig = m_.values[view].sig;
  ValueList scalars = UsableWhere([](const ValueModel& v) {
    return (v.kind == ValueKind::kScalar && IsIndexLike(v.scalar_dtype)) ||
           v.kind == ValueKind::kLoopVar;
  });
  std::vector<SExpr> index;
  index.reserve(sig.dims.size());
  for (size_t i = 0; i < sig.dims.size(); ++i) {
    const int64_t extent = sig.dims[i].var >= 0 ? 1 : sig.dims[i].constant;
    if (element) {
      index.push_back(SExpr::Const(c_.Int(0, std::min<int64_t>(extent, 8) - 1)));
      continue;
    }
    const int64_t len = lens ? (*lens)[i] : c_.Int(1, std::min<int64_t>(extent, 8));
    if (len == extent && c_.Chance(1, 3)) {
      index.push_back(SExpr::SliceOf(SExpr::None(), SExpr::None(), SExpr::None()));
      continue;
    }
    const int64_t start = c_.Int(0, extent - len);
    if (lens == nullptr && start == 0 && len == 8 && !scalars.empty() && c_.Chance(1, 4)) {
      // `x[r:8]` in a read: a start that is a scalar of the program.
      index.push_back(
          SExpr::SliceOf(SExpr::VarRef(c_.Pick(scalars)), SExpr::Const(8), SExpr::None()));
      continue;
    }
    index.push_back(SExpr::SliceOf(SExpr::Const(start), SExpr::Const(start + len), SExpr::None()));
  }
  return SExpr::Sub(view, std::move(index));
}

int Generator::PickView() {
  return c_.Pick(UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; }));
}

// `e = x[..]` (an element or a slice), `e = -(x[i])`: unknown-typed values. An
// element keeps the view's dtype, so it meets no integer constant (PyPTO's
// operators take operands of one dtype category).
void Generator::GenSubscriptRead() {
  const int view = PickView();
  SExpr e;
  switch (c_.Int(0, 2)) {
    case 0:
      e = ViewSubscript(view, /*element=*/true);
      break;
    case 1:
      e = ViewSubscript(view, /*element=*/false);
      break;
    default:
      e = SExpr::Neg(ViewSubscript(view, /*element=*/true));
      break;
  }
  StmtModel s = NewStmt(StmtKind::kScalar);
  s.def = NewValue(Fresh("e"), ValueKind::kOpaque);
  s.expr = std::move(e);
  Push(std::move(s));
}

// `t[0:4, 0:8] = x[2:6, 0:8]`, `x[0:8] = y[8:16]`: slice assignment between a
// tensor or view and a view of the same rank, both sides of one shape (PyPTO's
// parser checks the lengths).
void Generator::GenSubscriptAssign() {
  ValueList tensors = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTensor; });
  const bool into_tensor = !tensors.empty() && c_.Bool();
  const int target = into_tensor ? c_.Pick(tensors) : PickView();
  const size_t rank = m_.values[target].sig.dims.size();
  ValueList sources = UsableWhere([rank](const ValueModel& v) {
    return v.kind == ValueKind::kView && v.sig.dims.size() == rank;
  });
  if (sources.empty()) {
    GenSubscriptRead();
    return;
  }
  const int source = c_.Pick(sources);
  std::vector<int64_t> lens;
  for (size_t i = 0; i < rank; ++i) {
    auto extent = [i](const TensorSig& s) { return s.dims[i].var >= 0 ? 1 : s.dims[i].constant; };
    lens.push_back(c_.Int(
        1, std::min({extent(m_.values[target].sig), extent(m_.values[source].sig), int64_t{8}})));
  }
  StmtModel s = NewStmt(StmtKind::kSubscriptAssign);
  s.expr = ViewSubscript(target, /*element=*/false, &lens);
  s.expr2 = ViewSubscript(source, /*element=*/false, &lens);
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

// `t = (x, 1)`, or with `opaque_call` a tuple as a call argument: `pl.touch(v, (x, t))`.
void Generator::GenTuple() {
  ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
  ValueList tuples = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTuple; });
  if (!On(Feature::kOpaqueCall) || c_.Chance(2, 3)) {
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
    return (v.kind == ValueKind::kScalar && IsIndexLike(v.scalar_dtype)) ||
           v.kind == ValueKind::kLoopVar;
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
    s.expr = ViewSubscript(PickView(), /*element=*/false);
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
