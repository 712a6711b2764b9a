// Collectives: in host bodies (the pass's subject), in chip orchestrators and in
// InCore kernels (which both passes must leave alone).

#include <algorithm>

#include <fmt/format.h>

#include "fuzz/gen/generator.h"
#include "fuzz/gen/weights.h"

namespace cds::fuzz::detail {

int Generator::NewCollective(CollKind kind, std::vector<int> args) {
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
bool Generator::CanRebind(int v) const {
  const auto& top = scopes_.back();
  return std::find(top.begin(), top.end(), v) != top.end();
}

void Generator::EmitCollectiveStmt(int coll, int in_place_src) {
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

void Generator::GenCollective() {
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
    case CollKind::kAllToAllV:
      args = CopyCollectiveArgs(kind);
      in_place = args[1];
      break;
  }
  const int coll = NewCollective(kind, std::move(args));
  CollectiveModel& c = m_.collectives[coll];
  if (kind == CollKind::kAllReduce && implicit[pick] && c_.Chance(1, 3)) c.core_num = c_.Int(1, 4);
  if (kind == CollKind::kBroadcast) c.root = c_.Int(0, 3);
  EmitCollectiveStmt(coll, in_place);
}

// A view of exactly `sig`, other than `other`: an existing one or a new window.
int Generator::ViewOfSig(const TensorSig& sig, int other) {
  const ValueModel* excluded = other >= 0 ? &m_.values[other] : nullptr;
  return ViewArg([&](const ValueModel& v) { return &v != excluded && SigEqual(v.sig, sig); }, sig,
                 sig.dtype == DataType::kInt32);
}

// The operands of the collectives that copy an input into a target window, in the
// shapes PyPTO's deducers take: rows of SIZE elements, the input a separate buffer
// from the target. allgather sends one row ([1, SIZE]) into [NR, SIZE]; all_to_all
// exchanges [NR, SIZE] blocks; all_to_all_v takes a constant rank count NR (its
// [NR, 1] signal and counts) and NR * k rows. The first two take a signal of one
// slot per rank, [NR] or [NR, 1].
std::vector<int> Generator::CopyCollectiveArgs(CollKind kind) {
  static const std::vector<DataType> kData = {DataType::kFP32, DataType::kFP16, DataType::kBF16,
                                              DataType::kInt32};
  const DataType dt = c_.Chance(2, 3) ? DataType::kFP32 : c_.Pick(kData);
  const int64_t size = c_.Chance(1, 2) ? 64 : 256;
  std::vector<int> args;
  args.reserve(5);
  if (kind == CollKind::kAllToAllV) {
    static constexpr int64_t kRanks[] = {2, 4, 8};
    const int64_t ranks = kRanks[c_.Int(0, 2)];
    const TensorSig rows = Sig({ranks * c_.Int(1, 2), size}, dt);
    const TensorSig per_rank = Sig({ranks, 1}, DataType::kInt32);
    args.push_back(ViewOfSig(rows, -1));
    args.push_back(ViewOfSig(rows, args[0]));
    args.push_back(ViewOfSig(per_rank, -1));
    args.push_back(ViewOfSig(c_.Bool() ? per_rank : Sig({ranks}, DataType::kInt32), -1));
    // recv_counts: sometimes a fresh alloc that no dispatch reaches (allocs live
    // only at the top level), so its coverage is only what it inherits from the
    // target. Otherwise a lost hand-over hides behind its own.
    if (cur_ == &m_.functions[host_].body && c_.Chance(1, 2)) {
      args.push_back(EmitView(EmitAlloc(SizeForm::kLiteral), per_rank));
    } else {
      args.push_back(ViewOfSig(per_rank, -1));
    }
    return args;
  }
  TensorSig target;
  target.dtype = dt;
  if (c_.Chance(1, 3)) {
    // A rank count that is no constant: the world size, or the module's pl.dynamic.
    const int ranks = m_.dynamic_dim >= 0 && c_.Bool() ? m_.dynamic_dim : UsableWorldSizeTemp();
    target.dims = {Dim{0, ranks}, Dim{size, -1}};
  } else {
    static constexpr int64_t kRows[] = {2, 4, 8};
    target.dims = {Dim{kRows[c_.Int(0, 2)], -1}, Dim{size, -1}};
  }
  const TensorSig input = kind == CollKind::kAllGather ? Sig({1, size}, dt) : target;
  args.push_back(ViewOfSig(input, -1));
  args.push_back(ViewOfSig(target, args[0]));
  // The signal has one slot per rank: where both counts are constants, as many as
  // the target has rows.
  const Dim rows = target.dims[0];
  auto slots_fit = [rows](const Dim& d) {
    return d.var >= 0 || rows.var >= 0 || d.constant == rows.constant;
  };
  TensorSig signal;
  signal.dtype = DataType::kInt32;
  const Dim slots =
      c_.Bool() ? Dim{0, UsableWorldSizeTemp()} : Dim{rows.var >= 0 ? 4 : rows.constant, -1};
  signal.dims = {slots};
  if (c_.Bool()) signal.dims.push_back(Dim{1, -1});
  args.push_back(ViewArg(
      [&slots_fit](const ValueModel& v) {
        return v.sig.dtype == DataType::kInt32 && !v.sig.dims.empty() && slots_fit(v.sig.dims[0]) &&
               (v.sig.dims.size() == 1 ||
                (v.sig.dims.size() == 2 && v.sig.dims[1].var < 0 && v.sig.dims[1].constant == 1));
      },
      signal, true));
  return args;
}

// An InCore kernel calling collectives as PyPTO's kernels do: a local pl.Tensor
// input, a DistributedTensor window as the destination (rebound by every call
// that returns it), an INT32 signal window and, for all_to_all_v, a local count
// tensor and a recv_counts window. The pass must leave it alone.
FunctionModel Generator::MakeCollectiveKernel(std::string name) {
  FunctionModel f;
  f.name = std::move(name);
  f.role = FuncRole::kInCore;
  f.decl = DeclForm::kInCoreType;
  f.params.reserve(6);
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
  // allgather sends this rank's one row.
  const int row = param("row", {1, 64}, DataType::kFP32, true);
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
  std::array<int, 7> weights = kKernelCollectiveWeights;
  if (counts < 0) weights[1] = 0;  // all_to_all_v needs the count parameters
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
        data = call(kind, {input, data, signal}, data);
        break;
      case CollKind::kAllGather:
        data = call(kind, {row, data, signal}, data);
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
void Generator::AddChipCollectives(FunctionModel& f) {
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

}  // namespace cds::fuzz::detail
