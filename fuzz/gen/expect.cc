#include "fuzz/gen/expect.h"

#include <algorithm>

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
    int64_t elements = 1;
    for (int64_t d : a.shape) elements *= d;
    return SizeExpect{elements * ir::DataTypeBytes(a.dtype), 0};
  }

  // A synthesized signal: an INT32 [world_size, core_num] window.
  static SizeExpect Signal(const CollectiveModel& c) {
    const int64_t core_num = c.core_num > 0 ? c.core_num : 1;
    return SizeExpect{0, core_num * 4};
  }

 private:
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
            if (a->per_world_size == 0)
              return SizeExpect{a->constant * b->constant, a->constant * b->per_world_size};
            if (b->per_world_size == 0)
              return SizeExpect{a->constant * b->constant, a->per_world_size * b->constant};
            return std::nullopt;
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

}  // namespace

Expectation ComputeExpectation(const ProgramModel& m) {
  Expectation e;
  std::vector<int> hosts = m.HostFunctions();
  std::sort(hosts.begin(), hosts.end(),
            [&](int a, int b) { return m.functions[a].name < m.functions[b].name; });

  // SynthesizeAllReduceSignals: one counter for the program, hosts in name order,
  // statements in source order. A lifted return takes its signal first, then its
  // result name (the signal completes the call that is then lifted).
  absl::flat_hash_set<std::string> used = UsedNames(m);
  int64_t counter = 0;
  absl::flat_hash_map<int, size_t> signal_of_coll;  // collective -> index in e.signals
  for (int h : hosts) {
    ForEachStmt(m.functions[h].body, [&](const StmtModel& s) {
      if (s.ref < 0 || (s.kind != StmtKind::kCollective && s.kind != StmtKind::kReturn)) return;
      const CollectiveModel& c = m.collectives[s.ref];
      if (c.kind != CollKind::kAllReduce) return;
      if (c.ImplicitSignal()) {
        int64_t k = counter;
        auto names = [](int64_t k) {
          return std::array<std::string, 3>{fmt::format("__allreduce_signal_world_size_{}", k),
                                            fmt::format("__allreduce_signal_buf_{}", k),
                                            fmt::format("__allreduce_signal_{}", k)};
        };
        // One array per candidate: begin() and end() must come from the same object.
        for (auto cand = names(k); std::any_of(
                 cand.begin(), cand.end(), [&](const std::string& n) { return used.contains(n); });
             cand = names(++k)) {
        }
        const auto n = names(k);
        for (const auto& x : n) used.insert(x);
        counter = k + 1;
        SynthesizedSignal sig;
        sig.function = m.functions[h].name;
        sig.counter = static_cast<int>(k);
        sig.world_size_var = n[0];
        sig.buffer = n[1];
        sig.view = n[2];
        const int data_alloc = ViewAlloc(m, c.args[0]);
        if (data_alloc >= 0) sig.data_alloc = m.allocs[data_alloc].name;
        sig.stmt = s.id;
        signal_of_coll[s.ref] = e.signals.size();
        e.signals.push_back(std::move(sig));
      }
      if (c.in_return) {
        int64_t k = counter;
        while (used.contains(fmt::format("__allreduce_result_{}", k))) ++k;
        LiftedResult r{m.functions[h].name, fmt::format("__allreduce_result_{}", k), s.id};
        used.insert(r.name);
        counter = k + 1;
        e.results.push_back(std::move(r));
      }
    });
  }

  // MaterializeCommDomainScopes, per host.
  const std::vector<Coverage> dispatch_cov = DispatchCoverage(m);
  const SizeEvaluator sizes(m);
  // Per host: model alloc index -> position in fe.allocs (kNone for another
  // host's), synthesized ones keyed by their collective; pld.window statements per alloc.
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> pos_of_alloc, pos_of_signal;
  std::vector<int> windows;
  e.functions.reserve(hosts.size());
  for (int h : hosts) {
    FunctionExpect fe;
    fe.name = m.functions[h].name;
    fe.allocs.reserve(m.allocs.size() + e.signals.size());  // this host's are among them
    const std::string& fn = fe.name;
    pos_of_alloc.assign(m.allocs.size(), kNone);
    pos_of_signal.assign(m.collectives.size(), kNone);
    ForEachStmt(m.functions[h].body, [&](const StmtModel& s) {
      if (s.kind == StmtKind::kAlloc) {
        const AllocModel& a = m.allocs[s.ref];
        AllocExpect ae;
        ae.name = a.name;
        ae.var_name = m.values[a.var].name;
        ae.dispatch_coverage = dispatch_cov[s.ref];
        if (std::optional<SizeExpect> size = sizes.Of(a)) {
          ae.size = *size;
        } else {
          e.problems.push_back(fmt::format(
              "{}: the size of alloc '{}' is not linear in the world size", fn, a.name));
        }
        pos_of_alloc[s.ref] = fe.allocs.size();
        fe.allocs.push_back(std::move(ae));
      } else if (s.ref >= 0 && (s.kind == StmtKind::kCollective || s.kind == StmtKind::kReturn)) {
        auto it = signal_of_coll.find(s.ref);
        if (it == signal_of_coll.end()) return;
        AllocExpect ae;
        ae.name = ae.var_name = e.signals[it->second].buffer;
        ae.synthesized = true;
        ae.size = SizeEvaluator::Signal(m.collectives[s.ref]);
        pos_of_signal[s.ref] = fe.allocs.size();
        fe.allocs.push_back(std::move(ae));
      }
    });
    for (auto& ae : fe.allocs) ae.coverage = ae.dispatch_coverage;
    for (size_t ci = 0; ci < m.collectives.size(); ++ci) {
      const CollectiveModel& c = m.collectives[ci];
      if (c.function != h) continue;
      const std::string_view op = CollOpName(c.kind);
      for (size_t i = 0; i < c.args.size(); ++i) {
        const ValueModel& v = m.values[c.args[i]];
        const bool checked =
            !(c.kind == CollKind::kAllToAllV && (i == 0 || i == 3)) &&
            !((c.kind == CollKind::kAllGather || c.kind == CollKind::kAllToAll) && i == 0);
        if (checked && v.kind != ValueKind::kView) {
          e.problems.push_back(
              fmt::format("{}: {} argument '{}' is not a window view", fn, op, v.name));
        }
      }
      if (c.nested != CollectiveModel::Nest::kNone) {
        e.problems.push_back(fmt::format("{}: {} nested inside another expression", fn, op));
      }
      if (c.kind == CollKind::kAllReduce && (c.args.empty() || c.args.size() > 2)) {
        e.problems.push_back(fmt::format("{}: {} with {} arguments", fn, op, c.args.size()));
      }
      if (c.ImplicitSignal() && (c.core_num < 0 || (c.explicit_core_num && c.core_num <= 0))) {
        e.problems.push_back(fmt::format("{}: {} with core_num={}", fn, op, c.core_num));
      }
      if (c.ImplicitSignal() && c.in_loop) {
        e.problems.push_back(fmt::format("{}: signal-less {} inside a loop", fn, op));
      }
      if (c.kind == CollKind::kAllToAllV && c.in_loop) {
        e.problems.push_back(fmt::format("{}: {} inside a loop", fn, op));
      }
      for (const auto& [from, to] : InheritancePairs(m, c)) {
        if (dispatch_cov[from].Empty()) {
          e.problems.push_back(
              fmt::format("{}: {} data/target alloc '{}' has no coverage to pass on", fn, op,
                          m.allocs[from].name));
        }
        if (pos_of_alloc[to] != kNone)
          fe.allocs[pos_of_alloc[to]].coverage.Absorb(dispatch_cov[from]);
      }
      if (c.kind == CollKind::kBarrier) {
        const int a = ViewAlloc(m, c.args[0]);
        if (a >= 0 && dispatch_cov[a].Empty()) {
          e.problems.push_back(
              fmt::format("{}: {} signal '{}' has no coverage", fn, op, m.allocs[a].name));
        }
      }
      if (pos_of_signal[ci] != kNone) {
        const int data = ViewAlloc(m, c.args[0]);
        if (data >= 0) {
          fe.allocs[pos_of_signal[ci]].coverage = dispatch_cov[data];
          if (dispatch_cov[data].Empty()) {
            e.problems.push_back(fmt::format("{}: {} data alloc '{}' has no coverage to pass on",
                                             fn, op, m.allocs[data].name));
          }
        }
      }
    }
    for (const DispatchModel& d : m.dispatches) {
      if (d.function == h && IsDispatchTarget(m.functions[d.callee]) &&
          d.form != DeviceForm::kUnplaced && !DeviceDescriptor(m, d)) {
        e.problems.push_back(fmt::format("{}: unsupported device= of a dispatch to {}", fn,
                                         m.functions[d.callee].name));
      }
    }
    // A view as a loop-carried value: rejected, since later iterations carry
    // whatever the body yields (docs/pass.md).
    ForEachStmt(m.functions[h].body, [&](const StmtModel& s) {
      if (s.kind != StmtKind::kFor) return;
      for (const SExpr& init : m.loops[s.ref].inits) {
        if (init.kind == SExpr::Kind::kVar && m.values[init.var].kind == ValueKind::kView) {
          e.problems.push_back(
              fmt::format("{}: view '{}' carried by a loop", fn, m.values[init.var].name));
        }
      }
    });
    // Dead and unconsumed allocs.
    windows.assign(m.allocs.size(), 0);
    ForEachStmt(m.functions[h].body, [&](const StmtModel& s) {
      if (s.kind == StmtKind::kView) windows[s.ref]++;
    });
    for (size_t a = 0; a < m.allocs.size(); ++a) {
      const size_t pos = pos_of_alloc[a];
      if (pos == kNone) continue;
      if (windows[a] == 0) {
        e.problems.push_back(fmt::format("{}: alloc '{}' has no view", fn, m.allocs[a].name));
      } else if (fe.allocs[pos].coverage.Empty()) {
        e.problems.push_back(fmt::format("{}: alloc '{}' is never consumed", fn, m.allocs[a].name));
      }
    }
    // Cluster in source order by equal coverage.
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
        e.problems.push_back(
            fmt::format("{}: duplicate alloc name '{}' in scope {}", fn, ae.name, scope.name));
      }
      scope.slots.push_back(ae.name);
      scope.slot_vars.push_back(ae.var_name);
      scope.sizes.push_back(ae.size);
      ae.scope = static_cast<int>(s);
    }
    e.functions.push_back(std::move(fe));
  }
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
