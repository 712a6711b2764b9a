// The whole program: the functions and their signatures, each host's statements
// drawn one Step at a time, and the closing views and dispatches that make it valid.

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "fuzz/gen/expect.h"
#include "fuzz/gen/generator.h"
#include "fuzz/gen/weights.h"

namespace cds::fuzz::detail {

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

void Generator::Run() {
  // Room for a typical program, so the tables do not regrow while it is built
  // (fuzz_pipeline's programs, size 16, bind 32 values on average and hold about 5
  // dispatches, 5 collectives and 3 allocs): gen_bench's BM_GenerateModel/100 runs
  // 6% faster with it.
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

std::string Generator::Fresh(const std::string& prefix) {
  return fmt::format("{}{}", prefix, counters_[prefix]++);
}

int Generator::NewValue(std::string name, ValueKind kind) {
  ValueModel v;
  v.name = std::move(name);
  v.kind = kind;
  v.function = host_;
  m_.values.push_back(std::move(v));
  return static_cast<int>(m_.values.size()) - 1;
}

StmtModel Generator::NewStmt(StmtKind kind) {
  StmtModel s;
  s.kind = kind;
  s.id = m_.num_stmts++;
  return s;
}

// Appends to the current block and makes the defined value visible.
void Generator::Push(StmtModel s) {
  if (s.def >= 0) Define(s.def);
  cur_->push_back(std::move(s));
}

// A value is usable while its block is open and its name not rebound.
void Generator::Define(int v) {
  if (live_.size() < m_.values.size()) live_.resize(m_.values.size(), 0);
  auto [it, inserted] = latest_.try_emplace(m_.values[v].name, v);
  if (!inserted) {
    live_[it->second] = 0;
    it->second = v;
  }
  live_[v] = 1;
  scopes_.back().push_back(v);
}

// Starts emitting at the top level of host `h`, after its current statements.
void Generator::EnterHost(int h) {
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

// One statement (or a compound one); returns the budget it used (>= 1).
int Generator::Step(int remaining, int depth) {
  const std::array<int, kNumActions> w = ActionWeights(remaining, depth);
  return Perform(static_cast<Action>(c_.Weighted(w)), remaining, depth);
}

// The weight of each action here: kStepWeights' number where its condition holds.
std::array<int, Generator::kNumActions> Generator::ActionWeights(int remaining, int depth) const {
  const StepWeights& k = kStepWeights;
  std::array<int, kNumActions> w{};
  auto weigh = [&w](Action a, int weight) { w[static_cast<size_t>(a)] = weight; };
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
  const bool room_for_block = remaining >= 2 && depth < 3;
  if (depth == 0 && static_cast<int>(host_allocs_.size()) < alloc_cap_)
    weigh(Action::kAlloc, has_alloc ? k.alloc : k.first_alloc);
  if (has_alloc) {
    weigh(Action::kDispatch,
          loop_stack_.empty() && !On(Feature::kDeviceOutsideLoop) ? 0 : k.dispatch);
    weigh(Action::kView, k.view);
    if (any_coll) weigh(Action::kCollective, k.collective);
  }
  if (has_view && On(Feature::kAlias)) weigh(Action::kAlias, k.alias);
  if (On(Feature::kRebind) && has_alloc && !RebindCandidates().empty())
    weigh(Action::kRebind, k.rebind);
  if (room_for_block) {
    if (any_loop && has_alloc && (loop_stack_.empty() || On(Feature::kNestedLoop)))
      weigh(Action::kFor, loop_stack_.empty() ? k.top_loop : k.nested_loop);
    if (On(Feature::kWhileLoop)) weigh(Action::kWhile, k.while_loop);
    if (On(Feature::kIfElse)) weigh(Action::kIf, k.if_else);
  }
  if (On(Feature::kNoiseTensor)) weigh(Action::kTensor, k.tensor);
  if (On(Feature::kNoiseScalar)) weigh(Action::kScalar, k.scalar);
  if (On(Feature::kNameCollision) && !collision_done_) weigh(Action::kCollision, k.name_collision);
  if (On(Feature::kWholeProgram) && room_for_block) weigh(Action::kScope, k.scope);
  if (On(Feature::kOpaqueCall) && has_view) weigh(Action::kOpaque, k.opaque_call);
  if (On(Feature::kSubscript) && has_view) {
    if (room_for_block && On(Feature::kOpaqueCall)) weigh(Action::kScope, k.scope);
    weigh(Action::kSubscriptRead, k.subscript_read);
    weigh(Action::kSubscriptAssign, k.subscript_assign);
  }
  if (On(Feature::kUnpack) && has_view) weigh(Action::kUnpack, k.unpack);
  if (On(Feature::kTupleValue)) weigh(Action::kTuple, k.tuple);
  weigh(Action::kConstant, k.constant);
  return w;
}

int Generator::Perform(Action action, int remaining, int depth) {
  switch (action) {
    case Action::kAlloc:
      GenAllocWithViews();
      return 1;
    case Action::kDispatch:
      GenDispatch();
      return 1;
    case Action::kView:
      EmitView(PickAlloc(c_.Chance(1, 3)));
      return 1;
    case Action::kAlias:
      GenAlias();
      return 1;
    case Action::kRebind:
      GenRebind();
      return 1;
    case Action::kFor:
      return std::max(GenFor(remaining, depth), 1);
    case Action::kWhile:
      return GenWhileOrIf(true, remaining, depth);
    case Action::kIf:
      return GenWhileOrIf(false, remaining, depth);
    case Action::kCollective:
      GenCollective();
      return 1;
    case Action::kTensor:
      GenNoiseTensor();
      return 1;
    case Action::kScalar:
      GenNoiseScalar();
      return 1;
    case Action::kCollision:
      GenNameCollision();
      return 1;
    case Action::kScope:
      return GenScope(remaining, depth);
    case Action::kOpaque:
      GenOpaqueCall();
      return 1;
    case Action::kUnpack:
      GenUnpack();
      return 1;
    case Action::kSubscriptRead:
      GenSubscriptRead();
      return 1;
    case Action::kSubscriptAssign:
      GenSubscriptAssign();
      return 1;
    case Action::kTuple:
      GenTuple();
      return 1;
    case Action::kConstant:
    case Action::kCount:
      break;
  }
  GenConstant();
  return 1;
}

void Generator::GenBlock(int budget, int depth) {
  while (budget > 0) budget -= Step(budget, depth);
}

// Gives every alloc of the current host a view and the coverage a valid
// program needs, by appending top-level views and constant-device dispatches.
void Generator::Finalize() {
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

void Generator::GenHost(int h, int budget, bool first) {
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
    const int data = AllReduceDataArg(/*signature_shaped=*/true);
    std::vector<int> args{data};
    if (!(On(Feature::kAllReduceImplicit) && c_.Bool())) args.push_back(SignalArg());
    const int coll = NewCollective(CollKind::kAllReduce, std::move(args));
    m_.collectives[coll].in_return = true;
    m_.collectives[coll].stmt = ret.id;
    ret.ref = coll;
  }
  if (ret.ref < 0 && On(Feature::kTupleValue)) {
    ValueList tuples = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kTuple; });
    tuples.erase(std::remove_if(tuples.begin(), tuples.end(),
                                [this](int t) { return shaped_by_body_.contains(t); }),
                 tuples.end());
    if (!tuples.empty() && c_.Chance(2, 3)) ret.src = c_.Pick(tuples);
  }
  Finalize();
  Push(std::move(ret));
}

void Generator::DrawFeatures() {
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

TensorSig Generator::RandomPaletteSig() {
  static const std::vector<DataType> kTypes = {DataType::kFP32, DataType::kFP16, DataType::kBF16,
                                               DataType::kInt32};
  const DataType dt = c_.Pick(kTypes);
  static constexpr int64_t kRows[] = {4, 8, 16};
  static constexpr int64_t kLengths[] = {256, 64, 128, 1024};
  if (c_.Chance(1, 3)) return Sig({kRows[c_.Int(0, 2)], 64}, dt);
  return Sig({kLengths[c_.Int(0, 3)]}, dt);
}

void Generator::MakeFunctions() {
  if (On(Feature::kSizeSymbolic) && c_.Bool()) {
    // `NR = pl.dynamic("NR")`: a rank count no function defines, for window shapes.
    ValueModel nr;
    nr.name = "NR";
    nr.kind = ValueKind::kScalar;
    nr.scalar_dtype = DataType::kIndex;
    m_.values.push_back(std::move(nr));
    m_.dynamic_dim = static_cast<int>(m_.values.size()) - 1;
  }
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

}  // namespace cds::fuzz::detail

namespace cds::fuzz {

ProgramModel GenerateModel(Choices& choices, const GenOptions& options) {
  ProgramModel m;
  detail::Generator g(choices, options, m);
  g.Run();
  return m;
}

}  // namespace cds::fuzz
