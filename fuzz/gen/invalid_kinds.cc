// Invalid programs: a valid program with exactly one planted defect (InvalidKind),
// and the statement and diagnostic the pipeline must report for it. Each kind is
// one Plant function, registered through CDS_GEN_INVALID_KINDS.

#include <algorithm>
#include <vector>

#include "fuzz/gen/expect.h"
#include "fuzz/gen/generator.h"
#include "fuzz/gen/render.h"
#include "ir/error.h"

namespace cds::fuzz {
namespace {

using detail::Generator;
using detail::Sig;
using ir::DataType;

class Planter {
 public:
  Planter(Generator& g, ProgramModel& m, Choices& c) : g_(g), m_(m), c_(c) {}

  InvalidSpec Plant(InvalidKind kind);

 private:
#define CDS_GEN_PLANTER(N, S) void Plant##N(InvalidSpec& spec);
  CDS_GEN_INVALID_KINDS(CDS_GEN_PLANTER)
#undef CDS_GEN_PLANTER

  void DispatchOnLoopVar(InvalidSpec& spec, const std::vector<int>& args, int loop);
  void EmitAllToAllV(InvalidSpec& spec, const std::vector<int>& args);
  std::vector<int> A2avArgs();
  template <typename F>
  void EmitWhile(F&& emit) {
    StmtModel s = g_.NewStmt(StmtKind::kWhile);
    s.expr = SExpr::Bin(ir::BinaryOp::kGt, SExpr::WorldSize(), SExpr::Const(c_.Int(0, 4)));
    const bool saved_while = g_.in_while_;
    g_.in_while_ = true;
    std::vector<StmtModel>* saved = g_.OpenBlock(&s.body);
    emit();
    g_.CloseBlock(saved);
    g_.in_while_ = saved_while;
    g_.Push(std::move(s));
  }
  void MoveToRandomPosition(int id);
  int LastId() const { return m_.num_stmts - 1; }

  Generator& g_;
  ProgramModel& m_;
  Choices& c_;
  std::vector<StmtModel>* body_ = nullptr;  // the top level of the host planted in
  int x_ = -1;                              // a covered alloc whose fresh views are safe arguments
  int callee_ = -1;                         // a chip orchestrator
};

// Picks a host with a covered alloc, takes its return statement off so that the
// defect lands before it, plants, and puts the return back.
InvalidSpec Planter::Plant(InvalidKind kind) {
  using PlantFn = void (Planter::*)(InvalidSpec&);
  static constexpr PlantFn kPlanters[] = {
#define CDS_GEN_PLANTER(N, S) &Planter::Plant##N,
      CDS_GEN_INVALID_KINDS(CDS_GEN_PLANTER)
#undef CDS_GEN_PLANTER
  };
  static_assert(std::size(kPlanters) == static_cast<size_t>(InvalidKind::kCount));
  CDS_CHECK(kind < InvalidKind::kCount, "not an invalid kind");
  InvalidSpec spec;
  spec.kind = kind;
  // The first generated host always has an alloc with dispatch coverage.
  std::vector<Coverage> cov = DispatchCoverage(m_);
  std::vector<int> candidates;
  for (int h : m_.HostFunctions()) {
    for (size_t a = 0; a < m_.allocs.size(); ++a) {
      if (m_.allocs[a].function == h && !cov[a].Empty()) {
        candidates.push_back(h);
        break;
      }
    }
  }
  CDS_CHECK(!candidates.empty(), "no host with a covered alloc");
  const int host = c_.Pick(candidates);
  std::vector<int> covered;
  for (size_t a = 0; a < m_.allocs.size(); ++a) {
    if (m_.allocs[a].function == host && !cov[a].Empty()) covered.push_back(static_cast<int>(a));
  }
  spec.function = m_.functions[host].name;
  body_ = &m_.functions[host].body;
  StmtModel ret = std::move(body_->back());
  body_->pop_back();
  g_.EnterHost(host);
  x_ = c_.Pick(covered);
  callee_ = c_.Pick(g_.ChipTargets());
  (this->*kPlanters[static_cast<size_t>(kind)])(spec);
  body_->push_back(std::move(ret));
  return spec;
}

// --- one function per kind, in the order of CDS_GEN_INVALID_KINDS where they
// share nothing; the kinds that share a shape follow.

void Planter::PlantDeadAlloc(InvalidSpec& spec) {
  // A size that needs no temp, so the alloc can move anywhere.
  const int a = g_.EmitAlloc(c_.Bool() ? SizeForm::kLiteral : SizeForm::kBytes);
  spec.stmt = m_.allocs[a].stmt;
  spec.message_any_of = {m_.allocs[a].name};
  MoveToRandomPosition(spec.stmt);
}

void Planter::PlantUnconsumedAlloc(InvalidSpec& spec) {
  const int a = g_.EmitAlloc();
  g_.EmitView(a);
  spec.stmt = m_.allocs[a].stmt;
  spec.message_any_of = {m_.allocs[a].name};
}

void Planter::PlantEmptyCoverage(InvalidSpec& spec) {
  const int a = g_.EmitAlloc();
  spec.stmt = m_.allocs[a].stmt;
  spec.message_any_of = {m_.allocs[a].name};
  std::vector<int> args = g_.DispatchArgs(callee_, a, false);
  const bool zero = c_.Bool();
  const int start = zero ? 0 : static_cast<int>(c_.Int(1, 4));
  const int loop = g_.NewLoop(zero ? LoopForm::kStop : LoopForm::kStartStop, start, start, 1, -1);
  g_.EmitFor(loop, [&] {
    g_.EmitDispatch(callee_, args, DeviceForm::kLoopVar, 0, m_.loops[loop].var, loop, false);
  });
}

void Planter::PlantDeviceNotLoopVar(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  int d;
  if (c_.Bool()) {
    d = g_.EmitWorldSizeTemp();
  } else {
    StmtModel k = g_.NewStmt(StmtKind::kScalar);
    k.def = g_.NewValue(g_.Fresh("d"), ValueKind::kScalar);
    k.expr = SExpr::Const(c_.Int(0, 3));
    d = k.def;
    g_.Push(std::move(k));
  }
  g_.EmitDispatch(callee_, args, DeviceForm::kNotLoopVar, 0, d, -1, false);
  spec.stmt = LastId();
  spec.message_any_of = {"device"};
}

void Planter::PlantDeviceNegative(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  g_.EmitDispatch(callee_, args, DeviceForm::kNegative, -c_.Int(1, 2), -1, -1, false);
  spec.stmt = LastId();
  spec.message_any_of = {"device"};
}

void Planter::PlantDuplicateName(InvalidSpec& spec) {
  // Same LHS and same name=: whether the pass compares the logical name or
  // the base Var's name_hint, the two slots collide in one scope.
  const std::string name = g_.Fresh("dup");
  const int64_t dev = c_.Int(0, 7);
  int second = -1;
  for (int i = 0; i < 2; ++i) {
    const int a = g_.EmitAlloc(SizeForm::kLiteral, true, name, name);
    if (i == 1) second = a;
    std::vector<int> args = g_.DispatchArgs(callee_, a, false);
    g_.EmitDispatch(callee_, args, DeviceForm::kConst, dev, -1, -1, false);
  }
  spec.stmt = m_.allocs[second].stmt;
  spec.message_any_of = {name};
}

void Planter::PlantImplicitAllReduceInLoop(InvalidSpec& spec) {
  const int data = g_.EmitView(x_, Sig({256}, DataType::kFP32));
  auto emit = [&] {
    const int coll = g_.NewCollective(CollKind::kAllReduce, {data});
    g_.EmitCollectiveStmt(coll, -1);
    spec.stmt = LastId();
  };
  if (c_.Bool()) {
    g_.EmitFor(g_.NewLoop(LoopForm::kWorldSize, 0, 0, 1, -1), emit);
  } else {
    EmitWhile(emit);
  }
  spec.text_stage = spec.ir_stage = Stage::kSynthesize;
  spec.message_any_of = {"allreduce"};
}

void Planter::PlantNestedAllReduce(InvalidSpec& spec) {
  if (g_.On(Feature::kTupleValue) && c_.Chance(1, 3)) {
    // `tupN = (pld.tensor.allreduce(data, signal, op=...),)`
    const int data = g_.EmitView(x_, Sig({256}, DataType::kFP32));
    const int signal = g_.EmitView(x_, Sig({8}, DataType::kInt32));
    const int coll = g_.NewCollective(CollKind::kAllReduce, {data, signal});
    m_.collectives[coll].nested = CollectiveModel::Nest::kTuple;
    StmtModel s = g_.NewStmt(StmtKind::kCollective);
    s.ref = coll;
    s.def = g_.NewValue(g_.Fresh("tup"), ValueKind::kTuple);
    m_.collectives[coll].stmt = s.id;
    g_.Push(std::move(s));
    spec.stmt = LastId();
    spec.text_stage = spec.ir_stage = Stage::kSynthesize;
    spec.message_any_of = {"cannot be nested inside another expression"};
    return;
  }
  // In a dispatch, the allreduce stands for the callee's first argument: only
  // when that takes data an allreduce accepts (FP16 or FP32).
  const std::vector<int>& callee_params = m_.functions[callee_].params;
  const auto reducible = [&] {
    const DataType dt = m_.values[callee_params[0]].sig.dtype;
    return dt == DataType::kFP32 || dt == DataType::kFP16;
  };
  const bool in_dispatch = c_.Bool() && !callee_params.empty() && reducible();
  const TensorSig sig = in_dispatch ? m_.values[callee_params[0]].sig : Sig({256}, DataType::kFP32);
  const int data = g_.EmitView(x_, sig);
  const int signal = g_.EmitView(x_, Sig({8}, DataType::kInt32));
  const int coll = g_.NewCollective(CollKind::kAllReduce, {data, signal});
  CollectiveModel& cm = m_.collectives[coll];
  if (in_dispatch) {
    // self.f(pld.tensor.allreduce(data, signal), more..., device=N)
    std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
    cm.nested = CollectiveModel::Nest::kDispatch;
    cm.nest_other = g_.EmitDispatch(callee_, args, DeviceForm::kConst, c_.Int(0, 3), -1, -1, false);
    // The dispatch statement renders the collective in place of its first arg.
    StmtModel& st = g_.cur_->back();
    st.kind = StmtKind::kCollective;
    st.ref = coll;
    cm.stmt = st.id;
  } else {
    cm.nested = CollectiveModel::Nest::kTensorAdd;
    cm.nest_other = data;
    StmtModel s = g_.NewStmt(StmtKind::kCollective);
    s.ref = coll;
    s.def = g_.NewValue(g_.Fresh("y"), ValueKind::kOpaque);
    m_.values[s.def].sig = sig;
    cm.stmt = s.id;
    g_.Push(std::move(s));
  }
  spec.stmt = LastId();
  spec.text_stage = spec.ir_stage = Stage::kSynthesize;
  spec.message_any_of = {"allreduce"};
}

void Planter::PlantAllReduceArity(InvalidSpec& spec) {
  const int data = g_.EmitView(x_, Sig({256}, DataType::kFP32));
  const int s1 = g_.EmitView(x_, Sig({8}, DataType::kInt32));
  const int s2 = g_.EmitView(x_, Sig({8}, DataType::kInt32));
  const int coll = g_.NewCollective(CollKind::kAllReduce, {data, s1, s2});
  g_.EmitCollectiveStmt(coll, -1);
  spec.stmt = LastId();
  spec.text_stage = Stage::kParse;
  spec.ir_stage = Stage::kSynthesize;
  spec.message_any_of = {"allreduce"};
}

void Planter::PlantCollectiveNotView(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  const int d = g_.EmitDispatch(callee_, args, DeviceForm::kConst, c_.Int(0, 3), -1, -1, true);
  const int y = g_.cur_->back().def;
  (void)d;
  const int signal = g_.EmitView(x_, Sig({8}, DataType::kInt32));
  // The data of an allreduce when y's element type is one it takes (FP16 or
  // FP32), of a broadcast (any element type) otherwise.
  const DataType dt = m_.values[y].sig.dtype;
  const bool reducible = dt == DataType::kFP32 || dt == DataType::kFP16;
  const int coll =
      g_.NewCollective(reducible ? CollKind::kAllReduce : CollKind::kBroadcast, {y, signal});
  g_.EmitCollectiveStmt(coll, -1);
  spec.stmt = LastId();
  spec.message_any_of = {reducible ? "allreduce" : "broadcast", m_.values[y].name};
}

void Planter::PlantNoTransitiveCoverage(InvalidSpec& spec) {
  // p's alloc only inherits (from x_); using it as data passes nothing on.
  const int p_alloc = g_.EmitAlloc(SizeForm::kLiteral);
  const int p = g_.EmitView(p_alloc, Sig({8}, DataType::kInt32));
  const int data = g_.EmitView(x_, Sig({256}, DataType::kFP32));
  g_.EmitCollectiveStmt(g_.NewCollective(CollKind::kAllReduce, {data, p}), -1);
  const int s_alloc = g_.EmitAlloc(SizeForm::kLiteral);
  std::vector<int> args = g_.DispatchArgs(callee_, s_alloc, false);
  g_.EmitDispatch(callee_, args, DeviceForm::kConst, c_.Int(0, 3), -1, -1, false);
  const int s2 = g_.EmitView(s_alloc, Sig({8}, DataType::kInt32));
  // p is INT32 (a signal above), so the second collective is a broadcast: its data
  // may be of any element type, an allreduce's may not.
  g_.EmitCollectiveStmt(g_.NewCollective(CollKind::kBroadcast, {p, s2}), -1);
  spec.stmt = LastId();
  spec.message_any_of = {"broadcast", m_.allocs[p_alloc].name};
}

void Planter::PlantOnlyUnplacedDispatch(InvalidSpec& spec) {
  // Every view of a fresh alloc goes only to dispatches without device=
  // (once, or in a loop): the runtime places them, so the alloc has no coverage.
  const int a = g_.EmitAlloc();
  spec.stmt = m_.allocs[a].stmt;
  spec.message_any_of = {m_.allocs[a].name};
  std::vector<int> args = g_.DispatchArgs(callee_, a, false);
  auto emit = [&] { g_.EmitDispatch(callee_, args, DeviceForm::kUnplaced, 0, -1, -1, false); };
  if (c_.Bool()) {
    emit();
  } else {
    g_.EmitFor(g_.NewLoop(LoopForm::kStop, 0, c_.Int(1, 4), 1, -1), emit);
  }
}

void Planter::PlantBarrierUncovered(InvalidSpec& spec) {
  // The signal alloc has a view but no dispatch. The pass checks hand-overs
  // (barrier included) before alloc coverage, so the barrier call is reported,
  // not the unconsumed alloc.
  const int a = g_.EmitAlloc(SizeForm::kLiteral);
  const int signal = g_.EmitView(a, Sig({8}, DataType::kInt32));
  g_.EmitCollectiveStmt(g_.NewCollective(CollKind::kBarrier, {signal}), -1);
  spec.stmt = LastId();
  spec.message_any_of = {"no dispatch coverage of its own"};
}

void Planter::PlantAllReduceCoreNum(InvalidSpec& spec) {
  // A signal-less allreduce whose core_num= is 0 or negative: the synthesized
  // signal could not be sized.
  const int data = g_.EmitView(x_, Sig({256}, DataType::kFP32));
  const int coll = g_.NewCollective(CollKind::kAllReduce, {data});
  m_.collectives[coll].core_num = c_.Bool() ? 0 : -c_.Int(1, 3);
  m_.collectives[coll].explicit_core_num = true;
  g_.EmitCollectiveStmt(coll, -1);
  spec.stmt = LastId();
  // PyPTO's allreduce deducer, and so the registry, rejects such a call where it is
  // written; only an IR built by hand brings it to the synthesis pass.
  spec.text_stage = Stage::kParse;
  spec.ir_stage = Stage::kSynthesize;
  spec.message_any_of = {"core_num"};
}

void Planter::PlantCarriedView(InvalidSpec& spec) {
  // A fresh view of a covered alloc seeds a loop-carried tensor; the pass
  // reports the loop, whatever its *body_ does with the carried value.
  const int view = g_.EmitView(x_, Sig({256}, DataType::kFP32));
  const int loop = g_.NewLoop(LoopForm::kStop, 0, c_.Int(1, 4), 1, -1);
  const int ia = g_.NewValue(g_.Fresh("acc"), ValueKind::kTensor);
  m_.values[ia].sig = m_.values[view].sig;
  m_.loops[loop].iter_args.push_back(ia);
  m_.loops[loop].inits.push_back(SExpr::VarRef(view));
  spec.stmt = g_.m_.num_stmts;  // the id EmitFor's statement gets
  g_.EmitFor(loop, [&] { g_.EmitYield(loop); });
  for (int r : std::vector<int>(m_.loops[loop].results)) g_.Define(r);
  spec.message_any_of = {"cannot be carried by a loop"};
}

void Planter::PlantDeviceStep(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  const int64_t start = c_.Int(0, 2);
  const int loop = g_.NewLoop(LoopForm::kStep, start, start + c_.Int(2, 8), c_.Int(2, 3), -1);
  DispatchOnLoopVar(spec, args, loop);
  spec.message_any_of = {"device"};
}

void Planter::PlantDeviceExpr(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  const int loop =
      g_.NewLoop(c_.Bool() ? LoopForm::kWorldSize : LoopForm::kStop, 0, c_.Int(1, 4), 1, -1);
  g_.EmitFor(loop, [&] {
    g_.EmitDispatch(callee_, args, DeviceForm::kExpr, c_.Int(1, 2), m_.loops[loop].var, loop,
                    false);
    spec.stmt = LastId();
  });
  spec.message_any_of = {"device"};
}

void Planter::PlantDeviceWorldSizeStart(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  const int loop = g_.NewLoop(LoopForm::kWorldSizeStart, c_.Int(1, 2), 0, 1, -1);
  DispatchOnLoopVar(spec, args, loop);
  spec.message_any_of = {"device"};
}

void Planter::PlantAllToAllVInFor(InvalidSpec& spec) {
  std::vector<int> args = A2avArgs();
  g_.EmitFor(g_.NewLoop(LoopForm::kStop, 0, c_.Int(1, 4), 1, -1),
             [&] { EmitAllToAllV(spec, args); });
  spec.message_any_of = {"all_to_all_v"};
}

void Planter::PlantAllToAllVInWhile(InvalidSpec& spec) {
  std::vector<int> args = A2avArgs();
  EmitWhile([&] { EmitAllToAllV(spec, args); });
  spec.message_any_of = {"all_to_all_v"};
}

// `c = n + K` (or `c = K * n`): computed, so neither a constant nor world_size().
void Planter::PlantDeviceLoopNonconstBounds(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  const int n = g_.EmitWorldSizeTemp();
  StmtModel k = g_.NewStmt(StmtKind::kScalar);
  k.def = g_.NewValue(g_.Fresh("c"), ValueKind::kScalar);
  m_.values[k.def].scalar_dtype = DataType::kIndex;
  k.expr = c_.Bool() ? SExpr::Bin(ir::BinaryOp::kAdd, SExpr::VarRef(n), SExpr::Const(c_.Int(0, 3)))
                     : SExpr::Bin(ir::BinaryOp::kMul, SExpr::VarRef(n), SExpr::Const(c_.Int(1, 3)));
  const int bound = k.def;
  g_.Push(std::move(k));
  const int loop = g_.NewLoop(LoopForm::kVarBound, 0, 0, 1, bound);
  spec.message_any_of = {"neither integer constants"};
  DispatchOnLoopVar(spec, args, loop);
}

void Planter::PlantDeviceRangeNegativeStart(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  const int64_t start = -c_.Int(1, 3);
  const int loop = g_.NewLoop(c_.Bool() ? LoopForm::kStartStop : LoopForm::kStartStopStep1, start,
                              start + c_.Int(1, 6), 1, -1);
  spec.message_any_of = {"negative device id"};
  DispatchOnLoopVar(spec, args, loop);
}

void Planter::PlantDeviceRangeTooLarge(InvalidSpec& spec) {
  std::vector<int> args = g_.DispatchArgs(callee_, x_, false);
  // One past the limit is the boundary; 100000 is the obvious hostile case.
  const int64_t stop = c_.Bool() ? kMaxModelDevices + 1 : 100000;
  const int loop = c_.Bool() ? g_.NewLoop(LoopForm::kStop, 0, stop, 1, -1)
                             : g_.NewLoop(LoopForm::kStartStop, 0, stop, 1, -1);
  spec.message_any_of = {"more than the 65536"};
  DispatchOnLoopVar(spec, args, loop);
}

// --- helpers

// A dispatch inside `loop` on its variable: the planted statement.
void Planter::DispatchOnLoopVar(InvalidSpec& spec, const std::vector<int>& args, int loop) {
  g_.EmitFor(loop, [&] {
    g_.EmitDispatch(callee_, args, DeviceForm::kLoopVar, 0, m_.loops[loop].var, loop, false);
    spec.stmt = LastId();
  });
}

void Planter::EmitAllToAllV(InvalidSpec& spec, const std::vector<int>& args) {
  const int coll = g_.NewCollective(CollKind::kAllToAllV, args);
  g_.EmitCollectiveStmt(coll, -1);
  spec.stmt = LastId();
}

std::vector<int> Planter::A2avArgs() {
  // PyPTO's operand shapes: four ranks, two rows of 64 per rank.
  const int input = g_.EmitView(x_, Sig({8, 64}, DataType::kFP32));
  const int target = g_.EmitView(x_, Sig({8, 64}, DataType::kFP32));
  const int signal = g_.EmitView(x_, Sig({4, 1}, DataType::kInt32));
  const int send = g_.EmitView(x_, Sig({4}, DataType::kInt32));
  const int recv = g_.EmitView(x_, Sig({4, 1}, DataType::kInt32));
  return {input, target, signal, send, recv};
}

// A statement that references nothing may sit anywhere in the top level.
void Planter::MoveToRandomPosition(int id) {
  std::vector<StmtModel>& body = *body_;
  auto it = std::find_if(body.begin(), body.end(), [id](const StmtModel& s) { return s.id == id; });
  CDS_CHECK(it != body.end(), "planted statement not at the top level");
  StmtModel s = std::move(*it);
  body.erase(it);
  const size_t pos = c_.Index(body.size() + 1);
  body.insert(body.begin() + static_cast<std::ptrdiff_t>(pos), std::move(s));
}

}  // namespace

InvalidModel GenerateInvalid(Choices& choices, InvalidKind kind, const GenOptions& options) {
  InvalidModel out;
  detail::Generator g(choices, options, out.model);
  g.Run();
  Planter planter(g, out.model, choices);
  out.spec = planter.Plant(kind);
  out.text = AssignLines(out.model);
  out.spec.line = out.model.stmt_lines.at(static_cast<size_t>(out.spec.stmt));
  return out;
}

}  // namespace cds::fuzz
