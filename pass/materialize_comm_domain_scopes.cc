#include "pass/materialize_comm_domain_scopes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/mutator.h"
#include "ir/op_registry.h"
#include "ir/structural_equal.h"
#include "pass/ir_walk.h"

// CDS_INJECT_BUG selects a deliberately wrong variant of one step (bug-hunt
// evaluation of the verifier and the fuzzers). 0, the default, is the real pass.
#ifndef CDS_INJECT_BUG
#define CDS_INJECT_BUG 0
#endif

namespace cds::pass {
namespace {

using ir::Call;
using ir::CallPtr;
using ir::DeviceSet;
using ir::ExprPtr;
using ir::NodeKind;
using ir::Span;
using ir::StmtPtr;
using ir::TypePtr;
using ir::Var;
using ir::VarPtr;
using ir::WindowBufferPtr;

constexpr size_t kNone = static_cast<size_t>(-1);

// ---------------------------------------------------------------------------
// Per-function analysis state

struct AllocInfo {
  VarPtr var;
  CallPtr call;
  std::string name;  // the logical alloc name (name= kwarg)
  Span span;
  bool has_view = false;
  bool dispatched = false;                     // some dispatch passed one of its views
  DeviceSet dispatch_cov = DeviceSet::Of({});  // from dispatches only
  DeviceSet inherited = DeviceSet::Of({});     // from collectives pairing it with a data/target
  bool inherits = false;
  DeviceSet coverage = DeviceSet::Of({});  // merged
  WindowBufferPtr wb;
};

// A host collective's coverage hand-over: `to` inherits the dispatch coverage of
// `from`. A barrier has no `from`: its signal must be covered on its own.
struct CollectiveLink {
  size_t from = kNone;
  size_t to = kNone;
  CallPtr call;
  std::string_view from_role;
  std::string_view to_role;
};

// Open addressing keyed by Var address. Every assignment and every Var use of a
// host body is looked up; on 10^6-statement bodies the chained nodes of
// std::unordered_map made these lookups the largest cost of the pass (a cache
// miss per bucket and per node).
template <typename V>
class VarTable {
 public:
  const V* Find(const Var* key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }
  // Like std::unordered_map::emplace: an existing entry is kept.
  void Emplace(const Var* key, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    size_t i = Slot(key);
    for (; slots_[i].key != nullptr; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return;
    }
    slots_[i].key = key;
    slots_[i].value = std::move(value);
    ++size_;
  }
  size_t size() const { return size_; }
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& e : slots_) {
      if (e.key != nullptr) f(e.key, e.value);
    }
  }

 private:
  struct Entry {
    const Var* key = nullptr;
    V value{};
  };
  // The address itself, not a mixed hash: Vars are allocated in program order and
  // every walk visits them in that order, so neighbouring lookups hit neighbouring
  // slots and the table streams through the cache instead of missing on each one.
  size_t Slot(const Var* key) const {
    return static_cast<size_t>(reinterpret_cast<uintptr_t>(key) >> 4) & mask_;
  }
  void Grow() {
    std::vector<Entry> old = std::move(slots_);
    size_t cap = old.empty() ? 64 : old.size() * 2;
    slots_.clear();
    slots_.resize(cap);
    mask_ = cap - 1;
    for (auto& e : old) {
      if (e.key == nullptr) continue;
      size_t i = Slot(e.key);
      while (slots_[i].key != nullptr) i = (i + 1) & mask_;
      slots_[i] = std::move(e);
    }
  }
  std::vector<Entry> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

struct HostState {
  std::vector<AllocInfo> allocs;        // source order
  VarTable<size_t> alloc_of_ptr;        // alloc LHS -> alloc
  VarTable<size_t> view_alloc;          // every Var resolving to a view
  VarTable<ExprPtr> loop_bounds;        // n = pld.world_size() / n = 4
  std::vector<CollectiveLink> links;    // source order
};

bool IsPlainVar(const ExprPtr& e) { return e && e->kind() == NodeKind::kVar; }

std::optional<size_t> ResolveView(const HostState& st, const ExprPtr& e) {
  if (!IsPlainVar(e)) return std::nullopt;
  const size_t* idx = st.view_alloc.Find(static_cast<const Var*>(e.get()));
  if (idx == nullptr) return std::nullopt;
  return *idx;
}

// The argument through which an in-place collective's result is the same window.
int InPlaceSourceArg(std::string_view op) {
  if (op == ir::ops::kAllReduce) return 0;
  if (op == ir::ops::kAllGather || op == ir::ops::kAllToAll || op == ir::ops::kAllToAllV) return 1;
  return -1;
}

bool IsHostCollective(std::string_view op) {
  return op == ir::ops::kAllReduce || op == ir::ops::kBroadcast || op == ir::ops::kReduceScatter ||
         op == ir::ops::kBarrier || op == ir::ops::kAllGather || op == ir::ops::kAllToAll ||
         op == ir::ops::kAllToAllV;
}

std::optional<int64_t> ConstValue(const ExprPtr& e) {
  if (!e || e->kind() != NodeKind::kConstInt) return std::nullopt;
  return static_cast<const ir::ConstInt&>(*e).value;
}

bool IsWorldSizeCall(const ExprPtr& e) {
  return e && e->kind() == NodeKind::kCall &&
         static_cast<const Call&>(*e).OpName() == ir::ops::kWorldSize;
}

// ---------------------------------------------------------------------------
// Step 1+2: collect allocs, views (through aliases and in-place collectives) and
// the scalar definitions a loop bound may refer to. One pre-order walk: in SSA
// form every definition precedes its uses in that order.

class Collector {
 public:
  explicit Collector(HostState& st) : st_(st) {}

  void Walk(const StmtPtr& s) {
    if (!s) return;
    if (s->kind() == NodeKind::kAssignStmt) {
      Inspect(ir::As<ir::AssignStmt>(s));
      return;
    }
    detail::ForEachSubBody(*s, [this](const StmtPtr& c) { Walk(c); });
  }

 private:
  void Inspect(const std::shared_ptr<const ir::AssignStmt>& a) {
    const ExprPtr& value = a->value;
    const Var* lhs = a->var.get();
    switch (value->kind()) {
      case NodeKind::kConstInt:
        st_.loop_bounds.Emplace(lhs, value);
        return;
      case NodeKind::kVar:
        AliasOf(lhs, value);
        return;
      case NodeKind::kCall:
        break;
      default:
        return;
    }
    auto call = ir::As<Call>(value);
    const std::string& op = call->OpName();
    if (op.empty()) return;
    if (op == ir::ops::kAllocWindowBuffer) {
      AddAlloc(a, call);
    } else if (op == ir::ops::kWindow) {
      AddView(lhs, call);
    } else if (op == ir::ops::kWorldSize) {
      st_.loop_bounds.Emplace(lhs, value);
    } else if (int src = InPlaceSourceArg(op);
               src >= 0 && static_cast<size_t>(src) < call->args.size()) {
      AliasOf(lhs, call->args[src]);
    }
  }

  void AddAlloc(const std::shared_ptr<const ir::AssignStmt>& a, const CallPtr& call) {
    AllocInfo info;
    info.var = a->var;
    info.call = call;
    const ir::AttrValue* name = ir::FindKwarg(call->kwargs, "name");
    info.name = name && std::holds_alternative<std::string>(*name) ? std::get<std::string>(*name)
                                                                   : a->var->name_hint;
    info.span = call->span.IsKnown() ? call->span : a->span;
    st_.alloc_of_ptr.Emplace(a->var.get(), st_.allocs.size());
    st_.allocs.push_back(std::move(info));
  }

  void AddView(const Var* lhs, const CallPtr& call) {
    if (call->args.empty() || !IsPlainVar(call->args[0])) return;
    const size_t* idx = st_.alloc_of_ptr.Find(static_cast<const Var*>(call->args[0].get()));
    if (idx == nullptr) return;
    st_.allocs[*idx].has_view = true;
    st_.view_alloc.Emplace(lhs, *idx);
  }

  void AliasOf(const Var* lhs, const ExprPtr& source) {
#if CDS_INJECT_BUG == 10
    // Injected: aliases and in-place results are not resolved.
    return;
#endif
    if (auto idx = ResolveView(st_, source)) st_.view_alloc.Emplace(lhs, *idx);
  }

  HostState& st_;
};

// ---------------------------------------------------------------------------
// Step 3: scan dispatches (and host collectives) with a loop stack.

struct LoopFrame {
  const ir::ForStmt* loop = nullptr;  // null for a while loop
  bool evaluated = false;
  std::optional<DeviceSet> devices;  // the coverage of the induction variable
  std::string problem;               // why it has none
};

class Scanner {
 public:
  Scanner(HostState& st, const std::unordered_set<std::string>& chip_orchs)
      : st_(st), chip_orchs_(chip_orchs) {}

  void Walk(const StmtPtr& s) {
    if (!s) return;
    detail::ForEachStmtExpr(*s, [this](const ExprPtr& e) { Scan(e); });
    switch (s->kind()) {
      case NodeKind::kForStmt:
        frames_.emplace_back();
        frames_.back().loop = static_cast<const ir::ForStmt*>(s.get());
        Walk(static_cast<const ir::ForStmt&>(*s).body);
        frames_.pop_back();
        return;
      case NodeKind::kWhileStmt:
        frames_.emplace_back();
        Walk(static_cast<const ir::WhileStmt&>(*s).body);
        frames_.pop_back();
        return;
      default:
        detail::ForEachSubBody(*s, [this](const StmtPtr& c) { Walk(c); });
    }
  }

 private:
  void Scan(const ExprPtr& e) {
    if (!e) return;
    if (e->kind() == NodeKind::kCall) {
      auto c = ir::As<Call>(e);
      if (ir::GlobalVarPtr callee = c->Callee(); callee && chip_orchs_.count(callee->name)) {
        Dispatch(*c, callee->name);
      } else if (IsHostCollective(c->OpName())) {
        Collective(c);
      }
    } else if (e->kind() <= NodeKind::kConstString) {
      return;  // Var-like leaves and constants
    }
    detail::ForEachSubExpr(*e, [this](const ExprPtr& x) { Scan(x); });
  }

  void Dispatch(const Call& c, const std::string& callee) {
    DeviceSet devices = DeviceOf(c, callee);
    for (const auto& arg : c.args) {
      if (auto idx = ResolveView(st_, arg)) {
        AllocInfo& alloc = st_.allocs[*idx];
        alloc.dispatched = true;
#if CDS_INJECT_BUG == 1
        // Injected: ALL does not absorb; only explicit ids are unioned.
        DeviceSet merged = DeviceSet::Of(alloc.dispatch_cov.ids).Merge(DeviceSet::Of(devices.ids));
        merged.all = alloc.dispatch_cov.all && devices.all;
        if (merged.all) merged.ids.clear();
        alloc.dispatch_cov = merged;
#elif CDS_INJECT_BUG == 2
        // Injected: subsets are not unioned; the last dispatch wins.
        alloc.dispatch_cov = alloc.dispatch_cov.all ? alloc.dispatch_cov : devices;
#else
        // Most dispatches repeat coverage the alloc already has; Merge would copy it.
        if (!alloc.dispatch_cov.all && alloc.dispatch_cov != devices) {
          alloc.dispatch_cov = alloc.dispatch_cov.Merge(devices);
        }
#endif
      }
    }
  }

  DeviceSet DeviceOf(const Call& c, const std::string& callee) {
    ExprPtr device = ir::FindAttr(c.attrs, "device");
    if (!device) {
      throw ValueError(fmt::format("dispatch of chip orchestrator '{}' has no device=", callee),
                       c.span);
    }
    if (auto v = ConstValue(device)) {
      if (*v < 0) {
        throw ValueError(
            fmt::format("dispatch of '{}': device= is a negative constant ({})", callee, *v),
            c.span);
      }
      return DeviceSet::Of({*v});
    }
    if (device->kind() == NodeKind::kVar || device->kind() == NodeKind::kIterArg) {
      const auto* var = static_cast<const Var*>(device.get());
      for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
        if (!it->loop || it->loop->loop_var.get() != var) continue;
        Evaluate(*it);
        if (!it->devices) {
          throw ValueError(fmt::format("dispatch of '{}': device= loop variable '{}' {}", callee,
                                       var->name_hint, it->problem),
                           c.span);
        }
        return *it->devices;
      }
      throw ValueError(
          fmt::format("dispatch of '{}': device= variable '{}' is not the induction variable of an "
                      "enclosing pl.range loop",
                      callee, var->name_hint),
          c.span);
    }
    throw ValueError(
        fmt::format("dispatch of '{}': device= must be a non-negative integer constant or a "
                    "pl.range loop variable, got a {} expression",
                    callee, ir::NodeKindName(device->kind())),
        c.span);
  }

  ExprPtr Bound(const ExprPtr& e) const {
    if (!IsPlainVar(e)) return e;
    const ExprPtr* bound = st_.loop_bounds.Find(static_cast<const Var*>(e.get()));
    return bound == nullptr ? e : *bound;
  }

  // Works out the coverage of a loop's induction variable on first use only: most
  // loops never feed a device=.
  void Evaluate(LoopFrame& frame) const {
    if (frame.evaluated) return;
    frame.evaluated = true;
    const ir::ForStmt& f = *frame.loop;
    ExprPtr start = f.start ? Bound(f.start) : nullptr;
    ExprPtr stop = Bound(f.stop);
    ExprPtr step = f.step ? Bound(f.step) : nullptr;
    std::optional<int64_t> a = start ? ConstValue(start) : std::optional<int64_t>(0);
    std::optional<int64_t> s = step ? ConstValue(step) : std::optional<int64_t>(1);
#if CDS_INJECT_BUG == 9
    s = 1;  // Injected: the step is ignored.
#endif
    if (IsWorldSizeCall(stop)) {
      if (a == 0 && s == 1) {
        frame.devices = DeviceSet::All();
      } else {
        frame.problem =
            "ranges over pld.system.world_size() with a start other than 0 or a step other than 1; "
            "its coverage "
            "is not expressible";
      }
      return;
    }
    std::optional<int64_t> b = ConstValue(stop);
    if (!a || !b || !s) {
      frame.problem =
          "has loop bounds that are neither integer constants nor pld.system.world_size()";
      return;
    }
    if (*s != 1) {
      frame.problem = fmt::format("iterates with a non-unit step ({}), which is not supported", *s);
      return;
    }
#if CDS_INJECT_BUG == 8
    b = *b + 1;  // Injected: pl.range(a, b) covers one device too many.
#endif
    if (*a < 0) {
      frame.problem = fmt::format("starts at a negative device id ({})", *a);
      return;
    }
    if (*b > *a && *b - *a > kMaxEnumeratedDevices) {
      frame.problem = fmt::format("covers {} devices, more than the {} this pass enumerates",
                                  *b - *a, kMaxEnumeratedDevices);
      return;
    }
    std::vector<int64_t> ids;
    for (int64_t i = *a; i < *b; ++i) ids.push_back(i);
    frame.devices = DeviceSet{false, std::move(ids)};
  }

  size_t NeedView(const CallPtr& c, size_t index, std::string_view role) {
    if (index < c->args.size()) {
      if (auto idx = ResolveView(st_, c->args[index])) return *idx;
    }
    throw ValueError(
        fmt::format("{}: the {} argument does not resolve to a window view (a pld.tensor.window "
                    "of a pld.tensor.alloc_window_buffer)",
                    c->OpName(), role),
        c->span);
  }

  void Link(size_t from, size_t to, const CallPtr& c, std::string_view from_role,
            std::string_view to_role) {
    st_.links.push_back(CollectiveLink{from, to, c, from_role, to_role});
  }

  void Collective(const CallPtr& c) {
    const std::string& op = c->OpName();
    if (op == ir::ops::kAllToAllV && !frames_.empty()) {
      throw ValueError(
          "pld.tensor.all_to_all_v is not supported inside a for/while loop of a host orchestrator",
          c->span);
    }
    if (op == ir::ops::kAllReduce) {
      size_t data = NeedView(c, 0, "data");
      if (c->args.size() >= 2) Link(data, NeedView(c, 1, "signal"), c, "data", "signal");
    } else if (op == ir::ops::kBroadcast || op == ir::ops::kReduceScatter) {
      size_t data = NeedView(c, 0, "data");
      Link(data, NeedView(c, 1, "signal"), c, "data", "signal");
    } else if (op == ir::ops::kBarrier) {
      Link(kNone, NeedView(c, 0, "signal"), c, "", "signal");
    } else if (op == ir::ops::kAllGather || op == ir::ops::kAllToAll) {
      size_t target = NeedView(c, 1, "target");
      Link(target, NeedView(c, 2, "signal"), c, "target", "signal");
    } else if (op == ir::ops::kAllToAllV) {
      size_t target = NeedView(c, 1, "target");
      size_t signal = NeedView(c, 2, "signal");
      size_t recv = NeedView(c, 4, "recv_counts");
      Link(target, signal, c, "target", "signal");
#if CDS_INJECT_BUG != 4
      Link(target, recv, c, "target", "recv_counts");
#endif
    }
  }

  HostState& st_;
  const std::unordered_set<std::string>& chip_orchs_;
  std::vector<LoopFrame> frames_;
};

// ---------------------------------------------------------------------------
// Sanity checks and step 4: merge.

void CheckAllocsHaveViews(const HostState& st) {
  for (const auto& alloc : st.allocs) {
    if (!alloc.has_view) {
      throw ValueError(
          fmt::format("window buffer '{}' has no pld.tensor.window materialisation (dead alloc)",
                      alloc.name),
          alloc.span);
    }
  }
}

void InheritCoverage(HostState& st) {
  for (const auto& link : st.links) {
    AllocInfo& to = st.allocs[link.to];
    if (link.from == kNone) {
      if (to.dispatch_cov.Empty()) {
#if CDS_INJECT_BUG == 5
        // Injected: an uncovered barrier signal is silently widened to all devices.
        to.inherited = DeviceSet::All();
        to.inherits = true;
        continue;
#endif
        throw ValueError(
            fmt::format(
                "{}: signal window buffer '{}' has no dispatch coverage of its own (a barrier "
                "passes no coverage on)",
                link.call->OpName(), to.name),
            link.call->span);
      }
      continue;
    }
    const AllocInfo& from = st.allocs[link.from];
    if (from.dispatch_cov.Empty()) {
      throw ValueError(
          fmt::format("{}: {} window buffer '{}' has no dispatch coverage to pass on to its {}",
                      link.call->OpName(), link.from_role, from.name, link.to_role),
          link.call->span);
    }
    // Only dispatch-derived coverage is handed on: no transitive chains.
    to.inherited = to.inherited.Merge(from.dispatch_cov);
    to.inherits = true;
  }
}

void MergeCoverage(HostState& st) {
  for (auto& alloc : st.allocs) {
    alloc.coverage = alloc.dispatch_cov.Merge(alloc.inherited);
    if (!alloc.coverage.Empty()) continue;
    if (!alloc.dispatched && !alloc.inherits) {
      throw ValueError(
          fmt::format("window buffer '{}' is not consumed by any chip orchestrator dispatch",
                      alloc.name),
          alloc.span);
    }
    throw ValueError(
        fmt::format("window buffer '{}' has an empty device coverage (its dispatches cover no "
                    "device)",
                    alloc.name),
        alloc.span);
  }
}

// ---------------------------------------------------------------------------
// Step 5: one WindowBuffer per alloc.

void BuildWindowBuffers(HostState& st) {
  for (auto& alloc : st.allocs) {
    auto wb = std::make_shared<ir::WindowBuffer>(alloc.var, ir::AllocSizeBytes(*alloc.call), false,
                                                 false);
    wb->span = alloc.span;
    alloc.wb = std::move(wb);
  }
}

// ---------------------------------------------------------------------------
// Step 6: retype every Var resolving to a view and re-mint its defining Call.

TypePtr WithoutWindow(const TypePtr& t) {
  if (!t || t->kind() != NodeKind::kDistributedTensorType) return t;
  const auto& d = static_cast<const ir::DistributedTensorType&>(*t);
  if (!d.window_buffer) return t;
  auto copy = std::make_shared<ir::DistributedTensorType>(d);
  copy->window_buffer = nullptr;
  return copy;
}

bool SameApartFromWindow(const TypePtr& a, const TypePtr& b) {
  if (a == b) return true;
  return ir::StructuralEqual(WithoutWindow(a), WithoutWindow(b));
}

// Rewrites uses and definitions of the view Vars; statements and expressions
// without any come back as the same pointer.
class ViewRetyper {
 public:
  explicit ViewRetyper(const HostState& st) {
    st.view_alloc.ForEach([&](const Var* var, size_t idx) {
      if (!var->type || var->type->kind() != NodeKind::kDistributedTensorType) return;
      auto type = std::make_shared<ir::DistributedTensorType>(
          static_cast<const ir::DistributedTensorType&>(*var->type));
#if CDS_INJECT_BUG == 6
      // Injected: each view gets its own copy of the WindowBuffer.
      type->window_buffer = std::make_shared<ir::WindowBuffer>(*st.allocs[idx].wb);
#else
      type->window_buffer = st.allocs[idx].wb;
#endif
      auto v = std::make_shared<Var>(var->name_hint, std::move(type));
      v->span = var->span;
      fresh_.Emplace(var, std::move(v));
    });
  }

  StmtPtr Rewrite(const StmtPtr& s) {
    if (!s) return s;
    switch (s->kind()) {
      case NodeKind::kSeqStmts: {
        auto seq = ir::As<ir::SeqStmts>(s);
        std::vector<StmtPtr> stmts;
        bool changed = false;
        for (size_t i = 0; i < seq->stmts.size(); ++i) {
          StmtPtr n = Rewrite(seq->stmts[i]);
          if (n != seq->stmts[i] && !changed) {
            changed = true;
            stmts.reserve(seq->stmts.size());
            stmts.assign(seq->stmts.begin(), seq->stmts.begin() + static_cast<std::ptrdiff_t>(i));
          }
          if (changed) stmts.push_back(std::move(n));
        }
        if (!changed) return s;
        return ir::Seq(std::move(stmts), s->span);
      }
      case NodeKind::kAssignStmt:
        return RewriteAssign(ir::As<ir::AssignStmt>(s));
      case NodeKind::kEvalStmt: {
        auto e = ir::As<ir::EvalStmt>(s);
        ExprPtr x = RewriteExpr(e->expr);
        if (x == e->expr) return s;
        return Rebuilt(e, [&](ir::EvalStmt& c) { c.expr = x; });
      }
      case NodeKind::kReturnStmt: {
        auto r = ir::As<ir::ReturnStmt>(s);
        std::vector<ExprPtr> values = r->values;
        if (!RewriteAll(values)) return s;
        return Rebuilt(r, [&](ir::ReturnStmt& c) { c.values = std::move(values); });
      }
      case NodeKind::kYieldStmt: {
        auto y = ir::As<ir::YieldStmt>(s);
        std::vector<ExprPtr> values = y->values;
        if (!RewriteAll(values)) return s;
        return Rebuilt(y, [&](ir::YieldStmt& c) { c.values = std::move(values); });
      }
      case NodeKind::kUnpackAssignStmt: {
        auto u = ir::As<ir::UnpackAssignStmt>(s);
        ExprPtr x = RewriteExpr(u->value);
        if (x == u->value) return s;
        return Rebuilt(u, [&](ir::UnpackAssignStmt& c) { c.value = x; });
      }
      case NodeKind::kSubscriptAssignStmt: {
        auto u = ir::As<ir::SubscriptAssignStmt>(s);
        ExprPtr t = RewriteExpr(u->target);
        ExprPtr x = RewriteExpr(u->value);
        if (t == u->target && x == u->value) return s;
        return Rebuilt(u, [&](ir::SubscriptAssignStmt& c) {
          c.target = t;
          c.value = x;
        });
      }
      case NodeKind::kForStmt: {
        // Loop-carried init values are left to the generic mutator's rules: an
        // IterArg is a definition and keeps its fields.
        auto f = ir::As<ir::ForStmt>(s);
        ExprPtr a = RewriteExpr(f->start), b = RewriteExpr(f->stop), c = RewriteExpr(f->step);
        StmtPtr body = Rewrite(f->body);
        if (a == f->start && b == f->stop && c == f->step && body == f->body) return s;
        return Rebuilt(f, [&](ir::ForStmt& n) {
          n.start = a;
          n.stop = b;
          n.step = c;
          n.body = body;
        });
      }
      case NodeKind::kWhileStmt: {
        auto w = ir::As<ir::WhileStmt>(s);
        ExprPtr cond = RewriteExpr(w->cond);
        StmtPtr body = Rewrite(w->body);
        if (cond == w->cond && body == w->body) return s;
        return Rebuilt(w, [&](ir::WhileStmt& n) {
          n.cond = cond;
          n.body = body;
        });
      }
      case NodeKind::kIfStmt: {
        auto i = ir::As<ir::IfStmt>(s);
        ExprPtr cond = RewriteExpr(i->cond);
        StmtPtr t = Rewrite(i->then_body), e = Rewrite(i->else_body);
        if (cond == i->cond && t == i->then_body && e == i->else_body) return s;
        return Rebuilt(i, [&](ir::IfStmt& n) {
          n.cond = cond;
          n.then_body = t;
          n.else_body = e;
        });
      }
      case NodeKind::kScopeStmt: {
        auto sc = ir::As<ir::ScopeStmt>(s);
        std::vector<ExprPtr> args = sc->args;
        bool changed = RewriteAll(args);
        ir::KwargList kwargs = sc->kwargs;
        changed |= RewriteKwargs(kwargs);
        StmtPtr body = Rewrite(sc->body);
        if (!changed && body == sc->body) return s;
        return Rebuilt(sc, [&](ir::ScopeStmt& n) {
          n.args = std::move(args);
          n.kwargs = std::move(kwargs);
          n.body = body;
        });
      }
      case NodeKind::kCommDomainScopeStmt: {
        auto sc = ir::As<ir::CommDomainScopeStmt>(s);
        StmtPtr body = Rewrite(sc->body);
        if (body == sc->body) return s;
        return Rebuilt(sc, [&](ir::CommDomainScopeStmt& n) { n.body = body; });
      }
      default:
        return s;
    }
  }

 private:
  template <typename T, typename F>
  static StmtPtr Rebuilt(const std::shared_ptr<const T>& n, F&& edit) {
    auto copy = std::make_shared<T>(*n);
    edit(*copy);
    return copy;
  }

  bool RewriteAll(std::vector<ExprPtr>& xs) {
    bool changed = false;
    for (auto& x : xs) {
      ExprPtr n = RewriteExpr(x);
      if (n != x) {
        x = std::move(n);
        changed = true;
      }
    }
    return changed;
  }

  bool RewriteKwargs(ir::KwargList& kwargs) {
    bool changed = false;
    for (auto& kv : kwargs) {
      if (auto* e = std::get_if<ExprPtr>(&kv.second)) {
        ExprPtr n = RewriteExpr(*e);
        if (n != *e) {
          *e = std::move(n);
          changed = true;
        }
      }
    }
    return changed;
  }

  ExprPtr RewriteExpr(const ExprPtr& e) {
    if (!e) return e;
    switch (e->kind()) {
      case NodeKind::kVar:
      case NodeKind::kIterArg: {
        const auto* var = static_cast<const Var*>(e.get());
        if (!IsRetypable(*var)) return e;
        const ExprPtr* fresh = fresh_.Find(var);
        return fresh == nullptr ? e : *fresh;
      }
      case NodeKind::kCall: {
        // Copy-on-first-change: most calls mention no view, and copying kwargs
        // (strings) for each of them dominated large programs.
        auto c = ir::As<Call>(e);
        std::shared_ptr<Call> copy;
        auto edit = [&]() -> Call& {
          if (!copy) copy = std::make_shared<Call>(*c);
          return *copy;
        };
        for (size_t i = 0; i < c->args.size(); ++i) {
          ExprPtr n = RewriteExpr(c->args[i]);
          if (n != c->args[i]) edit().args[i] = std::move(n);
        }
        for (size_t i = 0; i < c->kwargs.size(); ++i) {
          const auto* x = std::get_if<ExprPtr>(&c->kwargs[i].second);
          if (!x) continue;
          ExprPtr n = RewriteExpr(*x);
          if (n != *x) edit().kwargs[i].second = std::move(n);
        }
        for (size_t i = 0; i < c->attrs.size(); ++i) {
          ExprPtr n = RewriteExpr(c->attrs[i].second);
          if (n != c->attrs[i].second) edit().attrs[i].second = std::move(n);
        }
        if (!copy) return e;
        return copy;
      }
      case NodeKind::kMakeTuple: {
        auto t = ir::As<ir::MakeTuple>(e);
        std::shared_ptr<ir::MakeTuple> copy;
        for (size_t i = 0; i < t->elements.size(); ++i) {
          ExprPtr n = RewriteExpr(t->elements[i]);
          if (n == t->elements[i]) continue;
          if (!copy) copy = std::make_shared<ir::MakeTuple>(*t);
          copy->elements[i] = std::move(n);
        }
        if (!copy) return e;
        return copy;
      }
      case NodeKind::kBinaryExpr: {
        // Scalar arithmetic is everywhere in host code and never holds a view in a
        // well-typed program; only its operands can (types hold no view Vars).
        const auto& b = static_cast<const ir::BinaryExpr&>(*e);
        ExprPtr lhs = RewriteExpr(b.lhs), rhs = RewriteExpr(b.rhs);
        if (lhs == b.lhs && rhs == b.rhs) return e;
        auto copy = std::make_shared<ir::BinaryExpr>(b);
        copy->lhs = std::move(lhs);
        copy->rhs = std::move(rhs);
        return copy;
      }
      case NodeKind::kUnaryExpr: {
        const auto& u = static_cast<const ir::UnaryExpr&>(*e);
        ExprPtr x = RewriteExpr(u.operand);
        if (x == u.operand) return e;
        auto copy = std::make_shared<ir::UnaryExpr>(u);
        copy->operand = std::move(x);
        return copy;
      }
      case NodeKind::kTupleGetItem:
      case NodeKind::kSubscript:
      case NodeKind::kSlice:
        // Rare around views; the generic substitution is good enough here.
        return ir::Substitute(e, SubstitutionMap());
      default:
        return e;
    }
  }

  StmtPtr RewriteAssign(const std::shared_ptr<const ir::AssignStmt>& a) {
    const ExprPtr* fresh = IsRetypable(*a->var) ? fresh_.Find(a->var.get()) : nullptr;
    ExprPtr value = RewriteExpr(a->value);
    if (fresh == nullptr) {
      if (value == a->value) return a;
      return Rebuilt(a, [&](ir::AssignStmt& n) { n.value = value; });
    }
    VarPtr var = std::static_pointer_cast<const Var>(*fresh);
    if (value->kind() == NodeKind::kCall) {
      auto call = ir::As<Call>(value);
      const std::string& op = call->OpName();
      // Only the back-reference is added; a real shape/dtype disagreement stays
      // for the verifier to report.
      if ((op == ir::ops::kWindow || InPlaceSourceArg(op) >= 0) &&
          SameApartFromWindow(ir::As<Call>(a->value)->type, a->var->type)) {
#if CDS_INJECT_BUG != 11
        auto minted = std::make_shared<Call>(*call);
        minted->type = var->type;
        value = std::move(minted);
#endif
      }
    }
    auto stmt = std::make_shared<ir::AssignStmt>(std::move(var), std::move(value));
    stmt->span = a->span;
    return stmt;
  }

  // Only DistributedTensor-typed Vars get a fresh Var (see the constructor): a
  // look at the type spares most statements the table lookup.
  static bool IsRetypable(const Var& v) {
    return v.type && v.type->kind() == NodeKind::kDistributedTensorType;
  }

  // ir::Substitute's map, built only when an expression kind needs it.
  const ir::VarMap& SubstitutionMap() {
    if (!substitution_map_) {
      substitution_map_.emplace();
      fresh_.ForEach([&](const Var* v, const ExprPtr& x) { substitution_map_->emplace(v, x); });
    }
    return *substitution_map_;
  }

  VarTable<ExprPtr> fresh_;
  std::optional<ir::VarMap> substitution_map_;
};

// ---------------------------------------------------------------------------
// Step 7: cluster allocs into comm domains and wrap the body.

struct Domain {
  DeviceSet devices;
  std::vector<WindowBufferPtr> slots;
  std::unordered_set<std::string> names;
  Span span;
};

struct DeviceSetHash {
  size_t operator()(const DeviceSet& d) const {
    size_t h = d.all ? 0x9e3779b97f4a7c15ull : 0x12345;
    for (int64_t id : d.ids) h = h * 1000003u ^ std::hash<int64_t>()(id);
    return h;
  }
};

std::vector<Domain> ClusterAllocs(const HostState& st) {
  std::vector<Domain> domains;
  std::unordered_map<DeviceSet, size_t, DeviceSetHash> by_devices;
  for (const auto& alloc : st.allocs) {
    auto [it, inserted] = by_devices.emplace(alloc.coverage, domains.size());
    if (inserted) domains.push_back(Domain{alloc.coverage, {}, {}, alloc.span});
    Domain& d = domains[it->second];
#if CDS_INJECT_BUG != 12
    if (!d.names.insert(alloc.name).second) {
      throw ValueError(fmt::format("duplicate window buffer name '{}' in comm domain 'comm_d{}'",
                                   alloc.name, it->second),
                       alloc.span);
    }
#endif
    d.slots.push_back(alloc.wb);
  }
#if CDS_INJECT_BUG == 3
  // Injected: domains ordered by their devices instead of by first alloc.
  std::stable_sort(domains.begin(), domains.end(), [](const Domain& x, const Domain& y) {
    return x.devices.ToString() < y.devices.ToString();
  });
#endif
  return domains;
}

StmtPtr WrapInScopes(const StmtPtr& body, const std::vector<Domain>& domains) {
  StmtPtr inner = body->kind() == NodeKind::kSeqStmts ? body : ir::Seq({body}, body->span);
  for (size_t i = domains.size(); i-- > 0;) {
    const Domain& d = domains[i];
    auto scope = std::make_shared<ir::CommDomainScopeStmt>(fmt::format("comm_d{}", i), d.devices,
                                                           d.slots, ir::KwargList{}, inner);
    scope->span = d.span;
    inner = ir::Seq({scope}, d.span);
  }
  return inner;
}

bool AlreadyWrapped(const StmtPtr& body) {
#if CDS_INJECT_BUG == 13
  return false;  // Injected: a wrapped body is wrapped again.
#endif
  if (!body) return false;
  if (body->kind() == NodeKind::kCommDomainScopeStmt) return true;
  if (body->kind() != NodeKind::kSeqStmts) return false;
  const auto& stmts = static_cast<const ir::SeqStmts&>(*body).stmts;
  return !stmts.empty() && stmts.front()->kind() == NodeKind::kCommDomainScopeStmt;
}

ir::FunctionPtr MaterializeHost(const ir::FunctionPtr& f,
                                const std::unordered_set<std::string>& chip_orchs) {
  if (!f->body || AlreadyWrapped(f->body)) return f;
  HostState st;
  Collector collector(st);
  collector.Walk(f->body);
  if (st.allocs.empty()) {
    // Nothing to materialize, but the sanity rules still hold: a bad device= or a
    // collective on something that is not a window view is rejected here too,
    // exactly as it would be beside an alloc. A valid body comes back as is.
    Scanner scanner(st, chip_orchs);
    scanner.Walk(f->body);
    return f;
  }
  CheckAllocsHaveViews(st);

  Scanner scanner(st, chip_orchs);
  scanner.Walk(f->body);
  InheritCoverage(st);
  MergeCoverage(st);
  BuildWindowBuffers(st);

  ViewRetyper retyper(st);
  StmtPtr body = retyper.Rewrite(f->body);
  std::vector<Domain> domains = ClusterAllocs(st);

  auto copy = std::make_shared<ir::Function>(*f);
  copy->body = WrapInScopes(body, domains);
  return copy;
}

}  // namespace

ir::ProgramPtr MaterializeCommDomainScopes(const ir::ProgramPtr& program) {
  if (!program) return program;
  std::unordered_set<std::string> chip_orchs;
  for (const auto& f : program->functions) {
    if (f->IsChipOrchestrator()) chip_orchs.insert(f->name);
  }
  std::vector<ir::FunctionPtr> functions;
  functions.reserve(program->functions.size());
  bool changed = false;
  for (const auto& f : program->functions) {
    ir::FunctionPtr out = f->IsHostOrchestrator() ? MaterializeHost(f, chip_orchs) : f;
    changed |= out != f;
    functions.push_back(std::move(out));
  }
#if CDS_INJECT_BUG == 7
  // Injected: chip orchestrator parameters get a back-reference too.
  WindowBufferPtr stamp;
  for (const auto& f : functions) {
    if (f->IsHostOrchestrator() && AlreadyWrapped(f->body)) {
      stamp = ir::As<ir::CommDomainScopeStmt>(ir::Flatten(f->body).front())->slots.front();
      break;
    }
  }
  for (auto& f : functions) {
    if (!stamp || !f->IsChipOrchestrator()) continue;
    auto copy = std::make_shared<ir::Function>(*f);
    for (auto& p : copy->params) {
      if (p->type->kind() != NodeKind::kDistributedTensorType) continue;
      auto t = std::make_shared<ir::DistributedTensorType>(
          static_cast<const ir::DistributedTensorType&>(*p->type));
      t->window_buffer = stamp;
      p = std::make_shared<Var>(p->name_hint, std::move(t));
    }
    f = std::move(copy);
  }
#endif
  if (!changed) return program;
  auto result =
      std::make_shared<ir::Program>(program->name, program->dynamic_dims, std::move(functions));
  result->span = program->span;
  return result;
}

}  // namespace cds::pass
