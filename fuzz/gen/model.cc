#include "fuzz/gen/model.h"

#include <algorithm>
#include <array>
#include <initializer_list>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "fuzz/gen/expect.h"
#include "fuzz/gen/render.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace cds::fuzz {

using ir::DataType;

// ---------------------------------------------------------------------------
// Names

namespace {
struct FeatureEntry {
  Feature f;
  std::string_view name;
};
constexpr FeatureEntry kFeatureNames[] = {
#define CDS_GEN_FEATURE_NAME(N, S) {Feature::k##N, S},
    CDS_GEN_FEATURES(CDS_GEN_FEATURE_NAME)
#undef CDS_GEN_FEATURE_NAME
};
struct InvalidEntry {
  InvalidKind k;
  std::string_view name;
};
constexpr InvalidEntry kInvalidNames[] = {
#define CDS_GEN_INVALID_NAME(N, S) {InvalidKind::k##N, S},
    CDS_GEN_INVALID_KINDS(CDS_GEN_INVALID_NAME)
#undef CDS_GEN_INVALID_NAME
};
}  // namespace

std::string_view FeatureName(Feature f) { return kFeatureNames[static_cast<size_t>(f)].name; }
std::optional<Feature> FeatureFromName(std::string_view name) {
  for (const auto& e : kFeatureNames) {
    if (e.name == name) return e.f;
  }
  return std::nullopt;
}
FeatureSet AllFeatures() { return FeatureSet().set(); }

std::string_view InvalidKindName(InvalidKind k) {
  return kInvalidNames[static_cast<size_t>(k)].name;
}
std::optional<InvalidKind> InvalidKindFromName(std::string_view name) {
  for (const auto& e : kInvalidNames) {
    if (e.name == name) return e.k;
  }
  return std::nullopt;
}

std::string_view StageName(Stage s) {
  switch (s) {
    case Stage::kParse:
      return "parse";
    case Stage::kSynthesize:
      return "synthesize";
    case Stage::kMaterialize:
      return "materialize";
  }
  return "?";
}

std::string_view CollOpName(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce:
      return ir::ops::kAllReduce;
    case CollKind::kBroadcast:
      return ir::ops::kBroadcast;
    case CollKind::kReduceScatter:
      return ir::ops::kReduceScatter;
    case CollKind::kBarrier:
      return ir::ops::kBarrier;
    case CollKind::kAllGather:
      return ir::ops::kAllGather;
    case CollKind::kAllToAll:
      return ir::ops::kAllToAll;
    case CollKind::kAllToAllV:
      return ir::ops::kAllToAllV;
  }
  return "?";
}

// ---------------------------------------------------------------------------
// ProgramModel queries

bool IsCollectiveKernel(const FunctionModel& f) {
  return f.role == FuncRole::kInCore && !f.body.empty();
}

std::vector<int> ProgramModel::HostFunctions() const {
  std::vector<int> out;
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].role == FuncRole::kHostOrch) out.push_back(static_cast<int>(i));
  }
  return out;
}

int ProgramModel::FindFunction(std::string_view fname) const {
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == fname) return static_cast<int>(i);
  }
  return -1;
}

namespace {
const StmtModel* FindIn(const std::vector<StmtModel>& body, int id) {
  for (const StmtModel& s : body) {
    if (s.id == id) return &s;
    if (const StmtModel* r = FindIn(s.body, id)) return r;
    if (const StmtModel* r = FindIn(s.orelse, id)) return r;
  }
  return nullptr;
}
}  // namespace

const StmtModel* ProgramModel::FindStmt(int id) const {
  for (const FunctionModel& f : functions) {
    if (const StmtModel* s = FindIn(f.body, id)) return s;
  }
  return nullptr;
}

FeatureSet ProgramModel::UsedFeatures() const {
  FeatureSet u;
  auto set = [&u](Feature f) { u.set(static_cast<size_t>(f)); };
  if (HostFunctions().size() >= 2) set(Feature::kMultiHost);
  for (const FunctionModel& f : functions) {
    if (f.decl == DeclForm::kHostTypeLevel) set(Feature::kHostByType);
    if (f.decl == DeclForm::kChipType) set(Feature::kChipByType);
    if (f.decl == DeclForm::kChipLevelRole) set(Feature::kChipByLevelRole);
    if (f.role == FuncRole::kGraph) set(Feature::kGraphFunc);
    if (f.role == FuncRole::kInCore)
      set(IsCollectiveKernel(f) ? Feature::kKernelCollective : Feature::kInCoreFunc);
  }
  absl::flat_hash_map<int, int> windows_per_alloc;
  for (const AllocModel& a : allocs) {
    switch (a.size_form) {
      case SizeForm::kLiteral:
        set(Feature::kSizeLiteral);
        break;
      case SizeForm::kBytes:
        set(Feature::kSizeBytes);
        break;
      case SizeForm::kWorldSize:
        set(Feature::kSizeWorldSize);
        break;
      case SizeForm::kShape:
        set(Feature::kSizeShape);
        break;
    }
  }
  for (const LoopModel& l : loops) {
    if (l.kind != LoopKind::kRange) set(Feature::kWholeProgram);
    if (!l.iter_args.empty()) set(Feature::kIterArgs);
    if (LoopIsEmpty(l)) {
      set(Feature::kLoopEmpty);
      continue;
    }
    switch (l.form) {
      case LoopForm::kWorldSize:
      case LoopForm::kWorldSizeExplicit:
        set(Feature::kLoopWorldSize);
        break;
      case LoopForm::kStop:
        set(Feature::kLoopRange);
        break;
      case LoopForm::kStartStop:
      case LoopForm::kStartStopStep1:
        set(Feature::kLoopStartStop);
        break;
      case LoopForm::kWorldSizeTemp:
      case LoopForm::kStopTemp:
        set(Feature::kLoopBoundTemp);
        break;
      default:
        break;
    }
  }
  for (const DispatchModel& d : dispatches) {
    if (!IsDispatchTarget(functions[d.callee])) continue;
    if (d.loop_context.empty()) set(Feature::kDeviceOutsideLoop);
    if (d.form == DeviceForm::kConst && !d.loop_context.empty()) set(Feature::kDeviceConst);
    if (d.form == DeviceForm::kUnplaced) set(Feature::kDeviceUnplaced);
    if (d.loop_context.size() >= 2) set(Feature::kNestedLoop);
  }
  for (const CollectiveModel& c : collectives) {
    if (IsCollectiveKernel(functions[c.function])) continue;
    if (functions[c.function].role == FuncRole::kChipOrch) {
      set(Feature::kChipCollective);
      continue;
    }
    switch (c.kind) {
      case CollKind::kAllReduce:
        if (c.in_return) set(Feature::kAllReduceReturn);
        set(c.ImplicitSignal() ? Feature::kAllReduceImplicit : Feature::kAllReduce);
        break;
      case CollKind::kBroadcast:
        set(Feature::kBroadcast);
        break;
      case CollKind::kReduceScatter:
        set(Feature::kReduceScatter);
        break;
      case CollKind::kBarrier:
        set(Feature::kBarrier);
        break;
      case CollKind::kAllGather:
        set(Feature::kAllGather);
        break;
      case CollKind::kAllToAll:
        set(Feature::kAllToAll);
        break;
      case CollKind::kAllToAllV:
        set(Feature::kAllToAllV);
        break;
    }
    if (c.result >= 0) set(Feature::kCollectiveResult);
  }
  for (size_t fi = 0; fi < functions.size(); ++fi) {
    absl::flat_hash_map<std::string, int> view_bindings;
    ForEachStmt(functions[fi].body, [&](const StmtModel& s) {
      switch (s.kind) {
        case StmtKind::kView:
          windows_per_alloc[s.ref]++;
          break;
        case StmtKind::kAlias:
          set(Feature::kAlias);
          break;
        case StmtKind::kWhile:
          set(Feature::kWhileLoop);
          break;
        case StmtKind::kIf:
          set(Feature::kIfElse);
          break;
        case StmtKind::kTensorCreate:
        case StmtKind::kTensorAdd:
          set(Feature::kNoiseTensor);
          break;
        case StmtKind::kScalar:
          if (s.expr.kind == SExpr::Kind::kTuple) {
            set(Feature::kTupleValue);
          } else if (s.expr.HasSubscript()) {
            set(Feature::kSubscript);
          } else if (s.expr.kind == SExpr::Kind::kBinary) {
            set(Feature::kNoiseScalar);
          }
          break;
        case StmtKind::kScope:
          set(s.flag ? Feature::kSubscript : Feature::kWholeProgram);
          break;
        case StmtKind::kOpaque:
          set(s.tuple_args.empty() ? Feature::kWholeProgram : Feature::kTupleValue);
          if (s.flag) set(Feature::kSubscript);
          break;
        case StmtKind::kReturn:
          if (s.src >= 0) set(Feature::kTupleValue);
          break;
        case StmtKind::kUnpack:
          set(Feature::kUnpack);
          break;
        case StmtKind::kSubscriptAssign:
          set(Feature::kSubscript);
          break;
        default:
          break;
      }
      if (s.def >= 0) {
        const ValueModel& v = values[s.def];
        if (v.kind == ValueKind::kView && ++view_bindings[v.name] == 2) set(Feature::kRebind);
        if (v.name.rfind("__allreduce_", 0) == 0) set(Feature::kNameCollision);
      }
    });
  }
  for (const auto& [a, n] : windows_per_alloc) {
    if (n >= 2) set(Feature::kMultiView);
  }
  return u;
}

// ---------------------------------------------------------------------------
// The generator

namespace {

bool SigEqual(const TensorSig& a, const TensorSig& b) {
  if (a.dtype != b.dtype || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i].var != b.dims[i].var || a.dims[i].constant != b.dims[i].constant) return false;
  }
  return true;
}

TensorSig Sig(std::initializer_list<int64_t> dims, DataType dt) {
  TensorSig s;
  for (int64_t d : dims) s.dims.push_back(Dim{d, -1});
  s.dtype = dt;
  return s;
}

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

class Generator {
 public:
  Generator(Choices& c, const GenOptions& o, ProgramModel& m) : c_(c), opt_(o), m_(m) {}

  void Run() {
    // Room for a typical program, so the tables do not regrow while it is built:
    // fuzz_pipeline's programs (size 16) bind 32 values on average (80 at most) and
    // hold about 5 dispatches, 5 collectives and 3 allocs. Larger ones still grow.
    const size_t n = static_cast<size_t>(std::max(opt_.size, 1));
    m_.values.reserve(4 * n);
    live_.reserve(4 * n);
    latest_.reserve(4 * n);
    m_.allocs.reserve(n / 2 + 2);
    m_.dispatches.reserve(n);
    m_.collectives.reserve(n);
    DrawFeatures();
    MakeFunctions();
    const std::vector<int> hosts = m_.HostFunctions();
    int total =
        opt_.fixed_size ? opt_.size : static_cast<int>(c_.Int(std::min(4, opt_.size), opt_.size));
    total = std::max(total, 1);
    for (size_t i = 0; i < hosts.size(); ++i) {
      const int share = std::max(3, total / static_cast<int>(hosts.size()));
      GenHost(hosts[i], share, i == 0);
    }
  }

  // --- helpers shared with the invalid planter --------------------------------

  bool On(Feature f) const { return m_.enabled.test(static_cast<size_t>(f)); }

  std::string Fresh(const std::string& prefix) {
    return fmt::format("{}{}", prefix, counters_[prefix]++);
  }

  int NewValue(std::string name, ValueKind kind) {
    ValueModel v;
    v.name = std::move(name);
    v.kind = kind;
    v.function = host_;
    m_.values.push_back(std::move(v));
    return static_cast<int>(m_.values.size()) - 1;
  }

  StmtModel NewStmt(StmtKind kind) {
    StmtModel s;
    s.kind = kind;
    s.id = m_.num_stmts++;
    return s;
  }

  // Appends to the current block and makes the defined value visible.
  void Push(StmtModel s) {
    if (s.def >= 0) Define(s.def);
    cur_->push_back(std::move(s));
  }

  // A value is usable while its block is open and its name not rebound.
  void Define(int v) {
    if (live_.size() < m_.values.size()) live_.resize(m_.values.size(), 0);
    auto [it, inserted] = latest_.try_emplace(m_.values[v].name, v);
    if (!inserted) {
      live_[it->second] = 0;
      it->second = v;
    }
    live_[v] = 1;
    scopes_.back().push_back(v);
  }

  bool Usable(int v) const { return v < static_cast<int>(live_.size()) && live_[v]; }

  // The candidates a statement draws from: a few values, so kept on the stack
  // (the generator asks for such a list several times per statement).
  using ValueList = absl::InlinedVector<int, 16>;

  template <typename P>
  ValueList UsableWhere(P pred) const {
    ValueList out;
    for (const auto& scope : scopes_) {
      for (int v : scope) {
        if (Usable(v) && pred(m_.values[v])) out.push_back(v);
      }
    }
    return out;
  }

  bool InLoop() const { return !loop_stack_.empty() || in_while_; }

  // Starts emitting at the top level of host `h`, after its current statements.
  void EnterHost(int h) {
    host_ = h;
    scopes_.assign(1, {});
    latest_.clear();
    live_.assign(m_.values.size(), 0);
    loop_stack_.clear();
    in_while_ = false;
    cur_ = &m_.functions[h].body;
    host_allocs_.clear();
    for (size_t a = 0; a < m_.allocs.size(); ++a) {
      if (m_.allocs[a].function == h) host_allocs_.push_back(static_cast<int>(a));
    }
    // Rebuild visibility of top-level bindings in order (later bindings win).
    for (const StmtModel& s : *cur_) {
      if (s.def >= 0) Define(s.def);
    }
  }

  int EmitWorldSizeTemp() {
    StmtModel s = NewStmt(StmtKind::kScalar);
    s.def = NewValue(Fresh("n"), ValueKind::kScalar);
    m_.values[s.def].scalar_dtype = DataType::kIndex;
    s.expr = SExpr::WorldSize();
    const int v = s.def;
    Push(std::move(s));
    return v;
  }

  int UsableWorldSizeTemp() {
    ValueList ws = UsableWhere([](const ValueModel& v) {
      return v.kind == ValueKind::kScalar && v.scalar_dtype == DataType::kIndex && v.name[0] == 'n';
    });
    if (!ws.empty() && c_.Chance(3, 4)) return c_.Pick(ws);
    return EmitWorldSizeTemp();
  }

  int EmitAlloc(std::optional<SizeForm> force_form = std::nullopt, bool dump_form = false,
                std::string logical = {}, std::string var_name = {}) {
    absl::InlinedVector<SizeForm, 4> forms;
    if (On(Feature::kSizeLiteral)) forms.push_back(SizeForm::kLiteral);
    if (On(Feature::kSizeBytes)) forms.push_back(SizeForm::kBytes);
    if (On(Feature::kSizeWorldSize)) forms.push_back(SizeForm::kWorldSize);
    if (On(Feature::kSizeShape)) forms.push_back(SizeForm::kShape);
    if (forms.empty()) forms.push_back(SizeForm::kLiteral);
    AllocModel a;
    a.function = host_;
    a.size_form = force_form ? *force_form : c_.Pick(forms);
    static const std::vector<DataType> kData = {DataType::kFP32, DataType::kFP16, DataType::kBF16};
    a.dtype = c_.Chance(1, 3) ? DataType::kInt32 : c_.Pick(kData);
    static constexpr int64_t kElems[] = {256, 1024, 64, 4096};
    const int64_t elems = kElems[c_.Int(0, 3)];
    switch (a.size_form) {
      case SizeForm::kLiteral:
        a.size = SExpr::Const(elems * ir::DataTypeBytes(a.dtype));
        break;
      case SizeForm::kBytes:
        a.size = SExpr::Bin(ir::BinaryOp::kMul, SExpr::Const(elems), SExpr::BytesOf(a.dtype));
        break;
      case SizeForm::kWorldSize: {
        const int n = UsableWorldSizeTemp();
        a.size = SExpr::Bin(ir::BinaryOp::kMul, SExpr::VarRef(n),
                            SExpr::Const(c_.Chance(1, 2) ? 4 : elems));
        break;
      }
      case SizeForm::kShape:
        if (c_.Bool()) {
          a.shape = {elems};
        } else {
          a.shape = {c_.Int(1, 8), 64};
        }
        break;
    }
    if (var_name.empty()) var_name = Fresh(a.dtype == DataType::kInt32 ? "sbuf" : "buf");
    a.name = logical.empty() ? var_name : logical;
    a.dump_form = dump_form;
    StmtModel s = NewStmt(StmtKind::kAlloc);
    s.def = NewValue(var_name, ValueKind::kPtr);
    a.var = s.def;
    a.stmt = s.id;
    s.ref = static_cast<int>(m_.allocs.size());
    m_.values[s.def].alloc = s.ref;
    m_.allocs.push_back(std::move(a));
    windows_.push_back(0);
    host_allocs_.push_back(s.ref);
    const int idx = s.ref;
    Push(std::move(s));
    return idx;
  }

  TensorSig RandomViewSig(int alloc) {
    if (m_.allocs[alloc].dtype == DataType::kInt32 && c_.Chance(2, 3)) return SignalSig();
    if (c_.Chance(2, 3)) return c_.Pick(palette_);
    static constexpr int64_t kLengths[] = {64, 256, 128};
    return Sig({kLengths[c_.Int(0, 2)]}, m_.allocs[alloc].dtype);
  }

  TensorSig SignalSig() {
    if (c_.Chance(1, 4)) {
      // A world-size-shaped signal, as SynthesizeAllReduceSignals builds one.
      TensorSig s;
      s.dims = {Dim{0, UsableWorldSizeTemp()}, Dim{c_.Int(1, 2), -1}};
      s.dtype = DataType::kInt32;
      return s;
    }
    static constexpr int64_t kLengths[] = {8, 16, 4};
    return Sig({kLengths[c_.Int(0, 2)]}, DataType::kInt32);
  }

  // `name = pld.window(alloc, [shape], dtype=)`; rebinds `rebind`'s name if given.
  int EmitView(int alloc, std::optional<TensorSig> sig = std::nullopt, int rebind = -1) {
    TensorSig s = sig ? *sig : RandomViewSig(alloc);
    std::string name =
        rebind >= 0 ? m_.values[rebind].name : Fresh(s.dtype == DataType::kInt32 ? "s" : "x");
    StmtModel st = NewStmt(StmtKind::kView);
    st.ref = alloc;
    ++windows_[alloc];
    st.def = NewValue(std::move(name), ValueKind::kView);
    m_.values[st.def].alloc = alloc;
    m_.values[st.def].sig = std::move(s);
    const int v = st.def;
    Push(std::move(st));
    return v;
  }

  // Allocs keep to at most three windows while any alloc has room for another.
  int PickAlloc(bool prefer_int32) {
    ValueList room, pref;
    for (int a : host_allocs_) {
      if (windows_[a] < 3) room.push_back(a);
    }
    const std::span<const int> pool =
        room.empty() ? std::span<const int>(host_allocs_) : std::span<const int>(room);
    for (int a : pool) {
      if ((m_.allocs[a].dtype == DataType::kInt32) == prefer_int32) pref.push_back(a);
    }
    if (!pref.empty() && c_.Chance(3, 4)) return c_.Pick(pref);
    return c_.Pick(pool);
  }

  // A usable view satisfying `pred`, or a new one of `sig`.
  template <typename P>
  int ViewArg(P pred, const TensorSig& sig, bool prefer_int32) {
    ValueList cands =
        UsableWhere([&](const ValueModel& v) { return v.kind == ValueKind::kView && pred(v); });
    if (!cands.empty() && !c_.Chance(1, 4)) return c_.Pick(cands);
    return EmitView(PickAlloc(prefer_int32), sig);
  }

  int SignalArg() {
    return ViewArg([](const ValueModel& v) { return v.sig.dtype == DataType::kInt32; }, SignalSig(),
                   true);
  }
  // `dtypes`: the element types the op takes there, when it restricts them (PyPTO's
  // deducers: allreduce data FP16 or FP32, an all_to_all target the input's); a new
  // view takes the first when the palette's does not fit.
  int DataArg(bool two_d, std::initializer_list<DataType> dtypes = {}) {
    TensorSig sig = two_d ? Sig({c_.Int(2, 8), 64}, DataType::kFP32) : c_.Pick(palette_);
    auto fits = [&dtypes](DataType d) {
      return dtypes.size() == 0 ? d != DataType::kInt32
                                : std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
    };
    if (!two_d && !fits(sig.dtype))
      sig.dtype = dtypes.size() == 0 ? DataType::kFP32 : *dtypes.begin();
    return ViewArg(
        [two_d, &fits](const ValueModel& v) {
          return two_d ? v.sig.dims.size() == 2 : fits(v.sig.dtype);
        },
        sig, false);
  }
  int AllReduceDataArg() { return DataArg(false, {DataType::kFP32, DataType::kFP16}); }

  // The chip orchestrators, fixed once MakeFunctions has made the functions.
  const std::vector<int>& ChipTargets() const { return chip_targets_; }

  // Arguments for every parameter of `callee`: matching usable views or new
  // views of `alloc` (any alloc when -1).
  std::vector<int> DispatchArgs(int callee, int alloc, bool reuse) {
    std::vector<int> args;
    args.reserve(m_.functions[callee].params.size());
    for (int p : m_.functions[callee].params) {
      const TensorSig& sig = m_.values[p].sig;
      ValueList cands;
      if (reuse) {
        cands = UsableWhere([&](const ValueModel& v) {
          return v.kind == ValueKind::kView && SigEqual(v.sig, sig);
        });
      }
      if (!cands.empty() && !c_.Chance(1, 4)) {
        args.push_back(c_.Pick(cands));
      } else {
        args.push_back(
            EmitView(alloc >= 0 ? alloc : PickAlloc(sig.dtype == DataType::kInt32), sig));
      }
    }
    return args;
  }

  int EmitDispatch(int callee, std::vector<int> args, DeviceForm form, int64_t constant,
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

  void GenDispatch() {
    ValueList callees(ChipTargets().begin(), ChipTargets().end());
    ValueList weights(callees.size(), 6);
    for (size_t i = 0; i < m_.functions.size(); ++i) {
      const FuncRole r = m_.functions[i].role;
      if ((r == FuncRole::kGraph || r == FuncRole::kInCore) &&
          !IsCollectiveKernel(m_.functions[i])) {
        callees.push_back(static_cast<int>(i));
        weights.push_back(2);
      }
    }
    const int callee = callees[c_.Weighted(weights)];
    std::vector<int> args = DispatchArgs(callee, -1, true);
    DeviceForm form = DeviceForm::kConst;
    int var = -1, loop = -1;
    if (On(Feature::kDeviceUnplaced) && c_.Chance(1, 4)) {
      // Placed by the runtime: no coverage. Finalize covers its views' allocs if
      // no placed dispatch does.
      form = DeviceForm::kUnplaced;
    } else if (!loop_stack_.empty() && !(On(Feature::kDeviceConst) && c_.Chance(1, 4))) {
      // Innermost loops are likelier, but any enclosing loop variable is a valid device.
      const size_t depth = loop_stack_.size();
      const size_t pick = c_.Chance(2, 3) ? depth - 1 : c_.Index(depth);
      loop = loop_stack_[pick];
      var = m_.loops[loop].var;
      form = DeviceForm::kLoopVar;
    }
    EmitDispatch(callee, std::move(args), form, c_.Int(0, 7), var, loop, c_.Chance(1, 10));
  }

  SExpr Condition() {
    ValueList scalars = UsableWhere([](const ValueModel& v) {
      return v.kind == ValueKind::kScalar || v.kind == ValueKind::kLoopVar;
    });
    static const ir::BinaryOp kCmp[] = {ir::BinaryOp::kLt, ir::BinaryOp::kGt, ir::BinaryOp::kEq,
                                        ir::BinaryOp::kNe};
    const ir::BinaryOp op = kCmp[c_.Int(0, 3)];
    SExpr lhs =
        !scalars.empty() && c_.Chance(2, 3) ? SExpr::VarRef(c_.Pick(scalars)) : SExpr::WorldSize();
    return SExpr::Bin(op, std::move(lhs), SExpr::Const(c_.Int(0, 8)));
  }

  int NewLoop(LoopForm form, int64_t start, int64_t stop, int64_t step, int bound_var) {
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
  std::vector<StmtModel>* OpenBlock(std::vector<StmtModel>* body) {
    std::vector<StmtModel>* saved = cur_;
    cur_ = body;
    scopes_.emplace_back();
    return saved;
  }
  void CloseBlock(std::vector<StmtModel>* saved) {
    for (int v : scopes_.back()) live_[v] = 0;
    scopes_.pop_back();
    cur_ = saved;
  }

  // A for statement whose body `fill` generates; returns the statement's budget use.
  template <typename F>
  void EmitFor(int loop, F&& fill) {
    StmtModel s = NewStmt(StmtKind::kFor);
    s.ref = loop;
    std::vector<StmtModel>* saved = OpenBlock(&s.body);
    Define(m_.loops[loop].var);
    for (int ia : std::vector<int>(m_.loops[loop].iter_args)) Define(ia);
    loop_stack_.push_back(loop);
    fill();
    loop_stack_.pop_back();
    CloseBlock(saved);
    Push(std::move(s));
  }

  int GenFor(int remaining, int depth) {
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
      m_.loops[loop].kind = c_.Bool() ? LoopKind::kUnroll : LoopKind::kParallel;
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
  void AddIterArgs(int loop) {
    const int n = static_cast<int>(c_.Int(1, 2));
    for (int i = 0; i < n; ++i) {
      ValueList scalars = UsableWhere([](const ValueModel& v) {
        return v.kind == ValueKind::kScalar || v.kind == ValueKind::kLoopVar;
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
        init = SExpr::Sub(c_.Pick(views), {SExpr::Const(c_.Int(0, 7))});
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

  // `res0, res1 = pl.yield_(y0, y1)` (or a bare pl.yield_): the last statement of
  // an init_values loop's body. A scalar may yield `acc + x[0]`, a view subscript.
  void EmitYield(int loop) {
    LoopModel& l = m_.loops[loop];
    StmtModel s = NewStmt(StmtKind::kYield);
    s.ref = loop;
    ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
    for (int ia : l.iter_args) {
      const ValueModel iv = m_.values[ia];
      if (iv.kind == ValueKind::kTensor) {
        ValueList same = UsableWhere([&](const ValueModel& v) {
          return v.kind == ValueKind::kTensor && SigEqual(v.sig, iv.sig);
        });
        m_.loops[loop].yields.push_back(SExpr::VarRef(c_.Pick(same)));
        continue;
      }
      const int form = static_cast<int>(c_.Int(0, 2));
      if (form == 0) {
        m_.loops[loop].yields.push_back(SExpr::VarRef(ia));
      } else if (form == 2 && On(Feature::kSubscript) && !views.empty()) {
        m_.loops[loop].yields.push_back(
            SExpr::Bin(ir::BinaryOp::kAdd, SExpr::VarRef(ia),
                       SExpr::Sub(c_.Pick(views), {SExpr::Const(c_.Int(0, 7))})));
      } else {
        m_.loops[loop].yields.push_back(
            SExpr::Bin(ir::BinaryOp::kAdd, SExpr::VarRef(ia), SExpr::Const(c_.Int(1, 3))));
      }
    }
    if (c_.Chance(3, 4)) {
      for (int ia : std::vector<int>(m_.loops[loop].iter_args)) {
        const int r = NewValue(Fresh("res"), m_.values[ia].kind);
        m_.values[r].scalar_dtype = m_.values[ia].scalar_dtype;
        m_.values[r].sig = m_.values[ia].sig;
        m_.loops[loop].results.push_back(r);
      }
    }
    cur_->push_back(std::move(s));
  }

  // A subscript of `view`: `v[i]`, `v[a:b]`, `v[r:8:2]`, `v[:, 0:4]`, `v[::2]`.
  SExpr ViewSubscript(int view) {
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
        return SExpr::Sub(view,
                          {SExpr::SliceOf(std::move(start), SExpr::Const(8), SExpr::Const(2))});
      }
      case 3:
        return SExpr::Sub(
            view, {SExpr::SliceOf(SExpr::None(), SExpr::None(), SExpr::None()),
                   SExpr::SliceOf(SExpr::Const(0), SExpr::Const(c_.Int(1, 8)), SExpr::None())});
      default:
        return SExpr::Sub(view, {SExpr::SliceOf(SExpr::None(), SExpr::None(), SExpr::Const(2))});
    }
  }

  int PickView() {
    return c_.Pick(UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; }));
  }

  // `e = x[..]`, `e = x[..] + 1`, `e = -(x[..])`, `e = k * x[..]`: unknown-typed values.
  void GenSubscriptRead() {
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
  void GenSubscriptAssign() {
    ValueList tensors =
        UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTensor; });
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
  void GenUnpack() {
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

  // An empty range adds an empty subset; its body only dispatches on its own
  // variable so nothing else in it could claim coverage.
  int FillEmptyLoop(int loop) {
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
  int GenScope(int remaining, int depth) {
    StmtModel s = NewStmt(StmtKind::kScope);
    const bool has_view =
        !UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; }).empty();
    if (On(Feature::kSubscript) && has_view && (!On(Feature::kWholeProgram) || c_.Bool())) {
      // `with pl.at(name_hint="sN", tag=x[..]):` a kwarg expression holding a view.
      s.flag = true;
      s.expr = ViewSubscript(PickView());
    }
    const int sub = static_cast<int>(c_.Int(1, std::max(1, std::min(remaining - 1, 6))));
    std::vector<StmtModel>* saved = OpenBlock(&s.body);
    if (On(Feature::kAllReduceImplicit) && !InLoop() && !host_allocs_.empty() && c_.Chance(1, 3)) {
      // A synthesized signal inside a generic scope (the synthesis pass rewrites its body).
      const int data = AllReduceDataArg();
      const int coll = NewCollective(CollKind::kAllReduce, {data});
      EmitCollectiveStmt(coll, data);
    }
    GenBlock(sub, depth + 1);
    CloseBlock(saved);
    Push(std::move(s));
    return 1 + sub;
  }

  int GenWhileOrIf(bool is_while, int remaining, int depth) {
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

  int NewCollective(CollKind kind, std::vector<int> args) {
    CollectiveModel c;
    c.function = host_;
    c.kind = kind;
    c.args = std::move(args);
    c.in_loop = InLoop();
    m_.collectives.push_back(std::move(c));
    return static_cast<int>(m_.collectives.size()) - 1;
  }

  // Whether the in-place result of `data` may rebind data's name (same block only,
  // so the parser's function-level name lookup agrees with the model).
  bool CanRebind(int v) const {
    const auto& top = scopes_.back();
    return std::find(top.begin(), top.end(), v) != top.end();
  }

  void EmitCollectiveStmt(int coll, int in_place_src) {
    StmtModel s = NewStmt(StmtKind::kCollective);
    s.ref = coll;
    CollectiveModel& c = m_.collectives[coll];
    c.stmt = s.id;
    if (in_place_src >= 0) {
      // allreduce / allgather / all_to_all(_v) return a view of data / target.
      if (On(Feature::kRebind) && CanRebind(in_place_src) && c_.Chance(1, 3)) {
        s.def = NewValue(m_.values[in_place_src].name, ValueKind::kView);
      } else if (On(Feature::kCollectiveResult) && c_.Chance(1, 2)) {
        s.def = NewValue(Fresh("y"), ValueKind::kView);
      }
      if (s.def >= 0) {
        m_.values[s.def].alloc = m_.values[in_place_src].alloc;
        m_.values[s.def].sig = m_.values[in_place_src].sig;
      }
    } else if ((c.kind == CollKind::kBroadcast || c.kind == CollKind::kReduceScatter) &&
               On(Feature::kCollectiveResult) && c_.Chance(1, 3)) {
      // Not an in-place collective: its result is typed like a view but is none.
      s.def = NewValue(Fresh("y"), ValueKind::kOpaque);
      m_.values[s.def].sig = m_.values[c.args[0]].sig;
    }
    m_.collectives[coll].result = s.def;
    Push(std::move(s));
  }

  void GenCollective() {
    absl::InlinedVector<CollKind, 8> kinds;
    absl::InlinedVector<bool, 8> implicit;
    auto add = [&](Feature f, CollKind k, bool imp, bool loop_ok) {
      if (On(f) && (loop_ok || !InLoop())) {
        kinds.push_back(k);
        implicit.push_back(imp);
      }
    };
    add(Feature::kAllReduce, CollKind::kAllReduce, false, true);
    add(Feature::kAllReduceImplicit, CollKind::kAllReduce, true, false);
    add(Feature::kBroadcast, CollKind::kBroadcast, false, true);
    add(Feature::kReduceScatter, CollKind::kReduceScatter, false, true);
    add(Feature::kBarrier, CollKind::kBarrier, false, true);
    add(Feature::kAllGather, CollKind::kAllGather, false, true);
    add(Feature::kAllToAll, CollKind::kAllToAll, false, true);
    add(Feature::kAllToAllV, CollKind::kAllToAllV, false, false);
    if (kinds.empty()) {
      EmitView(PickAlloc(false));
      return;
    }
    const size_t pick = c_.Index(kinds.size());
    const CollKind kind = kinds[pick];
    std::vector<int> args;
    args.reserve(5);  // all_to_all_v's five
    int in_place = -1;
    switch (kind) {
      case CollKind::kAllReduce: {
        const int data = AllReduceDataArg();
        args.push_back(data);
        if (!implicit[pick]) args.push_back(SignalArg());
        in_place = data;
        break;
      }
      case CollKind::kBroadcast:
      case CollKind::kReduceScatter:
        args.push_back(DataArg(kind == CollKind::kReduceScatter));
        args.push_back(SignalArg());
        break;
      case CollKind::kBarrier:
        args.push_back(SignalArg());
        break;
      case CollKind::kAllGather:
      case CollKind::kAllToAll:
      case CollKind::kAllToAllV: {
        const int input = DataArg(false);
        args.push_back(input);
        const int target = DataArg(false, {m_.values[input].sig.dtype});
        args.push_back(target);
        args.push_back(SignalArg());
        if (kind == CollKind::kAllToAllV) {
          args.push_back(SignalArg());  // send_counts: INT32 counts
          // recv_counts: sometimes a fresh alloc that no dispatch reaches (allocs
          // live only at the top level), so its coverage is only what it inherits
          // from the target. Otherwise a lost hand-over hides behind its own.
          if (cur_ == &m_.functions[host_].body && c_.Chance(1, 2)) {
            args.push_back(EmitView(EmitAlloc(SizeForm::kLiteral), SignalSig()));
          } else {
            args.push_back(SignalArg());
          }
        }
        in_place = target;
        break;
      }
    }
    const int coll = NewCollective(kind, std::move(args));
    CollectiveModel& c = m_.collectives[coll];
    if (kind == CollKind::kAllReduce && implicit[pick] && c_.Chance(1, 3))
      c.core_num = c_.Int(1, 4);
    if (kind == CollKind::kBroadcast) c.root = c_.Int(0, 3);
    EmitCollectiveStmt(coll, in_place);
  }

  void GenNoiseTensor() {
    ValueList tensors =
        UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTensor; });
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
  SExpr TupleExpr(int depth) {
    const int n = static_cast<int>(c_.Int(0, 3));
    std::vector<SExpr> elements;
    for (int i = 0; i < n; ++i) {
      ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
      ValueList scalars = UsableWhere([](const ValueModel& v) {
        return v.kind == ValueKind::kScalar || v.kind == ValueKind::kLoopVar ||
               v.kind == ValueKind::kTensor;
      });
      ValueList tuples =
          UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTuple; });
      const std::array<int, 5> w = {views.empty() ? 0 : 3, scalars.empty() ? 0 : 2,
                                    tuples.empty() ? 0 : 1, 2, depth < 2 ? 1 : 0};
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
  bool MentionsBodyVariable(const SExpr& e) const {
    if (e.kind == SExpr::Kind::kTuple) {
      return std::any_of(e.operands.begin(), e.operands.end(),
                         [this](const SExpr& x) { return MentionsBodyVariable(x); });
    }
    if (e.kind != SExpr::Kind::kVar) return false;
    const ValueModel& v = m_.values[e.var];
    if (v.kind == ValueKind::kTuple) return shaped_by_body_.contains(e.var);
    return std::any_of(v.sig.dims.begin(), v.sig.dims.end(),
                       [](const Dim& d) { return d.var >= 0; });
  }

  // `t = (x, 1)`, or a tuple as a call argument: `pl.touch(v, (x, t))`.
  void GenTuple() {
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

  void GenNoiseScalar() {
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

  void GenNameCollision() {
    collision_done_ = true;
    static const char* kNames[] = {"__allreduce_signal_", "__allreduce_signal_buf_",
                                   "__allreduce_signal_world_size_", "__allreduce_result_"};
    StmtModel s = NewStmt(StmtKind::kScalar);
    s.def = NewValue(fmt::format("{}{}", kNames[c_.Int(0, 3)], c_.Int(0, 2)), ValueKind::kScalar);
    s.expr = SExpr::Const(c_.Int(0, 3));
    Push(std::move(s));
  }

  void GenAlias() {
    ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
    const int src = c_.Pick(views);
    StmtModel s = NewStmt(StmtKind::kAlias);
    s.src = src;
    s.def = NewValue(Fresh("w"), ValueKind::kView);
    m_.values[s.def].alloc = m_.values[src].alloc;
    m_.values[s.def].sig = m_.values[src].sig;
    Push(std::move(s));
  }

  ValueList RebindCandidates() const {
    ValueList out;
    for (int v : scopes_.back()) {
      if (Usable(v) && m_.values[v].kind == ValueKind::kView) out.push_back(v);
    }
    return out;
  }

  // One statement (or a compound one); returns the budget it used (>= 1).
  int Step(int remaining, int depth) {
    enum Action {
      kAlloc,
      kDispatch,
      kView,
      kAlias,
      kRebind,
      kFor,
      kWhile,
      kIf,
      kCollective,
      kTensor,
      kScalar,
      kCollision,
      kScope,
      kOpaque,
      kUnpackAction,
      kSubRead,
      kSubAssign,
      kTupleAction,
      kFallback,
      kNumActions
    };
    std::array<int, kNumActions> w{};
    const bool has_alloc = !host_allocs_.empty();
    const bool has_view =
        !UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; }).empty();
    const bool any_loop = On(Feature::kLoopRange) || On(Feature::kLoopWorldSize) ||
                          On(Feature::kLoopStartStop) || On(Feature::kLoopBoundTemp) ||
                          On(Feature::kLoopEmpty);
    const bool any_coll = On(Feature::kAllReduce) || On(Feature::kAllReduceImplicit) ||
                          On(Feature::kBroadcast) || On(Feature::kReduceScatter) ||
                          On(Feature::kBarrier) || On(Feature::kAllGather) ||
                          On(Feature::kAllToAll) || On(Feature::kAllToAllV);
    if (depth == 0 && static_cast<int>(host_allocs_.size()) < alloc_cap_)
      w[kAlloc] = has_alloc ? 6 : 40;
    if (has_alloc) {
      w[kDispatch] = loop_stack_.empty() && !On(Feature::kDeviceOutsideLoop) ? 0 : 14;
      w[kView] = 6;
      if (any_coll) w[kCollective] = 10;
    }
    if (has_view && On(Feature::kAlias)) w[kAlias] = 4;
    if (On(Feature::kRebind) && has_alloc && !RebindCandidates().empty()) w[kRebind] = 4;
    if (remaining >= 2 && depth < 3) {
      if (any_loop && has_alloc && (loop_stack_.empty() || On(Feature::kNestedLoop)))
        w[kFor] = loop_stack_.empty() ? 10 : 6;
      if (On(Feature::kWhileLoop)) w[kWhile] = 3;
      if (On(Feature::kIfElse)) w[kIf] = 4;
    }
    if (On(Feature::kNoiseTensor)) w[kTensor] = 3;
    if (On(Feature::kNoiseScalar)) w[kScalar] = 3;
    if (On(Feature::kNameCollision) && !collision_done_) w[kCollision] = 3;
    if (On(Feature::kWholeProgram)) {
      if (remaining >= 2 && depth < 3) w[kScope] = 4;
      if (has_view) w[kOpaque] = 3;
    }
    if (On(Feature::kSubscript) && has_view) {
      if (remaining >= 2 && depth < 3) w[kScope] = 4;
      w[kSubRead] = 3;
      w[kSubAssign] = 3;
    }
    if (On(Feature::kUnpack) && has_view) w[kUnpackAction] = 3;
    if (On(Feature::kTupleValue)) w[kTupleAction] = 4;
    w[kFallback] = 1;
    switch (static_cast<Action>(c_.Weighted(w))) {
      case kAlloc: {
        const int a = EmitAlloc();
        if (c_.Chance(3, 4)) {
          const int n =
              On(Feature::kMultiView) && c_.Chance(1, 2) ? static_cast<int>(c_.Int(2, 3)) : 1;
          for (int i = 0; i < n; ++i) EmitView(a);
        }
        return 1;
      }
      case kDispatch:
        GenDispatch();
        return 1;
      case kView:
        EmitView(PickAlloc(c_.Chance(1, 3)));
        return 1;
      case kAlias:
        GenAlias();
        return 1;
      case kRebind: {
        const int old = c_.Pick(RebindCandidates());
        EmitView(PickAlloc(m_.values[old].sig.dtype == DataType::kInt32), std::nullopt, old);
        return 1;
      }
      case kFor: {
        const int used = GenFor(remaining, depth);
        return std::max(used, 1);
      }
      case kWhile:
        return GenWhileOrIf(true, remaining, depth);
      case kIf:
        return GenWhileOrIf(false, remaining, depth);
      case kCollective:
        GenCollective();
        return 1;
      case kTensor:
        GenNoiseTensor();
        return 1;
      case kScalar:
        GenNoiseScalar();
        return 1;
      case kCollision:
        GenNameCollision();
        return 1;
      case kScope:
        return GenScope(remaining, depth);
      case kOpaque: {
        // Views handed to an opaque call: the pass must not count them as consumed.
        ValueList views =
            UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
        StmtModel s = NewStmt(StmtKind::kOpaque);
        s.src = c_.Pick(views);
        if (c_.Bool()) s.src2 = c_.Pick(views);
        if (On(Feature::kSubscript) && c_.Chance(1, 3)) {
          s.flag = true;  // pl.touch(v, tag=x[..]): a call kwarg holding a view
          s.expr = ViewSubscript(PickView());
        }
        Push(std::move(s));
        return 1;
      }
      case kUnpackAction:
        GenUnpack();
        return 1;
      case kSubRead:
        GenSubscriptRead();
        return 1;
      case kSubAssign:
        GenSubscriptAssign();
        return 1;
      case kTupleAction:
        GenTuple();
        return 1;
      default: {
        StmtModel s = NewStmt(StmtKind::kScalar);
        s.def = NewValue(Fresh("k"), ValueKind::kScalar);
        s.expr = SExpr::Const(c_.Int(0, 9));
        Push(std::move(s));
        return 1;
      }
    }
  }

  void GenBlock(int budget, int depth) {
    while (budget > 0) budget -= Step(budget, depth);
  }

  // Gives every alloc of the current host a view and the coverage a valid
  // program needs, by appending top-level views and constant-device dispatches.
  void Finalize() {
    std::vector<int> windows(m_.allocs.size(), 0);
    ForEachStmt(m_.functions[host_].body, [&](const StmtModel& s) {
      if (s.kind == StmtKind::kView) windows[s.ref]++;
    });
    // Neither loop below adds an alloc: host_allocs_ keeps its size.
    for (int a : host_allocs_) {
      if (windows[a] == 0) EmitView(a);
    }
    // Data/target allocs of collectives and barrier signals need coverage of their own.
    std::vector<Coverage> cov = DispatchCoverage(m_);
    std::vector<int> needs;  // in increasing order, each once
    for (const CollectiveModel& c : m_.collectives) {
      if (c.function != host_) continue;
      for (const auto& [from, to] : InheritancePairs(m_, c)) needs.push_back(from);
      if (c.ImplicitSignal()) needs.push_back(ViewAlloc(m_, c.args[0]));
      if (c.kind == CollKind::kBarrier) needs.push_back(ViewAlloc(m_, c.args[0]));
    }
    std::sort(needs.begin(), needs.end());
    needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
    for (int a : needs) {
      if (a >= 0 && cov[a].Empty()) PatchDispatch(a);
    }
    cov = DispatchCoverage(m_);
    std::vector<Coverage> merged = cov;
    for (const CollectiveModel& c : m_.collectives) {
      if (c.function != host_) continue;
      for (const auto& [from, to] : InheritancePairs(m_, c)) merged[to].Absorb(cov[from]);
    }
    for (int a : host_allocs_) {
      if (merged[a].Empty()) PatchDispatch(a);
    }
  }

  void PatchDispatch(int alloc) {
    const int callee = c_.Pick(ChipTargets());
    std::vector<int> args = DispatchArgs(callee, alloc, false);
    EmitDispatch(callee, std::move(args), DeviceForm::kConst, c_.Int(0, 7), -1, -1, false);
  }

  void GenHost(int h, int budget, bool first) {
    EnterHost(h);
    // Top-level statements: the budget, an alloc and its view, patches and the return.
    m_.functions[h].body.reserve(static_cast<size_t>(budget) + 4);
    alloc_cap_ = 1 + budget / 4;
    if (first || c_.Chance(3, 4)) {
      const int a = EmitAlloc();
      EmitView(a);
      --budget;
    }
    GenBlock(budget, 0);
    // The return statement: `return 0`, or an allreduce that the synthesis pass lifts.
    StmtModel ret = NewStmt(StmtKind::kReturn);
    if (On(Feature::kAllReduceReturn) && !host_allocs_.empty() && c_.Chance(1, 2)) {
      const int data = AllReduceDataArg();
      std::vector<int> args{data};
      if (!(On(Feature::kAllReduceImplicit) && c_.Bool())) args.push_back(SignalArg());
      const int coll = NewCollective(CollKind::kAllReduce, std::move(args));
      m_.collectives[coll].in_return = true;
      m_.collectives[coll].stmt = ret.id;
      ret.ref = coll;
    }
    if (ret.ref < 0 && On(Feature::kTupleValue)) {
      ValueList tuples =
          UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTuple; });
      tuples.erase(std::remove_if(tuples.begin(), tuples.end(),
                                  [this](int t) { return shaped_by_body_.contains(t); }),
                   tuples.end());
      if (!tuples.empty() && c_.Chance(2, 3)) ret.src = c_.Pick(tuples);
    }
    Finalize();
    Push(std::move(ret));
  }

  void DrawFeatures() {
    for (size_t i = 0; i < kNumFeatures; ++i) {
      if (!opt_.features.test(i)) continue;
      const Feature f = static_cast<Feature>(i);
      // The host spelling is drawn per host; a draw here would shift every program's stream.
      if (f == Feature::kHostByType) {
        m_.enabled.set(i);
        continue;
      }
      // Features with several sub-forms or that gate others are drawn more often.
      const int num = f == Feature::kDeviceConst || f == Feature::kDeviceOutsideLoop ? 3 : 2;
      if (!opt_.swarm || c_.Chance(num, 4)) m_.enabled.set(i);
    }
  }

  TensorSig RandomPaletteSig() {
    static const std::vector<DataType> kTypes = {DataType::kFP32, DataType::kFP16, DataType::kBF16,
                                                 DataType::kInt32};
    const DataType dt = c_.Pick(kTypes);
    static constexpr int64_t kRows[] = {4, 8, 16};
    static constexpr int64_t kLengths[] = {256, 64, 128, 1024};
    if (c_.Chance(1, 3)) return Sig({kRows[c_.Int(0, 2)], 64}, dt);
    return Sig({kLengths[c_.Int(0, 3)]}, dt);
  }

  // An InCore kernel calling collectives as PyPTO's kernels do: a local pl.Tensor
  // input, a DistributedTensor window as the destination (rebound by every call
  // that returns it), an INT32 signal window and, for all_to_all_v, a local count
  // tensor and a recv_counts window. The pass must leave it alone.
  FunctionModel MakeCollectiveKernel(std::string name) {
    FunctionModel f;
    f.name = std::move(name);
    f.role = FuncRole::kInCore;
    f.decl = DeclForm::kInCoreType;
    f.params.reserve(5);
    f.body.reserve(5);  // up to four collectives and a closing barrier
    static constexpr int64_t kRows[] = {2, 4, 8};
    const int64_t rows = kRows[c_.Int(0, 2)];
    auto param = [&](const char* pname, std::initializer_list<int64_t> dims, DataType dt,
                     bool local) {
      ValueModel v;
      v.name = pname;
      v.kind = ValueKind::kParam;
      v.sig = Sig(dims, dt);
      v.local = local;
      v.inout = !local;
      m_.values.push_back(std::move(v));
      f.params.push_back(static_cast<int>(m_.values.size()) - 1);
      return f.params.back();
    };
    const int input = param("inp", {rows, 64}, DataType::kFP32, true);
    int data = param("data", {rows, 64}, DataType::kFP32, false);
    const int signal = param("signal", {rows, 1}, DataType::kInt32, false);
    int counts = -1, recv_counts = -1;
    if (c_.Bool()) {
      counts = param("counts", {rows, 1}, DataType::kInt32, true);
      recv_counts = param("recv_counts", {rows, 1}, DataType::kInt32, false);
    }
    static constexpr CollKind kinds[] = {
        CollKind::kAllToAll,      CollKind::kAllToAllV, CollKind::kAllGather, CollKind::kAllReduce,
        CollKind::kReduceScatter, CollKind::kBroadcast, CollKind::kBarrier};
    const std::array<int, 7> weights = {3, counts >= 0 ? 3 : 0, 2, 1, 1, 1, 1};
    auto call = [&](CollKind kind, std::vector<int> args, int rebinds) {
      CollectiveModel c;
      c.kind = kind;
      c.args = std::move(args);
      StmtModel st = NewStmt(StmtKind::kCollective);
      c.stmt = st.id;
      st.ref = static_cast<int>(m_.collectives.size());
      if (rebinds >= 0) {
        st.def = NewValue(m_.values[rebinds].name, ValueKind::kOpaque);
        m_.values[st.def].sig = m_.values[rebinds].sig;
        c.result = st.def;
      }
      m_.collectives.push_back(std::move(c));
      f.body.push_back(std::move(st));
      return f.body.back().def;
    };
    const int n = static_cast<int>(c_.Int(1, 4));
    for (int i = 0; i < n; ++i) {
      const CollKind kind = kinds[c_.Weighted(weights)];
      switch (kind) {
        case CollKind::kAllToAll:
        case CollKind::kAllGather:
          data = call(kind, {input, data, signal}, data);
          break;
        case CollKind::kAllToAllV:
          data = call(kind, {input, data, signal, counts, recv_counts}, data);
          break;
        case CollKind::kAllReduce:
        case CollKind::kReduceScatter:
        case CollKind::kBroadcast: {
          data = call(kind, {data, signal}, data);
          if (kind == CollKind::kBroadcast) m_.collectives.back().root = c_.Int(0, 3);
          break;
        }
        case CollKind::kBarrier:
          call(kind, {signal}, -1);
          break;
      }
    }
    // `signal = pld.tensor.barrier(signal)` closing the kernel, as PyPTO writes it.
    if (c_.Chance(1, 3)) call(CollKind::kBarrier, {signal}, signal);
    return f;
  }

  // Collectives in a chip orchestrator's own body, on its parameters and an INT32
  // signal parameter added for them: a signal-less allreduce, an allreduce with
  // its signal, a broadcast, a barrier. Both passes work on host orchestrators
  // only, so this body must come back as it is.
  void AddChipCollectives(FunctionModel& f) {
    ValueModel signal_param;
    signal_param.name = "sig";
    signal_param.kind = ValueKind::kParam;
    signal_param.sig = Sig({4, 1}, DataType::kInt32);
    m_.values.push_back(std::move(signal_param));
    const int signal = static_cast<int>(m_.values.size()) - 1;
    const std::vector<int> data_params = f.params;
    f.params.push_back(signal);
    const int n = static_cast<int>(c_.Int(1, 3));
    for (int i = 0; i < n; ++i) {
      const int data = c_.Pick(data_params);
      // An allreduce reduces FP16 or FP32 data only (the op's type rule); other data
      // gets a broadcast instead.
      const ir::DataType dtype = m_.values[data].sig.dtype;
      const bool reducible = dtype == ir::DataType::kFP16 || dtype == ir::DataType::kFP32;
      CollectiveModel c;
      int form = static_cast<int>(c_.Int(0, 3));
      if (!reducible && form < 2) form = 2;
      switch (form) {
        case 0:
          c.kind = CollKind::kAllReduce;
          c.args = {data};
          break;
        case 1:
          c.kind = CollKind::kAllReduce;
          c.args = {data, signal};
          break;
        case 2:
          c.kind = CollKind::kBroadcast;
          c.args = {data, signal};
          c.root = c_.Int(0, 3);
          break;
        default:
          c.kind = CollKind::kBarrier;
          c.args = {signal};
          break;
      }
      StmtModel st = NewStmt(StmtKind::kCollective);
      c.stmt = st.id;
      st.ref = static_cast<int>(m_.collectives.size());
      if (c.kind != CollKind::kBarrier && c_.Bool()) {
        st.def = NewValue(Fresh("r"), ValueKind::kOpaque);
        m_.values[st.def].sig = m_.values[data].sig;
        c.result = st.def;
      }
      m_.collectives.push_back(std::move(c));
      f.body.push_back(std::move(st));
    }
  }

  void MakeFunctions() {
    const int n_palette = static_cast<int>(c_.Int(2, 4));
    palette_.reserve(static_cast<size_t>(n_palette));
    for (int i = 0; i < n_palette; ++i) palette_.push_back(RandomPaletteSig());

    absl::InlinedVector<std::string_view, 5> host_names = {"host_orch", "host_main", "host_step",
                                                           "host_sync", "host_alpha"};
    absl::InlinedVector<std::string_view, 7> chip_names = {
        "chip_orch", "chip_reduce", "chip_gather", "chip_stage",
        "chip_mix",  "chip_relay",  "chip_compute"};
    const int n_hosts = On(Feature::kMultiHost) ? static_cast<int>(c_.Int(2, 4)) : 1;
    const int n_chip =
        c_.Chance(1, 4) ? static_cast<int>(c_.Int(4, 6)) : static_cast<int>(c_.Int(1, 3));
    auto take = [this](auto& pool) {
      const size_t i = c_.Index(pool.size());
      std::string n(pool[i]);
      pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(i));
      return n;
    };
    auto add_params = [this](FunctionModel& f) {
      const int n = static_cast<int>(c_.Int(1, 3));
      f.params.reserve(static_cast<size_t>(n) + 1);  // + a chip collective's signal
      static const char* kNames[] = {"a", "b", "c"};
      for (int i = 0; i < n; ++i) {
        ValueModel v;
        v.name = kNames[i];
        v.kind = ValueKind::kParam;
        v.sig = c_.Pick(palette_);
        m_.values.push_back(std::move(v));
        f.params.push_back(static_cast<int>(m_.values.size()) - 1);
      }
    };
    std::vector<FunctionModel> fns;
    fns.reserve(static_cast<size_t>(n_hosts + n_chip) + 5);  // + graph, InCore and kernel functions
    for (int i = 0; i < n_hosts; ++i) {
      FunctionModel f;
      f.name = take(host_names);
      f.role = FuncRole::kHostOrch;
      // Drawn even when host_by_type is off, so switching it off changes only the spelling.
      const bool by_type = c_.Chance(1, 4);
      f.decl =
          by_type && On(Feature::kHostByType) ? DeclForm::kHostTypeLevel : DeclForm::kHostLevelRole;
      fns.push_back(std::move(f));
    }
    for (int i = 0; i < n_chip; ++i) {
      FunctionModel f;
      f.name = take(chip_names);
      f.role = FuncRole::kChipOrch;
      const bool by_type = On(Feature::kChipByType), by_lr = On(Feature::kChipByLevelRole);
      f.decl = by_type && by_lr ? (c_.Bool() ? DeclForm::kChipLevelRole : DeclForm::kChipType)
               : by_lr          ? DeclForm::kChipLevelRole
                                : DeclForm::kChipType;
      add_params(f);
      if (On(Feature::kChipCollective) && c_.Bool()) AddChipCollectives(f);
      fns.push_back(std::move(f));
    }
    if (On(Feature::kGraphFunc)) {
      const int n = static_cast<int>(c_.Int(1, 2));
      for (int i = 0; i < n; ++i) {
        FunctionModel f;
        f.name = i == 0 ? "graph_fwd" : "graph_bwd";
        f.role = FuncRole::kGraph;
        f.decl = c_.Bool() ? DeclForm::kGraphLevelRole : DeclForm::kGraphType;
        add_params(f);
        fns.push_back(std::move(f));
      }
    }
    if (On(Feature::kInCoreFunc)) {
      FunctionModel f;
      f.name = "kernel_tile";
      f.role = FuncRole::kInCore;
      f.decl = DeclForm::kInCoreType;
      add_params(f);
      fns.push_back(std::move(f));
    }
    if (On(Feature::kKernelCollective)) {
      const int n = static_cast<int>(c_.Int(1, 2));
      for (int i = 0; i < n; ++i)
        fns.push_back(MakeCollectiveKernel(i == 0 ? "kernel_xchg" : "kernel_sync"));
    }
    // Class order is independent of name order (the order passes visit functions
    // in), and callees may follow their callers.
    for (size_t i = fns.size(); i > 1; --i) std::swap(fns[i - 1], fns[c_.Index(i)]);
    for (size_t i = 0; i < fns.size(); ++i) {
      const int fi = static_cast<int>(i);
      for (int p : fns[i].params) m_.values[p].function = fi;
      ForEachStmt(fns[i].body, [&](const StmtModel& st) {
        if (st.def >= 0) m_.values[st.def].function = fi;
        if (st.kind == StmtKind::kCollective) m_.collectives[st.ref].function = fi;
      });
    }
    m_.functions = std::move(fns);
    for (size_t i = 0; i < m_.functions.size(); ++i) {
      if (m_.functions[i].role == FuncRole::kChipOrch) chip_targets_.push_back(static_cast<int>(i));
    }
  }

  Choices& c_;
  const GenOptions& opt_;
  ProgramModel& m_;
  absl::flat_hash_map<std::string, int> counters_;
  std::vector<TensorSig> palette_;
  int host_ = -1;
  std::vector<std::vector<int>> scopes_;
  absl::flat_hash_map<std::string, int> latest_;
  std::vector<char> live_;
  std::vector<int> windows_;  // alloc -> pld.window statements so far
  std::vector<int> host_allocs_;
  std::vector<int> chip_targets_;
  absl::flat_hash_set<int> shaped_by_body_;  // tuple values whose type names a body variable
  std::vector<int> loop_stack_;
  bool in_while_ = false;
  bool collision_done_ = false;
  int alloc_cap_ = 1;
  std::vector<StmtModel>* cur_ = nullptr;
};

// ---------------------------------------------------------------------------
// Invalid programs

class Planter {
 public:
  Planter(Generator& g, ProgramModel& m, Choices& c) : g_(g), m_(m), c_(c) {}

  InvalidSpec Plant(InvalidKind kind) {
    InvalidSpec spec;
    spec.kind = kind;
    const std::vector<int> hosts = m_.HostFunctions();
    // The first generated host always has an alloc with dispatch coverage.
    int host = -1;
    std::vector<Coverage> cov = DispatchCoverage(m_);
    std::vector<int> candidates;
    for (int h : hosts) {
      for (size_t a = 0; a < m_.allocs.size(); ++a) {
        if (m_.allocs[a].function == h && !cov[a].Empty()) {
          candidates.push_back(h);
          break;
        }
      }
    }
    CDS_CHECK(!candidates.empty(), "no host with a covered alloc");
    host = c_.Pick(candidates);
    std::vector<int> covered;
    for (size_t a = 0; a < m_.allocs.size(); ++a) {
      if (m_.allocs[a].function == host && !cov[a].Empty()) covered.push_back(static_cast<int>(a));
    }
    spec.function = m_.functions[host].name;
    auto& body = m_.functions[host].body;
    // Plant before the return: take it off, emit at the top level, put it back.
    StmtModel ret = std::move(body.back());
    body.pop_back();
    g_.EnterHost(host);
    const int x = c_.Pick(covered);  // a covered alloc whose fresh views are safe args
    const auto& targets = g_.ChipTargets();
    const int callee = c_.Pick(targets);

    auto last_id = [&] { return g_.m_.num_stmts - 1; };
    switch (kind) {
      case InvalidKind::kDeadAlloc: {
        // A size that needs no temp, so the alloc can move anywhere.
        const int a = g_.EmitAlloc(c_.Bool() ? SizeForm::kLiteral : SizeForm::kBytes);
        spec.stmt = m_.allocs[a].stmt;
        spec.message_any_of = {m_.allocs[a].name};
        MoveToRandomPosition(body, spec.stmt);
        break;
      }
      case InvalidKind::kUnconsumedAlloc: {
        const int a = g_.EmitAlloc();
        g_.EmitView(a);
        spec.stmt = m_.allocs[a].stmt;
        spec.message_any_of = {m_.allocs[a].name};
        break;
      }
      case InvalidKind::kEmptyCoverage: {
        const int a = g_.EmitAlloc();
        spec.stmt = m_.allocs[a].stmt;
        spec.message_any_of = {m_.allocs[a].name};
        std::vector<int> args = g_.DispatchArgs(callee, a, false);
        const bool zero = c_.Bool();
        const int start = zero ? 0 : static_cast<int>(c_.Int(1, 4));
        const int loop =
            g_.NewLoop(zero ? LoopForm::kStop : LoopForm::kStartStop, start, start, 1, -1);
        g_.EmitFor(loop, [&] {
          g_.EmitDispatch(callee, args, DeviceForm::kLoopVar, 0, m_.loops[loop].var, loop, false);
        });
        break;
      }
      case InvalidKind::kDeviceStep:
      case InvalidKind::kDeviceExpr:
      case InvalidKind::kDeviceWorldSizeStart: {
        std::vector<int> args = g_.DispatchArgs(callee, x, false);
        int loop;
        if (kind == InvalidKind::kDeviceStep) {
          const int64_t start = c_.Int(0, 2);
          loop = g_.NewLoop(LoopForm::kStep, start, start + c_.Int(2, 8), c_.Int(2, 3), -1);
        } else if (kind == InvalidKind::kDeviceWorldSizeStart) {
          loop = g_.NewLoop(LoopForm::kWorldSizeStart, c_.Int(1, 2), 0, 1, -1);
        } else {
          loop = g_.NewLoop(c_.Bool() ? LoopForm::kWorldSize : LoopForm::kStop, 0, c_.Int(1, 4), 1,
                            -1);
        }
        g_.EmitFor(loop, [&] {
          if (kind == InvalidKind::kDeviceExpr) {
            g_.EmitDispatch(callee, args, DeviceForm::kExpr, c_.Int(1, 2), m_.loops[loop].var, loop,
                            false);
          } else {
            g_.EmitDispatch(callee, args, DeviceForm::kLoopVar, 0, m_.loops[loop].var, loop, false);
          }
          spec.stmt = last_id();
        });
        spec.message_any_of = {"device"};
        break;
      }
      case InvalidKind::kDeviceNotLoopVar: {
        std::vector<int> args = g_.DispatchArgs(callee, x, false);
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
        g_.EmitDispatch(callee, args, DeviceForm::kNotLoopVar, 0, d, -1, false);
        spec.stmt = last_id();
        spec.message_any_of = {"device"};
        break;
      }
      case InvalidKind::kDeviceNegative: {
        std::vector<int> args = g_.DispatchArgs(callee, x, false);
        g_.EmitDispatch(callee, args, DeviceForm::kNegative, -c_.Int(1, 2), -1, -1, false);
        spec.stmt = last_id();
        spec.message_any_of = {"device"};
        break;
      }
      case InvalidKind::kDuplicateName: {
        // Same LHS and same name=: whether the pass compares the logical name or
        // the base Var's name_hint, the two slots collide in one scope.
        const std::string name = g_.Fresh("dup");
        const int64_t dev = c_.Int(0, 7);
        int second = -1;
        for (int i = 0; i < 2; ++i) {
          const int a = g_.EmitAlloc(SizeForm::kLiteral, true, name, name);
          if (i == 1) second = a;
          std::vector<int> args = g_.DispatchArgs(callee, a, false);
          g_.EmitDispatch(callee, args, DeviceForm::kConst, dev, -1, -1, false);
        }
        spec.stmt = m_.allocs[second].stmt;
        spec.message_any_of = {name};
        break;
      }
      case InvalidKind::kAllToAllVInFor:
      case InvalidKind::kAllToAllVInWhile: {
        std::vector<int> args = A2avArgs(x);
        auto emit = [&] {
          const int coll = g_.NewCollective(CollKind::kAllToAllV, args);
          g_.EmitCollectiveStmt(coll, -1);
          spec.stmt = last_id();
        };
        if (kind == InvalidKind::kAllToAllVInFor) {
          g_.EmitFor(g_.NewLoop(LoopForm::kStop, 0, c_.Int(1, 4), 1, -1), emit);
        } else {
          EmitWhile(emit);
        }
        spec.message_any_of = {"all_to_all_v"};
        break;
      }
      case InvalidKind::kImplicitAllReduceInLoop: {
        const int data = g_.EmitView(x, Sig({256}, DataType::kFP32));
        auto emit = [&] {
          const int coll = g_.NewCollective(CollKind::kAllReduce, {data});
          g_.EmitCollectiveStmt(coll, -1);
          spec.stmt = last_id();
        };
        if (c_.Bool()) {
          g_.EmitFor(g_.NewLoop(LoopForm::kWorldSize, 0, 0, 1, -1), emit);
        } else {
          EmitWhile(emit);
        }
        spec.text_stage = spec.ir_stage = Stage::kSynthesize;
        spec.message_any_of = {"allreduce"};
        break;
      }
      case InvalidKind::kNestedAllReduce: {
        if (g_.On(Feature::kTupleValue) && c_.Chance(1, 3)) {
          // `tupN = (pld.tensor.allreduce(data, signal, op=...),)`
          const int data = g_.EmitView(x, Sig({256}, DataType::kFP32));
          const int signal = g_.EmitView(x, Sig({8}, DataType::kInt32));
          const int coll = g_.NewCollective(CollKind::kAllReduce, {data, signal});
          m_.collectives[coll].nested = CollectiveModel::Nest::kTuple;
          StmtModel s = g_.NewStmt(StmtKind::kCollective);
          s.ref = coll;
          s.def = g_.NewValue(g_.Fresh("tup"), ValueKind::kTuple);
          m_.collectives[coll].stmt = s.id;
          g_.Push(std::move(s));
          spec.stmt = last_id();
          spec.text_stage = spec.ir_stage = Stage::kSynthesize;
          spec.message_any_of = {"cannot be nested inside another expression"};
          break;
        }
        // In a dispatch, the allreduce stands for the callee's first argument: only
        // when that takes data an allreduce accepts (FP16 or FP32).
        const std::vector<int>& callee_params = m_.functions[callee].params;
        const auto reducible = [&] {
          const DataType dt = m_.values[callee_params[0]].sig.dtype;
          return dt == DataType::kFP32 || dt == DataType::kFP16;
        };
        const bool in_dispatch = c_.Bool() && !callee_params.empty() && reducible();
        const TensorSig sig =
            in_dispatch ? m_.values[callee_params[0]].sig : Sig({256}, DataType::kFP32);
        const int data = g_.EmitView(x, sig);
        const int signal = g_.EmitView(x, Sig({8}, DataType::kInt32));
        const int coll = g_.NewCollective(CollKind::kAllReduce, {data, signal});
        CollectiveModel& cm = m_.collectives[coll];
        if (in_dispatch) {
          // self.f(pld.tensor.allreduce(data, signal), more..., device=N)
          std::vector<int> args = g_.DispatchArgs(callee, x, false);
          cm.nested = CollectiveModel::Nest::kDispatch;
          cm.nest_other =
              g_.EmitDispatch(callee, args, DeviceForm::kConst, c_.Int(0, 3), -1, -1, false);
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
        spec.stmt = last_id();
        spec.text_stage = spec.ir_stage = Stage::kSynthesize;
        spec.message_any_of = {"allreduce"};
        break;
      }
      case InvalidKind::kAllReduceArity: {
        const int data = g_.EmitView(x, Sig({256}, DataType::kFP32));
        const int s1 = g_.EmitView(x, Sig({8}, DataType::kInt32));
        const int s2 = g_.EmitView(x, Sig({8}, DataType::kInt32));
        const int coll = g_.NewCollective(CollKind::kAllReduce, {data, s1, s2});
        g_.EmitCollectiveStmt(coll, -1);
        spec.stmt = last_id();
        spec.text_stage = Stage::kParse;
        spec.ir_stage = Stage::kSynthesize;
        spec.message_any_of = {"allreduce"};
        break;
      }
      case InvalidKind::kCollectiveNotView: {
        std::vector<int> args = g_.DispatchArgs(callee, x, false);
        const int d = g_.EmitDispatch(callee, args, DeviceForm::kConst, c_.Int(0, 3), -1, -1, true);
        const int y = g_.cur_->back().def;
        (void)d;
        const int signal = g_.EmitView(x, Sig({8}, DataType::kInt32));
        // The data of an allreduce when y's element type is one it takes (FP16 or
        // FP32), of a broadcast (any element type) otherwise.
        const DataType dt = m_.values[y].sig.dtype;
        const bool reducible = dt == DataType::kFP32 || dt == DataType::kFP16;
        const int coll =
            g_.NewCollective(reducible ? CollKind::kAllReduce : CollKind::kBroadcast, {y, signal});
        g_.EmitCollectiveStmt(coll, -1);
        spec.stmt = last_id();
        spec.message_any_of = {reducible ? "allreduce" : "broadcast", m_.values[y].name};
        break;
      }
      case InvalidKind::kNoTransitiveCoverage: {
        // p's alloc only inherits (from x); using it as data passes nothing on.
        const int p_alloc = g_.EmitAlloc(SizeForm::kLiteral);
        const int p = g_.EmitView(p_alloc, Sig({8}, DataType::kInt32));
        const int data = g_.EmitView(x, Sig({256}, DataType::kFP32));
        g_.EmitCollectiveStmt(g_.NewCollective(CollKind::kAllReduce, {data, p}), -1);
        const int s_alloc = g_.EmitAlloc(SizeForm::kLiteral);
        std::vector<int> args = g_.DispatchArgs(callee, s_alloc, false);
        g_.EmitDispatch(callee, args, DeviceForm::kConst, c_.Int(0, 3), -1, -1, false);
        const int s2 = g_.EmitView(s_alloc, Sig({8}, DataType::kInt32));
        // p is INT32 (a signal above), so the second collective is a broadcast: its data
        // may be of any element type, an allreduce's may not.
        g_.EmitCollectiveStmt(g_.NewCollective(CollKind::kBroadcast, {p, s2}), -1);
        spec.stmt = last_id();
        spec.message_any_of = {"broadcast", m_.allocs[p_alloc].name};
        break;
      }
      case InvalidKind::kOnlyUnplacedDispatch: {
        // Every view of a fresh alloc goes only to dispatches without device=
        // (once, or in a loop): the runtime places them, so the alloc has no coverage.
        const int a = g_.EmitAlloc();
        spec.stmt = m_.allocs[a].stmt;
        spec.message_any_of = {m_.allocs[a].name};
        std::vector<int> args = g_.DispatchArgs(callee, a, false);
        auto emit = [&] { g_.EmitDispatch(callee, args, DeviceForm::kUnplaced, 0, -1, -1, false); };
        if (c_.Bool()) {
          emit();
        } else {
          g_.EmitFor(g_.NewLoop(LoopForm::kStop, 0, c_.Int(1, 4), 1, -1), emit);
        }
        break;
      }
      case InvalidKind::kDeviceLoopNonconstBounds:
      case InvalidKind::kDeviceRangeNegativeStart:
      case InvalidKind::kDeviceRangeTooLarge: {
        std::vector<int> args = g_.DispatchArgs(callee, x, false);
        int loop;
        if (kind == InvalidKind::kDeviceLoopNonconstBounds) {
          // `c = n + K` (or `c = K * n`): computed, so neither a constant nor world_size().
          const int n = g_.EmitWorldSizeTemp();
          StmtModel k = g_.NewStmt(StmtKind::kScalar);
          k.def = g_.NewValue(g_.Fresh("c"), ValueKind::kScalar);
          g_.m_.values[k.def].scalar_dtype = DataType::kIndex;
          k.expr =
              c_.Bool()
                  ? SExpr::Bin(ir::BinaryOp::kAdd, SExpr::VarRef(n), SExpr::Const(c_.Int(0, 3)))
                  : SExpr::Bin(ir::BinaryOp::kMul, SExpr::VarRef(n), SExpr::Const(c_.Int(1, 3)));
          const int bound = k.def;
          g_.Push(std::move(k));
          loop = g_.NewLoop(LoopForm::kVarBound, 0, 0, 1, bound);
          spec.message_any_of = {"neither integer constants"};
        } else if (kind == InvalidKind::kDeviceRangeNegativeStart) {
          const int64_t start = -c_.Int(1, 3);
          loop = g_.NewLoop(c_.Bool() ? LoopForm::kStartStop : LoopForm::kStartStopStep1, start,
                            start + c_.Int(1, 6), 1, -1);
          spec.message_any_of = {"negative device id"};
        } else {
          // One past the limit is the boundary; 100000 is the obvious hostile case.
          const int64_t stop = c_.Bool() ? kMaxModelDevices + 1 : 100000;
          loop = c_.Bool() ? g_.NewLoop(LoopForm::kStop, 0, stop, 1, -1)
                           : g_.NewLoop(LoopForm::kStartStop, 0, stop, 1, -1);
          spec.message_any_of = {"more than the 65536"};
        }
        g_.EmitFor(loop, [&] {
          g_.EmitDispatch(callee, args, DeviceForm::kLoopVar, 0, m_.loops[loop].var, loop, false);
          spec.stmt = last_id();
        });
        break;
      }
      case InvalidKind::kBarrierUncovered: {
        // The signal alloc has a view but no dispatch. The pass checks hand-overs
        // (barrier included) before alloc coverage, so the barrier call is reported,
        // not the unconsumed alloc.
        const int a = g_.EmitAlloc(SizeForm::kLiteral);
        const int signal = g_.EmitView(a, Sig({8}, DataType::kInt32));
        g_.EmitCollectiveStmt(g_.NewCollective(CollKind::kBarrier, {signal}), -1);
        spec.stmt = last_id();
        spec.message_any_of = {"no dispatch coverage of its own"};
        break;
      }
      case InvalidKind::kAllReduceCoreNum: {
        // A signal-less allreduce whose core_num= is 0 or negative: the synthesized
        // signal could not be sized.
        const int data = g_.EmitView(x, Sig({256}, DataType::kFP32));
        const int coll = g_.NewCollective(CollKind::kAllReduce, {data});
        m_.collectives[coll].core_num = c_.Bool() ? 0 : -c_.Int(1, 3);
        m_.collectives[coll].explicit_core_num = true;
        g_.EmitCollectiveStmt(coll, -1);
        spec.stmt = last_id();
        spec.text_stage = spec.ir_stage = Stage::kSynthesize;
        spec.message_any_of = {"core_num"};
        break;
      }
      case InvalidKind::kCarriedView: {
        // A fresh view of a covered alloc seeds a loop-carried tensor; the pass
        // reports the loop, whatever its body does with the carried value.
        const int view = g_.EmitView(x, Sig({256}, DataType::kFP32));
        const int loop = g_.NewLoop(LoopForm::kStop, 0, c_.Int(1, 4), 1, -1);
        const int ia = g_.NewValue(g_.Fresh("acc"), ValueKind::kTensor);
        m_.values[ia].sig = m_.values[view].sig;
        m_.loops[loop].iter_args.push_back(ia);
        m_.loops[loop].inits.push_back(SExpr::VarRef(view));
        spec.stmt = g_.m_.num_stmts;  // the id EmitFor's statement gets
        g_.EmitFor(loop, [&] { g_.EmitYield(loop); });
        for (int r : std::vector<int>(m_.loops[loop].results)) g_.Define(r);
        spec.message_any_of = {"cannot be carried by a loop"};
        break;
      }
      case InvalidKind::kCount:
        break;
    }
    body.push_back(std::move(ret));
    return spec;
  }

 private:
  std::vector<int> A2avArgs(int x) {
    const int input = g_.EmitView(x, Sig({256}, DataType::kFP32));
    const int target = g_.EmitView(x, Sig({256}, DataType::kFP32));
    const int signal = g_.EmitView(x, Sig({8}, DataType::kInt32));
    const int send = g_.EmitView(x, Sig({8}, DataType::kInt32));
    const int recv = g_.EmitView(x, Sig({8}, DataType::kInt32));
    return {input, target, signal, send, recv};
  }

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

  // A statement that references nothing may sit anywhere in the top level.
  void MoveToRandomPosition(std::vector<StmtModel>& body, int id) {
    auto it =
        std::find_if(body.begin(), body.end(), [id](const StmtModel& s) { return s.id == id; });
    CDS_CHECK(it != body.end(), "planted statement not at the top level");
    StmtModel s = std::move(*it);
    body.erase(it);
    const size_t pos = c_.Index(body.size() + 1);
    body.insert(body.begin() + static_cast<std::ptrdiff_t>(pos), std::move(s));
  }

  Generator& g_;
  ProgramModel& m_;
  Choices& c_;
};

}  // namespace

ProgramModel GenerateModel(Choices& choices, const GenOptions& options) {
  ProgramModel m;
  Generator g(choices, options, m);
  g.Run();
  return m;
}

InvalidModel GenerateInvalid(Choices& choices, InvalidKind kind, const GenOptions& options) {
  InvalidModel out;
  Generator g(choices, options, out.model);
  g.Run();
  Planter planter(g, out.model, choices);
  out.spec = planter.Plant(kind);
  out.text = AssignLines(out.model);
  out.spec.line = out.model.stmt_lines.at(static_cast<size_t>(out.spec.stmt));
  return out;
}

}  // namespace cds::fuzz
