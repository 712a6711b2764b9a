// Dispatches to chip orchestrators, Graph and InCore functions, with the device=
// forms that give an alloc its coverage.

#include <fmt/format.h>

#include "fuzz/gen/generator.h"
#include "fuzz/gen/weights.h"

namespace cds::fuzz::detail {

// Arguments for every parameter of `callee`: matching usable views or new
// views of `alloc` (any alloc when -1).
std::vector<int> Generator::DispatchArgs(int callee, int alloc, bool reuse) {
  std::vector<int> args;
  args.reserve(m_.functions[callee].params.size());
  for (int p : m_.functions[callee].params) {
    const TensorSig& sig = m_.values[p].sig;
    ValueList cands;
    if (reuse) {
      cands = UsableWhere(
          [&](const ValueModel& v) { return v.kind == ValueKind::kView && SigEqual(v.sig, sig); });
    }
    if (!cands.empty() && !c_.Chance(1, 4)) {
      args.push_back(c_.Pick(cands));
    } else {
      args.push_back(EmitView(alloc >= 0 ? alloc : PickAlloc(sig.dtype == DataType::kInt32), sig));
    }
  }
  return args;
}

int Generator::EmitDispatch(int callee, std::vector<int> args, DeviceForm form, int64_t constant,
                            int device_var, int loop, bool bind_result) {
  DispatchModel d;
  d.function = host_;
  d.callee = callee;
  d.args = std::move(args);
  d.form = form;
  d.constant = constant;
  d.device_var = device_var;
  d.loop = loop;
  d.loop_context = loop_stack_;
  d.in_while = in_while_;
  StmtModel s = NewStmt(StmtKind::kDispatch);
  d.stmt = s.id;
  s.ref = static_cast<int>(m_.dispatches.size());
  if (bind_result) {
    s.def = NewValue(Fresh("y"), ValueKind::kOpaque);
    m_.values[s.def].sig = m_.values[m_.functions[callee].params[0]].sig;
  }
  m_.dispatches.push_back(std::move(d));
  const int idx = s.ref;
  Push(std::move(s));
  return idx;
}

void Generator::GenDispatch() {
  ValueList callees(ChipTargets().begin(), ChipTargets().end());
  ValueList weights(callees.size(), kChipCalleeWeight);
  for (size_t i = 0; i < m_.functions.size(); ++i) {
    const FuncRole r = m_.functions[i].role;
    if ((r == FuncRole::kGraph || r == FuncRole::kInCore) && !IsCollectiveKernel(m_.functions[i])) {
      callees.push_back(static_cast<int>(i));
      weights.push_back(kGraphOrInCoreCalleeWeight);
    }
  }
  const int callee = callees[c_.Weighted(weights)];
  std::vector<int> args = DispatchArgs(callee, -1, true);
  DeviceForm form = DeviceForm::kConst;
  int var = -1, loop = -1;
  if (m_.functions[callee].role == FuncRole::kInCore) {
    // PyPTO's parser takes no device= on a call of an InCore function.
    form = DeviceForm::kUnplaced;
  } else if (On(Feature::kDeviceUnplaced) && c_.Chance(1, 4)) {
    // Placed by the runtime: no coverage. Finalize covers its views' allocs if
    // no placed dispatch does.
    form = DeviceForm::kUnplaced;
  } else if (!loop_stack_.empty() && !(On(Feature::kDeviceConst) && c_.Chance(1, 4))) {
    // Any enclosing loop variable is a valid device: under nested loops an outer
    // one two times in three.
    const size_t depth = loop_stack_.size();
    const size_t pick = depth == 1 || c_.Chance(1, 3) ? depth - 1 : c_.Index(depth - 1);
    loop = loop_stack_[pick];
    var = m_.loops[loop].var;
    form = DeviceForm::kLoopVar;
  }
  EmitDispatch(callee, std::move(args), form, c_.Int(0, 7), var, loop, c_.Chance(1, 10));
}

void Generator::PatchDispatch(int alloc) {
  const int callee = c_.Pick(ChipTargets());
  std::vector<int> args = DispatchArgs(callee, alloc, false);
  EmitDispatch(callee, std::move(args), DeviceForm::kConst, c_.Int(0, 7), -1, -1, false);
}

}  // namespace cds::fuzz::detail
