#include "fuzz/gen/expect.h"

#include <algorithm>
#include <array>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cds::fuzz {

Coverage Coverage::All() {
  Coverage c;
  c.all_ = true;
  return c;
}

Coverage Coverage::Interval(int64_t lo, int64_t hi) {
  Coverage c;
  if (lo < hi) c.intervals_.emplace_back(lo, hi);
  return c;
}

void Coverage::Absorb(const Coverage& other) {
  if (all_) return;
  if (other.all_) {
    *this = other;
    return;
  }
  // Merged in place: the generator absorbs coverage for every dispatch argument of
  // every program, and a scratch vector per call was one allocation each time.
  // (std::inplace_merge would take a scratch buffer of its own.)
  if (&other == this) return;
  intervals_.insert(intervals_.end(), other.intervals_.begin(), other.intervals_.end());
  std::sort(intervals_.begin(), intervals_.end());
  size_t kept = 0;
  for (size_t i = 0; i < intervals_.size(); ++i) {
    const auto [lo, hi] = intervals_[i];
    // Overlapping or touching intervals become one, so each set has one spelling.
    if (kept > 0 && lo <= intervals_[kept - 1].second) {
      intervals_[kept - 1].second = std::max(intervals_[kept - 1].second, hi);
    } else {
      intervals_[kept++] = {lo, hi};
    }
  }
  intervals_.resize(kept);
}

std::vector<int64_t> Coverage::Ids() const {
  std::vector<int64_t> ids;
  for (const auto& [lo, hi] : intervals_) {
    for (int64_t i = lo; i < hi; ++i) ids.push_back(i);
  }
  return ids;
}

ir::DeviceSet Coverage::ToDeviceSet() const {
  ir::DeviceSet d;
  d.all = all_;
  d.ids = Ids();
  return d;
}

std::string Coverage::Text() const {
  return all_ ? "all" : fmt::format("[{}]", fmt::join(Ids(), ", "));
}

bool IsDispatchTarget(const FunctionModel& f) { return f.role == FuncRole::kChipOrch; }

bool LoopIsEmpty(const LoopModel& l) {
  switch (l.form) {
    case LoopForm::kStop:
    case LoopForm::kStopTemp:
      return l.stop <= 0;
    case LoopForm::kStartStop:
    case LoopForm::kStartStopStep1:
      return l.stop <= l.start;
    default:
      return false;
  }
}

Coverage LoopCoverage(const LoopModel& l) {
  switch (l.form) {
    case LoopForm::kWorldSize:
    case LoopForm::kWorldSizeExplicit:
    case LoopForm::kWorldSizeTemp:
      return Coverage::All();
    default:
      return Coverage::Interval(l.start, l.stop);
  }
}

std::optional<Coverage> DeviceDescriptor(const ProgramModel& m, const DispatchModel& d) {
  switch (d.form) {
    case DeviceForm::kConst:
      return Coverage::Device(d.constant);
    case DeviceForm::kLoopVar: {
      const LoopModel& l = m.loops[d.loop];
      if (l.form == LoopForm::kStep || l.form == LoopForm::kWorldSizeStart ||
          l.form == LoopForm::kVarBound) {
        return std::nullopt;
      }
      const bool ranged = l.form != LoopForm::kWorldSize &&
                          l.form != LoopForm::kWorldSizeExplicit &&
                          l.form != LoopForm::kWorldSizeTemp;
      // Device ids are never negative, and a range too large to enumerate is refused
      // rather than read as ALL.
      if (ranged && (l.start < 0 || l.stop - l.start > kMaxModelDevices)) return std::nullopt;
      return LoopCoverage(l);
    }
    default:
      return std::nullopt;
  }
}

int ViewAlloc(const ProgramModel& m, int value) {
  if (value < 0) return -1;
  const ValueModel& v = m.values[value];
  return v.kind == ValueKind::kView ? v.alloc : -1;
}

std::vector<Coverage> DispatchCoverage(const ProgramModel& m) {
  std::vector<Coverage> cov(m.allocs.size());
  for (const DispatchModel& d : m.dispatches) {
    if (!IsDispatchTarget(m.functions[d.callee]) || d.form == DeviceForm::kUnplaced) continue;
    std::optional<Coverage> desc = DeviceDescriptor(m, d);
    if (!desc) continue;
    for (int a : d.args) {
      const int alloc = ViewAlloc(m, a);
      if (alloc >= 0) cov[alloc].Absorb(*desc);
    }
  }
  return cov;
}

InheritanceEdges InheritancePairs(const ProgramModel& m, const CollectiveModel& c) {
  InheritanceEdges out;
  auto pair = [&](size_t from, size_t to) {
    if (from < c.args.size() && to < c.args.size())
      out.emplace_back(ViewAlloc(m, c.args[from]), ViewAlloc(m, c.args[to]));
  };
  switch (c.kind) {
    case CollKind::kAllReduce:
    case CollKind::kBroadcast:
    case CollKind::kReduceScatter:
      pair(0, 1);
      break;
    case CollKind::kBarrier:
      break;
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      pair(1, 2);
      break;
    case CollKind::kAllToAllV:
      pair(1, 2);
      pair(1, 4);
      break;
  }
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const auto& p) { return p.first < 0 || p.second < 0; }),
            out.end());
  return out;
}

const FunctionExpect* Expectation::Find(std::string_view function) const {
  for (const FunctionExpect& f : functions) {
    if (f.name == function) return &f;
  }
  return nullptr;
}

namespace {

// Alloc sizes as linear functions of the world size, evaluated over the model's
// own expressions (a scalar temp stands for the expression that defined it).
class SizeEvaluator {
 public:
  explicit SizeEvaluator(const ProgramModel& m) : definition_(m.values.size(), nullptr) {
    for (const FunctionModel& f : m.functions) {
      ForEachStmt(f.body, [&](const StmtModel& s) {
        if (s.kind == StmtKind::kScalar && s.def >= 0) definition_[s.def] = &s.expr;
      });
    }
  }

  std::optional<SizeExpect> Of(const AllocModel& a) const {
    if (a.size_form != SizeForm::kShape) return Linear(a.size);
    // Every dim is a factor, constant or not: the product stays linear while at
    // most one factor has a world-size part.
    std::optional<SizeExpect> size = SizeExpect{ir::DataTypeBytes(a.dtype), 0};
    for (const Dim& d : a.shape) {
      size = Product(*size, d.var >= 0 ? Linear(SExpr::VarRef(d.var)) : SizeExpect{d.constant, 0});
      if (!size) return std::nullopt;
    }
    return size;
  }

  // A synthesized signal: an INT32 [world_size, core_num] window.
  static SizeExpect Signal(const CollectiveModel& c) {
    const int64_t core_num = c.core_num > 0 ? c.core_num : 1;
    return SizeExpect{0, core_num * 4};
  }

 private:
  static std::optional<SizeExpect> Product(const SizeExpect& a,
                                           const std::optional<SizeExpect>& b) {
    if (!b) return std::nullopt;
    if (a.per_world_size == 0)
      return SizeExpect{a.constant * b->constant, a.constant * b->per_world_size};
    if (b->per_world_size == 0)
      return SizeExpect{a.constant * b->constant, a.per_world_size * b->constant};
    return std::nullopt;
  }

  std::optional<SizeExpect> Linear(const SExpr& e) const {
    switch (e.kind) {
      case SExpr::Kind::kConst:
        return SizeExpect{e.constant, 0};
      case SExpr::Kind::kWorldSize:
        return SizeExpect{0, 1};
      case SExpr::Kind::kBytesOf:
        return SizeExpect{ir::DataTypeBytes(e.dtype), 0};
      case SExpr::Kind::kVar:
        if (definition_[e.var] == nullptr) return std::nullopt;
        return Linear(*definition_[e.var]);
      case SExpr::Kind::kBinary: {
        const std::optional<SizeExpect> a = Linear(e.operands[0]), b = Linear(e.operands[1]);
        if (!a || !b) return std::nullopt;
        switch (e.op) {
          case ir::BinaryOp::kAdd:
            return SizeExpect{a->constant + b->constant, a->per_world_size + b->per_world_size};
          case ir::BinaryOp::kSub:
            return SizeExpect{a->constant - b->constant, a->per_world_size - b->per_world_size};
          case ir::BinaryOp::kMul:
            return Product(*a, b);
          default:
            return std::nullopt;
        }
      }
      default:
        return std::nullopt;
    }
  }

  std::vector<const SExpr*> definition_;  // value -> the expression a scalar statement bound to it
};

// Every Var name and alloc name of the program: synthesized names avoid them.
absl::flat_hash_set<std::string> UsedNames(const ProgramModel& m) {
  absl::flat_hash_set<std::string> names;
  names.reserve(m.values.size() + m.allocs.size());
  for (const ValueModel& v : m.values) names.insert(v.name);
  for (const AllocModel& a : m.allocs) names.insert(a.name);
  return names;
}

std::array<std::string, 3> SignalNames(int64_t k) {
  return {fmt::format("__allreduce_signal_world_size_{}", k),
          fmt::format("__allreduce_signal_buf_{}", k), fmt::format("__allreduce_signal_{}", k)};
}

// SynthesizeAllReduceSignals' one counter for the program, and the names it must avoid.
class Numbering {
 public:
  explicit Numbering(const ProgramModel& m) : used_(UsedNames(m)) {}

  // The first K from the counter on for which none of the signal's three names is taken.
  void NameSignal(SynthesizedSignal& sig) {
    int64_t k = counter_;
    // One array per candidate: begin() and end() must come from the same object.
    for (auto cand = SignalNames(k); std::any_of(
             cand.begin(), cand.end(), [&](const std::string& n) { return used_.contains(n); });
         cand = SignalNames(++k)) {
    }
    auto n = SignalNames(k);
    for (const auto& x : n) used_.insert(x);
    counter_ = k + 1;
    sig.counter = static_cast<int>(k);
    sig.world_size_var = std::move(n[0]);
    sig.buffer = std::move(n[1]);
    sig.view = std::move(n[2]);
  }

  // The first K from the counter on whose result name is not taken.
  std::string ResultName() {
    int64_t k = counter_;
    while (used_.contains(fmt::format("__allreduce_result_{}", k))) ++k;
    std::string name = fmt::format("__allreduce_result_{}", k);
    used_.insert(name);
    counter_ = k + 1;
    return name;
  }

 private:
  absl::flat_hash_set<std::string> used_;
  int64_t counter_ = 0;
};

using SignalOfCollective = absl::flat_hash_map<int, size_t>;  // collective -> index in e.signals

// SynthesizeAllReduceSignals: one counter for the program, hosts in name order,
// statements in source order. A lifted return takes its signal first, then its
// result name (the signal completes the call that is then lifted).
SignalOfCollective SynthesizeSignals(const ProgramModel& m, const std::vector<int>& hosts,
                                     Expectation& e) {
  Numbering numbering(m);
  SignalOfCollective signal_of_coll;
  for (int h : hosts) {
    const std::string& fn = m.functions[h].name;
    ForEachStmt(m.functions[h].body, [&](const StmtModel& s) {
      if (s.ref < 0 || (s.kind != StmtKind::kCollective && s.kind != StmtKind::kReturn)) return;
      const CollectiveModel& c = m.collectives[s.ref];
      if (c.kind != CollKind::kAllReduce) return;
      if (c.ImplicitSignal()) {
        SynthesizedSignal sig;
        sig.function = fn;
        numbering.NameSignal(sig);
        const int data_alloc = ViewAlloc(m, c.args[0]);
        if (data_alloc >= 0) sig.data_alloc = m.allocs[data_alloc].name;
        sig.stmt = s.id;
        signal_of_coll[s.ref] = e.signals.size();
        e.signals.push_back(std::move(sig));
      }
      if (c.in_return) e.results.push_back(LiftedResult{fn, numbering.ResultName(), s.id});
    });
  }
  return signal_of_coll;
}

// MaterializeCommDomainScopes, one host orchestrator at a time (MaterializeHost's steps).
class HostMaterializer {
 public:
  HostMaterializer(const ProgramModel& m, const SignalOfCollective& signal_of_coll, Expectation& e)
      : m_(m),
        signal_of_coll_(signal_of_coll),
        e_(e),
        dispatch_cov_(DispatchCoverage(m)),
        sizes_(m) {}

  FunctionExpect Host(int h) {
    FunctionExpect fe;
    fe.name = m_.functions[h].name;
    // The problems keep the order --expect has always listed them in, not docs/pass.md's.
    // 1, 5. Allocs and synthesized signal buffers in source order, with their sizes.
    CollectAllocs(h, fe);
    // 4.    Hand-overs (step 3's dispatch coverage is program-wide: DispatchCoverage).
    InheritCoverage(h, fe);
    // 3.    Every device= of a placed dispatch must give a device set.
    CheckDevices(h, fe.name);
    //       The scan's last check: no view carried by a loop.
    CheckCarriedViews(h, fe.name);
    // 2, 4. Dead allocs, and allocs left without coverage.
    CheckDeadAndUnconsumed(h, fe);
    // 7.    Allocs with equal coverage share a comm domain.
    ClusterIntoScopes(fe);
    return fe;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  template <typename... Args>
  void Problem(fmt::format_string<Args...> format, Args&&... args) {
    e_.problems.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  void CollectAllocs(int h, FunctionExpect& fe) {
    fe.allocs.reserve(m_.allocs.size() + e_.signals.size());  // this host's are among them
    pos_of_alloc_.assign(m_.allocs.size(), kNone);
    pos_of_signal_.assign(m_.collectives.size(), kNone);
    ForEachStmt(m_.functions[h].body, [&](const StmtModel& s) {
      if (s.kind == StmtKind::kAlloc) {
        const AllocModel& a = m_.allocs[s.ref];
        AllocExpect ae;
        ae.name = a.name;
        ae.var_name = m_.values[a.var].name;
        ae.dispatch_coverage = dispatch_cov_[s.ref];
        if (std::optional<SizeExpect> size = sizes_.Of(a)) {
          ae.size = *size;
        } else {
          Problem("{}: the size of alloc '{}' is not linear in the world size", fe.name, a.name);
        }
        pos_of_alloc_[s.ref] = fe.allocs.size();
        fe.allocs.push_back(std::move(ae));
      } else if (s.ref >= 0 && (s.kind == StmtKind::kCollective || s.kind == StmtKind::kReturn)) {
        auto it = signal_of_coll_.find(s.ref);
        if (it == signal_of_coll_.end()) return;
        AllocExpect ae;
        ae.name = ae.var_name = e_.signals[it->second].buffer;
        ae.synthesized = true;
        ae.size = SizeEvaluator::Signal(m_.collectives[s.ref]);
        pos_of_signal_[s.ref] = fe.allocs.size();
        fe.allocs.push_back(std::move(ae));
      }
    });
  }

  // Collective by collective, its checks and then its hand-overs: the problems' order.
  void InheritCoverage(int h, FunctionExpect& fe) {
    for (auto& ae : fe.allocs) ae.coverage = ae.dispatch_coverage;
    for (size_t ci = 0; ci < m_.collectives.size(); ++ci) {
      if (m_.collectives[ci].function != h) continue;
      CheckCollective(m_.collectives[ci], fe.name);
      HandOverCoverage(ci, fe);
    }
  }

  // SynthesizeAllReduceSignals' checks sit here too: their problems are listed per host.
  void CheckCollective(const CollectiveModel& c, const std::string& fn) {
    const std::string_view op = CollOpName(c.kind);
    for (size_t i = 0; i < c.args.size(); ++i) {
      const ValueModel& v = m_.values[c.args[i]];
      const bool checked =
          !(c.kind == CollKind::kAllToAllV && (i == 0 || i == 3)) &&
          !((c.kind == CollKind::kAllGather || c.kind == CollKind::kAllToAll) && i == 0);
      if (checked && v.kind != ValueKind::kView) {
        Problem("{}: {} argument '{}' is not a window view", fn, op, v.name);
      }
    }
    if (c.nested != CollectiveModel::Nest::kNone) {
      Problem("{}: {} nested inside another expression", fn, op);
    }
    if (c.kind == CollKind::kAllReduce && (c.args.empty() || c.args.size() > 2)) {
      Problem("{}: {} with {} arguments", fn, op, c.args.size());
    }
    if (c.ImplicitSignal() && (c.core_num < 0 || (c.explicit_core_num && c.core_num <= 0))) {
      Problem("{}: {} with core_num={}", fn, op, c.core_num);
    }
    if (c.ImplicitSignal() && c.in_loop) {
      Problem("{}: signal-less {} inside a loop", fn, op);
    }
    if (c.kind == CollKind::kAllToAllV && c.in_loop) {
      Problem("{}: {} inside a loop", fn, op);
    }
  }

  void HandOverCoverage(size_t ci, FunctionExpect& fe) {
    const CollectiveModel& c = m_.collectives[ci];
    const std::string_view op = CollOpName(c.kind);
    const std::string& fn = fe.name;
    for (const auto& [from, to] : InheritancePairs(m_, c)) {
      if (dispatch_cov_[from].Empty()) {
        Problem("{}: {} data/target alloc '{}' has no coverage to pass on", fn, op,
                m_.allocs[from].name);
      }
      if (pos_of_alloc_[to] != kNone)
        fe.allocs[pos_of_alloc_[to]].coverage.Absorb(dispatch_cov_[from]);
    }
    if (c.kind == CollKind::kBarrier) {
      const int a = ViewAlloc(m_, c.args[0]);
      if (a >= 0 && dispatch_cov_[a].Empty()) {
        Problem("{}: {} signal '{}' has no coverage", fn, op, m_.allocs[a].name);
      }
    }
    if (pos_of_signal_[ci] != kNone) {
      const int data = ViewAlloc(m_, c.args[0]);
      if (data >= 0) {
        fe.allocs[pos_of_signal_[ci]].coverage = dispatch_cov_[data];
        if (dispatch_cov_[data].Empty()) {
          Problem("{}: {} data alloc '{}' has no coverage to pass on", fn, op,
                  m_.allocs[data].name);
        }
      }
    }
  }

  void CheckDevices(int h, const std::string& fn) {
    for (const DispatchModel& d : m_.dispatches) {
      if (d.function == h && IsDispatchTarget(m_.functions[d.callee]) &&
          d.form != DeviceForm::kUnplaced && !DeviceDescriptor(m_, d)) {
        Problem("{}: unsupported device= of a dispatch to {}", fn, m_.functions[d.callee].name);
      }
    }
  }

  // A view as a loop-carried value: rejected, since later iterations carry
  // whatever the body yields (docs/pass.md).
  void CheckCarriedViews(int h, const std::string& fn) {
    ForEachStmt(m_.functions[h].body, [&](const StmtModel& s) {
      if (s.kind != StmtKind::kFor) return;
      for (const SExpr& init : m_.loops[s.ref].inits) {
        if (init.kind == SExpr::Kind::kVar && m_.values[init.var].kind == ValueKind::kView) {
          Problem("{}: view '{}' carried by a loop", fn, m_.values[init.var].name);
        }
      }
    });
  }

  void CheckDeadAndUnconsumed(int h, const FunctionExpect& fe) {
    windows_.assign(m_.allocs.size(), 0);
    ForEachStmt(m_.functions[h].body, [&](const StmtModel& s) {
      if (s.kind == StmtKind::kView) windows_[s.ref]++;
    });
    for (size_t a = 0; a < m_.allocs.size(); ++a) {
      const size_t pos = pos_of_alloc_[a];
      if (pos == kNone) continue;
      if (windows_[a] == 0) {
        Problem("{}: alloc '{}' has no view", fe.name, m_.allocs[a].name);
      } else if (fe.allocs[pos].coverage.Empty()) {
        Problem("{}: alloc '{}' is never consumed", fe.name, m_.allocs[a].name);
      }
    }
  }

  // Cluster in source order by equal coverage.
  void ClusterIntoScopes(FunctionExpect& fe) {
    std::vector<const Coverage*> scope_coverage;
    for (AllocExpect& ae : fe.allocs) {
      size_t s = 0;
      while (s < scope_coverage.size() && !(*scope_coverage[s] == ae.coverage)) ++s;
      if (s == scope_coverage.size()) {
        ScopeExpect scope;
        scope.name = fmt::format("comm_d{}", s);
        scope.devices = ae.coverage.ToDeviceSet();
        fe.scopes.push_back(std::move(scope));
        scope_coverage.push_back(&ae.coverage);
      }
      ScopeExpect& scope = fe.scopes[s];
      if (std::find(scope.slots.begin(), scope.slots.end(), ae.name) != scope.slots.end()) {
        Problem("{}: duplicate alloc name '{}' in scope {}", fe.name, ae.name, scope.name);
      }
      scope.slots.push_back(ae.name);
      scope.slot_vars.push_back(ae.var_name);
      scope.sizes.push_back(ae.size);
      ae.scope = static_cast<int>(s);
    }
  }

  const ProgramModel& m_;
  const SignalOfCollective& signal_of_coll_;
  Expectation& e_;
  const std::vector<Coverage> dispatch_cov_;
  const SizeEvaluator sizes_;
  // Per host, reused across hosts: model alloc index -> position in fe.allocs (kNone
  // for another host's), synthesized ones keyed by their collective; pld.window
  // statements per alloc.
  std::vector<size_t> pos_of_alloc_, pos_of_signal_;
  std::vector<int> windows_;
};

}  // namespace

Expectation ComputeExpectation(const ProgramModel& m) {
  Expectation e;
  std::vector<int> hosts = m.HostFunctions();
  std::sort(hosts.begin(), hosts.end(),
            [&](int a, int b) { return m.functions[a].name < m.functions[b].name; });
  const SignalOfCollective signal_of_coll = SynthesizeSignals(m, hosts, e);
  HostMaterializer materialize(m, signal_of_coll, e);
  e.functions.reserve(hosts.size());
  for (int h : hosts) e.functions.push_back(materialize.Host(h));
  return e;
}

nlohmann::json ToJson(const Expectation& e) {
  using nlohmann::json;
  auto devices = [](const ir::DeviceSet& d) -> json {
    if (d.all) return "all";
    return json(d.ids);
  };
  auto coverage = [&](const Coverage& c) -> json { return devices(c.ToDeviceSet()); };
  auto size = [](const SizeExpect& s) -> json {
    return {{"bytes", s.constant}, {"bytes_per_world_size", s.per_world_size}};
  };
  json out = json::object();
  json fns = json::array();
  for (const FunctionExpect& f : e.functions) {
    json jf = {{"function", f.name}};
    json scopes = json::array();
    for (const ScopeExpect& s : f.scopes) {
      scopes.push_back({{"name", s.name},
                        {"devices", devices(s.devices)},
                        {"slots", s.slots},
                        {"slot_vars", s.slot_vars}});
    }
    json allocs = json::array();
    for (const AllocExpect& a : f.allocs) {
      allocs.push_back({{"name", a.name},
                        {"var", a.var_name},
                        {"synthesized", a.synthesized},
                        {"dispatch_coverage", coverage(a.dispatch_coverage)},
                        {"coverage", coverage(a.coverage)},
                        {"size", size(a.size)},
                        {"scope", a.scope}});
    }
    jf["scopes"] = std::move(scopes);
    jf["allocs"] = std::move(allocs);
    fns.push_back(std::move(jf));
  }
  out["functions"] = std::move(fns);
  json sigs = json::array();
  for (const SynthesizedSignal& s : e.signals) {
    sigs.push_back({{"function", s.function},
                    {"counter", s.counter},
                    {"world_size_var", s.world_size_var},
                    {"buffer", s.buffer},
                    {"view", s.view},
                    {"data_alloc", s.data_alloc}});
  }
  out["synthesized_signals"] = std::move(sigs);
  json results = json::array();
  for (const LiftedResult& r : e.results)
    results.push_back({{"function", r.function}, {"name", r.name}});
  out["lifted_results"] = std::move(results);
  out["problems"] = e.problems;
  return out;
}

nlohmann::json ToJson(const InvalidSpec& s) {
  return {{"kind", InvalidKindName(s.kind)},
          {"text_stage", StageName(s.text_stage)},
          {"ir_stage", StageName(s.ir_stage)},
          {"function", s.function},
          {"line", s.line},
          {"message_any_of", s.message_any_of}};
}

}  // namespace cds::fuzz
