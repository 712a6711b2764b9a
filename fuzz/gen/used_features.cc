// Which features a program uses, read back from the model: what the generator
// drew, as the coverage tests and `cds-gen --stats` count it.

#include <absl/container/flat_hash_map.h>

#include "fuzz/gen/expect.h"
#include "fuzz/gen/model.h"

namespace cds::fuzz {
namespace {

class FeatureReader {
 public:
  explicit FeatureReader(const ProgramModel& m) : m_(m) {}

  FeatureSet Read() {
    if (m_.HostFunctions().size() >= 2) Set(Feature::kMultiHost);
    if (m_.dynamic_dim >= 0) Set(Feature::kSizeSymbolic);
    for (const FunctionModel& f : m_.functions) Function(f);
    for (const AllocModel& a : m_.allocs) Alloc(a);
    for (const LoopModel& l : m_.loops) Loop(l);
    for (const DispatchModel& d : m_.dispatches) Dispatch(d);
    for (const CollectiveModel& c : m_.collectives) Collective(c);
    absl::flat_hash_map<int, int> windows_per_alloc;
    for (const FunctionModel& f : m_.functions) {
      absl::flat_hash_map<std::string, int> view_bindings;
      ForEachStmt(f.body, [&](const StmtModel& s) {
        if (s.kind == StmtKind::kView) windows_per_alloc[s.ref]++;
        Statement(s);
        if (s.def >= 0) Binding(m_.values[s.def], view_bindings);
      });
    }
    for (const auto& [a, n] : windows_per_alloc) {
      if (n >= 2) Set(Feature::kMultiView);
    }
    return used_;
  }

 private:
  void Set(Feature f) { used_.set(static_cast<size_t>(f)); }

  void Function(const FunctionModel& f) {
    if (f.decl == DeclForm::kHostTypeLevel) Set(Feature::kHostByType);
    if (f.decl == DeclForm::kChipType) Set(Feature::kChipByType);
    if (f.decl == DeclForm::kChipLevelRole) Set(Feature::kChipByLevelRole);
    if (f.role == FuncRole::kGraph) Set(Feature::kGraphFunc);
    if (f.role == FuncRole::kInCore)
      Set(IsCollectiveKernel(f) ? Feature::kKernelCollective : Feature::kInCoreFunc);
  }

  void Alloc(const AllocModel& a) {
    switch (a.size_form) {
      case SizeForm::kLiteral:
        Set(Feature::kSizeLiteral);
        break;
      case SizeForm::kBytes:
        Set(Feature::kSizeBytes);
        break;
      case SizeForm::kWorldSize:
        Set(Feature::kSizeWorldSize);
        break;
      case SizeForm::kShape:
        Set(Feature::kSizeShape);
        for (const Dim& d : a.shape) {
          if (d.var >= 0) Set(Feature::kSizeSymbolic);
        }
        break;
    }
  }

  void Loop(const LoopModel& l) {
    if (l.kind != LoopKind::kRange) Set(Feature::kWholeProgram);
    if (!l.iter_args.empty()) Set(Feature::kIterArgs);
    if (LoopIsEmpty(l)) {
      Set(Feature::kLoopEmpty);
      return;
    }
    switch (l.form) {
      case LoopForm::kWorldSize:
      case LoopForm::kWorldSizeExplicit:
        Set(Feature::kLoopWorldSize);
        break;
      case LoopForm::kStop:
        Set(Feature::kLoopRange);
        break;
      case LoopForm::kStartStop:
      case LoopForm::kStartStopStep1:
        Set(Feature::kLoopStartStop);
        break;
      case LoopForm::kWorldSizeTemp:
      case LoopForm::kStopTemp:
        Set(Feature::kLoopBoundTemp);
        break;
      default:
        break;
    }
  }

  void Dispatch(const DispatchModel& d) {
    if (!IsDispatchTarget(m_.functions[d.callee])) return;
    if (d.loop_context.empty()) Set(Feature::kDeviceOutsideLoop);
    if (d.form == DeviceForm::kConst && !d.loop_context.empty()) Set(Feature::kDeviceConst);
    if (d.form == DeviceForm::kUnplaced) Set(Feature::kDeviceUnplaced);
    if (d.loop_context.size() >= 2) Set(Feature::kNestedLoop);
  }

  void Collective(const CollectiveModel& c) {
    if (IsCollectiveKernel(m_.functions[c.function])) return;
    if (m_.functions[c.function].role == FuncRole::kChipOrch) {
      Set(Feature::kChipCollective);
      return;
    }
    switch (c.kind) {
      case CollKind::kAllReduce:
        if (c.in_return) Set(Feature::kAllReduceReturn);
        Set(c.ImplicitSignal() ? Feature::kAllReduceImplicit : Feature::kAllReduce);
        break;
      case CollKind::kBroadcast:
        Set(Feature::kBroadcast);
        break;
      case CollKind::kReduceScatter:
        Set(Feature::kReduceScatter);
        break;
      case CollKind::kBarrier:
        Set(Feature::kBarrier);
        break;
      case CollKind::kAllGather:
        Set(Feature::kAllGather);
        break;
      case CollKind::kAllToAll:
        Set(Feature::kAllToAll);
        break;
      case CollKind::kAllToAllV:
        Set(Feature::kAllToAllV);
        break;
    }
    if (c.result >= 0) Set(Feature::kCollectiveResult);
  }

  void Statement(const StmtModel& s) {
    switch (s.kind) {
      case StmtKind::kAlias:
        Set(Feature::kAlias);
        break;
      case StmtKind::kWhile:
        Set(Feature::kWhileLoop);
        break;
      case StmtKind::kIf:
        Set(Feature::kIfElse);
        break;
      case StmtKind::kTensorCreate:
      case StmtKind::kTensorAdd:
        Set(Feature::kNoiseTensor);
        break;
      case StmtKind::kScalar:
        if (s.expr.kind == SExpr::Kind::kTuple) {
          Set(Feature::kTupleValue);
        } else if (s.expr.HasSubscript()) {
          Set(Feature::kSubscript);
        } else if (s.expr.kind == SExpr::Kind::kBinary) {
          Set(Feature::kNoiseScalar);
        }
        break;
      case StmtKind::kScope:
        if (s.flag) {
          Set(Feature::kSubscript);
          Set(Feature::kOpaqueCall);
        } else {
          Set(Feature::kWholeProgram);
        }
        break;
      case StmtKind::kOpaque:
        Set(Feature::kOpaqueCall);
        if (!s.tuple_args.empty()) Set(Feature::kTupleValue);
        if (s.flag) Set(Feature::kSubscript);
        break;
      case StmtKind::kReturn:
        if (s.src >= 0) Set(Feature::kTupleValue);
        break;
      case StmtKind::kUnpack:
        Set(Feature::kUnpack);
        break;
      case StmtKind::kSubscriptAssign:
        Set(Feature::kSubscript);
        break;
      default:
        break;
    }
  }

  // A view name bound twice is a rebind; a name the synthesis pass could pick, a collision.
  void Binding(const ValueModel& v, absl::flat_hash_map<std::string, int>& view_bindings) {
    if (v.kind == ValueKind::kView && ++view_bindings[v.name] == 2) Set(Feature::kRebind);
    if (v.name.rfind("__allreduce_", 0) == 0) Set(Feature::kNameCollision);
  }

  const ProgramModel& m_;
  FeatureSet used_;
};

}  // namespace

FeatureSet ProgramModel::UsedFeatures() const { return FeatureReader(*this).Read(); }

}  // namespace cds::fuzz
