#include "fuzz/gen/rule_reach.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "fuzz/gen/expect.h"

namespace cds::fuzz {

namespace {

constexpr std::array<std::string_view, kNumRules> kRuleTexts = {
#define CDS_GEN_RULE_TEXT(N, S) S,
    CDS_GEN_RULES(CDS_GEN_RULE_TEXT)
#undef CDS_GEN_RULE_TEXT
};

bool WorldSizeLoop(const LoopModel& l) {
  return l.form == LoopForm::kWorldSize || l.form == LoopForm::kWorldSizeExplicit ||
         l.form == LoopForm::kWorldSizeTemp;
}

class Reader {
 public:
  Reader(const ProgramModel& m, const Expectation& e) : m_(m), e_(e) {}

  RuleSet Read() {
    for (const DispatchModel& d : m_.dispatches) Dispatch(d);
    for (const auto& [alloc, sets] : descriptors_) Merge(sets);
    for (const AllocModel& a : m_.allocs) Size(a);
    for (const CollectiveModel& c : m_.collectives) Collective(c);
    for (const FunctionExpect& f : e_.functions) Function(f);
    Views();
    Synthesis();
    return reached_;
  }

 private:
  void Set(Rule r) { reached_.set(static_cast<size_t>(r)); }

  bool InHost(int function) const {
    return function >= 0 && m_.functions[function].role == FuncRole::kHostOrch;
  }

  void Dispatch(const DispatchModel& d) {
    if (!InHost(d.function)) return;
    const bool has_view =
        std::any_of(d.args.begin(), d.args.end(), [&](int a) { return ViewAlloc(m_, a) >= 0; });
    if (!IsDispatchTarget(m_.functions[d.callee])) {
      if (has_view) Set(Rule::kDispatchNotChipOrchestrator);
      return;
    }
    switch (d.form) {
      case DeviceForm::kUnplaced:
        Set(Rule::kDeviceAbsent);
        return;
      case DeviceForm::kConst:
        Set(Rule::kDeviceConstant);
        break;
      case DeviceForm::kLoopVar: {
        const LoopModel& l = m_.loops[d.loop];
        if (WorldSizeLoop(l)) {
          Set(Rule::kDeviceWorldSizeLoop);
        } else if (LoopIsEmpty(l)) {
          Set(Rule::kDeviceEmptyRange);
        } else {
          Set(Rule::kDeviceConstantRange);
        }
        if (!d.loop_context.empty() && d.loop_context.back() != d.loop)
          Set(Rule::kDeviceOuterLoopVar);
        break;
      }
      default:
        return;
    }
    const std::optional<Coverage> desc = DeviceDescriptor(m_, d);
    if (!desc || desc->Empty()) return;
    for (int a : d.args) {
      const int alloc = ViewAlloc(m_, a);
      if (alloc >= 0) descriptors_[alloc].push_back(*desc);
    }
  }

  void Merge(const std::vector<Coverage>& sets) {
    for (size_t i = 0; i < sets.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (sets[i] == sets[j]) continue;
        if (sets[i].all() || sets[j].all()) {
          Set(Rule::kMergeAllAbsorbs);
        } else {
          Set(Rule::kMergeUnion);
        }
      }
    }
  }

  void Size(const AllocModel& a) {
    if (!InHost(a.function)) return;
    switch (a.size_form) {
      case SizeForm::kLiteral:
        Set(Rule::kSizeLiteral);
        break;
      case SizeForm::kBytes:
        Set(Rule::kSizeBytes);
        break;
      case SizeForm::kWorldSize:
        Set(Rule::kSizeWorldSize);
        break;
      case SizeForm::kShape:
        Set(std::any_of(a.shape.begin(), a.shape.end(), [](const Dim& d) { return d.var >= 0; })
                ? Rule::kSizeShapeSymbolic
                : Rule::kSizeShapeConstant);
        break;
    }
  }

  // The expectation of the alloc a view argument belongs to.
  const AllocExpect* AllocOf(int value) const {
    const int alloc = ViewAlloc(m_, value);
    if (alloc < 0) return nullptr;
    const FunctionExpect* f = e_.Find(m_.functions[m_.allocs[alloc].function].name);
    if (!f) return nullptr;
    for (const AllocExpect& a : f->allocs) {
      if (a.name == m_.allocs[alloc].name) return &a;
    }
    return nullptr;
  }

  // The argument at `to` got coverage beyond its own dispatches.
  bool Gained(const CollectiveModel& c, size_t to) const {
    if (to >= c.args.size()) return false;
    const AllocExpect* a = AllocOf(c.args[to]);
    return a && !(a->coverage == a->dispatch_coverage);
  }

  void Collective(const CollectiveModel& c) {
    const FuncRole role = c.function >= 0 ? m_.functions[c.function].role : FuncRole::kInCore;
    if (role == FuncRole::kChipOrch) {
      Set(Rule::kChipCollectiveUntouched);
      return;
    }
    if (role != FuncRole::kHostOrch) {
      Set(Rule::kKernelCollectiveUntouched);
      return;
    }
    switch (c.kind) {
      case CollKind::kAllReduce:
        if (!c.ImplicitSignal() && Gained(c, 1)) Set(Rule::kInheritAllReduce);
        break;
      case CollKind::kBroadcast:
        if (Gained(c, 1)) Set(Rule::kInheritBroadcast);
        break;
      case CollKind::kReduceScatter:
        if (Gained(c, 1)) Set(Rule::kInheritReduceScatter);
        break;
      case CollKind::kBarrier:
        Set(Rule::kBarrierKeepsOwn);
        break;
      case CollKind::kAllGather:
        if (Gained(c, 2)) Set(Rule::kInheritAllGather);
        break;
      case CollKind::kAllToAll:
        if (Gained(c, 2)) Set(Rule::kInheritAllToAll);
        break;
      case CollKind::kAllToAllV:
        if (Gained(c, 2) || Gained(c, 4)) Set(Rule::kInheritAllToAllV);
        break;
    }
  }

  void Function(const FunctionExpect& f) {
    for (const AllocExpect& a : f.allocs) {
      if (!a.synthesized && a.dispatch_coverage.Empty() && !a.coverage.Empty())
        Set(Rule::kOnlyInherited);
    }
    for (const ScopeExpect& s : f.scopes) {
      if (s.slots.size() >= 2) Set(Rule::kClusterSharedScope);
    }
    if (f.scopes.size() >= 2) Set(Rule::kClusterSeveralScopes);
    if (!f.scopes.empty()) ++hosts_with_scopes_;
    if (hosts_with_scopes_ >= 2) Set(Rule::kScopeNamesPerHost);
  }

  void Views() {
    std::vector<int> views_per_alloc(m_.allocs.size());
    std::set<std::pair<int, std::string>> names;
    for (int h : m_.HostFunctions()) {
      ForEachStmt(m_.functions[h].body, [&](const StmtModel& s) {
        switch (s.kind) {
          case StmtKind::kAlias:
            Set(Rule::kViewAlias);
            break;
          case StmtKind::kView:
            if (++views_per_alloc[s.ref] == 2) Set(Rule::kViewMany);
            if (!names.emplace(h, m_.values[s.def].name).second) Set(Rule::kViewRebound);
            break;
          case StmtKind::kCollective:
            if (s.def >= 0 && m_.values[s.def].kind == ValueKind::kView) {
              Set(Rule::kViewInPlaceResult);
              if (!names.emplace(h, m_.values[s.def].name).second) Set(Rule::kViewRebound);
            }
            break;
          case StmtKind::kFor:
            for (const SExpr& init : m_.loops[s.ref].inits) {
              if (init.kind == SExpr::Kind::kSubscript) Set(Rule::kViewInLoopInit);
            }
            break;
          case StmtKind::kOpaque:
            Set(Rule::kViewInOpaqueCall);
            if (!s.tuple_args.empty()) Set(Rule::kViewInTuple);
            break;
          case StmtKind::kScalar:
            if (s.expr.kind == SExpr::Kind::kTuple) Set(Rule::kViewInTuple);
            break;
          case StmtKind::kScope:
            for (const StmtModel& inner : s.body) {
              if (inner.kind == StmtKind::kCollective && m_.collectives[inner.ref].ImplicitSignal())
                Set(Rule::kCollectiveInScope);
            }
            break;
          default:
            break;
        }
      });
    }
  }

  void Synthesis() {
    if (e_.signals.empty()) return;
    Set(Rule::kSynthesizeSignal);
    std::set<std::string> functions;
    for (const SynthesizedSignal& s : e_.signals) functions.insert(s.function);
    if (functions.size() >= 2) Set(Rule::kSynthesizeNumbering);
    if (!e_.results.empty()) Set(Rule::kSynthesizeReturnLifted);
    for (const CollectiveModel& c : m_.collectives) {
      if (c.ImplicitSignal() && InHost(c.function) && c.core_num > 0) Set(Rule::kSynthesizeCoreNum);
    }
    for (const ValueModel& v : m_.values) {
      if (v.name.rfind("__allreduce_", 0) == 0) Set(Rule::kSynthesizeNameTaken);
    }
  }

  const ProgramModel& m_;
  const Expectation& e_;
  RuleSet reached_;
  std::map<int, std::vector<Coverage>> descriptors_;
  int hosts_with_scopes_ = 0;
};

}  // namespace

std::string_view RuleText(Rule r) { return kRuleTexts[static_cast<size_t>(r)]; }

RuleSet RulesReached(const GeneratedProgram& p) {
  if (p.invalid) return {};
  return Reader(p.model, p.expect).Read();
}

}  // namespace cds::fuzz
