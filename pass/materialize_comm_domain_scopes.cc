#include "pass/materialize_comm_domain_scopes.h"

#include <cstdint>
#include <deque>
#include <exception>
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
#include "ir/ptr_table.h"
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

// The names of the chip orchestrators: a handful in a program, so comparing a
// dispatch's callee with each beats hashing it.
class NameSet {
 public:
  void Insert(const std::string& n) {
    if (!Contains(n)) names_.push_back(n);
  }
  bool Contains(const std::string& n) const {
    for (const auto& x : names_) {
      if (x == n) return true;
    }
    return false;
  }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

// ---------------------------------------------------------------------------
// Per-function analysis state

// The device sets of one host orchestrator, interned: an alloc's coverage is an
// index, so it costs no allocation per alloc, merging repeats nothing already
// merged, and equal sets have equal indices (clustering compares indices).
class DeviceSetPool {
 public:
  using Id = uint32_t;
  static constexpr Id kEmpty = 0;

  DeviceSetPool() { Intern(DeviceSet::Of({})); }
  Id Intern(const DeviceSet& d) {
    auto it = ids_.find(d);
    if (it != ids_.end()) return it->second;
    const Id id = static_cast<Id>(sets_.size());
    sets_.push_back(d);
    ids_.emplace(d, id);
    return id;
  }
  const DeviceSet& operator[](Id id) const { return sets_[id]; }
  size_t size() const { return sets_.size(); }
  // DeviceSet::Merge on interned sets.
  Id Merge(Id a, Id b) {
    const uint64_t key = (static_cast<uint64_t>(a) << 32) | b;
    auto it = merged_.find(key);
    if (it != merged_.end()) return it->second;
    const Id id = Intern(sets_[a].Merge(sets_[b]));
    merged_.emplace(key, id);
    return id;
  }

 private:
  struct Hash {
    size_t operator()(const DeviceSet& d) const {
      size_t h = d.all ? 0x9e3779b97f4a7c15ull : 0x12345;
      for (int64_t id : d.ids) h = h * 1000003u ^ std::hash<int64_t>()(id);
      return h;
    }
  };
  std::deque<DeviceSet> sets_;  // stable references
  std::unordered_map<DeviceSet, Id, Hash> ids_;
  std::unordered_map<uint64_t, Id> merged_;
};
using DeviceSetId = DeviceSetPool::Id;

struct AllocInfo {
  // The alloc statement (`x = pld.tensor.alloc_window_buffer(...)`), owned by the
  // input program: no reference count to touch per alloc.
  const ir::AssignStmt* stmt = nullptr;
  std::string_view name;  // the logical alloc name (name= kwarg), held by the call or the Var
  Span span;
  bool has_view = false;
  bool dispatched = false;  // some dispatch passed one of its views
  bool inherits = false;
  DeviceSetId dispatch_cov = DeviceSetPool::kEmpty;  // from dispatches only
  DeviceSetId inherited = DeviceSetPool::kEmpty;  // from collectives pairing it with a data/target
  DeviceSetId coverage = DeviceSetPool::kEmpty;   // merged
  ir::NodeRef<ir::WindowBuffer> wb;  // made by this pass; shared once complete
  // Fused walk: AllocSizeBytes computed while the alloc's nodes are in cache, or
  // what it threw (rethrown by SizeWindowBuffers, in alloc order as before).
  ExprPtr size;
  std::exception_ptr size_error;
#if CDS_INJECT_BUG == 6
  std::vector<ir::NodeRef<ir::WindowBuffer>> copies;
#endif

  const VarPtr& var() const { return stmt->var; }
  const Call& call() const { return static_cast<const Call&>(*stmt->value); }
  // The retyped copy of the last view type seen (an alias has its view's type
  // object): views of one alloc with one type object share one new type object.
  const ir::Type* old_view_type = nullptr;
  TypePtr new_view_type;
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

// Every assignment and every Var use of a host body is looked up by Var address.
template <typename V>
using VarTable = ir::PtrTable<V>;

// A Var resolving to a view: its alloc and (DistributedTensor-typed Vars only)
// the fresh Var that replaces it.
struct ViewInfo {
  size_t alloc = kNone;
  ExprPtr fresh;
};

struct HostState {
  std::deque<AllocInfo> allocs;         // source order (a deque: no moves as it grows)
  DeviceSetPool device_sets;
  VarTable<size_t> alloc_of_ptr;        // alloc LHS -> alloc
  VarTable<ViewInfo> view_alloc;        // every Var resolving to a view
  VarTable<ExprPtr> loop_bounds;        // n = pld.world_size() / n = 4
  std::vector<CollectiveLink> links;    // source order
  size_t fresh_count = 0;               // view Vars with a fresh Var
  // Loop-carried values whose init mentions a view (`init_values=(x[0],)`): the
  // IterArg is a definition, so a new init means a new IterArg, and the body's
  // uses of the old one must follow it.
  VarTable<ExprPtr> carried;
  size_t carried_count = 0;

  // Fused walk (see HostWalker): the tables are still growing while they are
  // read, so every lookup of the scan and the retype that finds nothing records
  // its key. If one of these keys is in a table at the end, a use came before its
  // definition in walk order, and the three-walk path runs instead.
  bool fused = false;
  std::vector<const Var*> misses;

  void Missed(const Var* v) {
    if (fused) misses.push_back(v);
  }
  bool AnyLateDefinition() const {
    for (const Var* v : misses) {
      if (view_alloc.Find(v) || loop_bounds.Find(v)) return true;
    }
    return false;
  }
};

bool IsPlainVar(const ExprPtr& e) { return e && e->kind() == NodeKind::kVar; }

std::optional<size_t> ResolveView(const HostState& st, const ExprPtr& e) {
  if (!IsPlainVar(e)) return std::nullopt;
  const ViewInfo* view = st.view_alloc.Find(static_cast<const Var*>(e.get()));
  if (view == nullptr) return std::nullopt;
  return view->alloc;
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
// Step 5 (WindowBuffers) and the fresh Vars of step 6, made as early as the walk
// that needs them allows.

// One WindowBuffer per alloc, made with the alloc during the fused walk; the size
// is filled in by SizeWindowBuffers once the walk's errors are reported (it may
// throw, and the order of reported errors must not change). Nobody outside the
// pass sees a WindowBuffer before then.
void MakeUnsizedWindowBuffer(AllocInfo& alloc) {
  alloc.wb = ir::MakeNode<ir::WindowBuffer>(alloc.var(), nullptr, false, false);
  alloc.wb->set_span(alloc.span);
}

// The retyped replacement of `var`, a view of alloc `idx`; only DistributedTensor
// Vars are retyped.
void AddFreshVar(HostState& st, const Var* var, ViewInfo& view) {
  if (!var->type || var->type->kind() != NodeKind::kDistributedTensorType) return;
  AllocInfo& alloc = st.allocs[view.alloc];
  TypePtr new_type;
#if CDS_INJECT_BUG == 6
  // Injected: each view gets its own copy of the WindowBuffer.
  auto type = ir::MakeNode<ir::DistributedTensorType>(
      static_cast<const ir::DistributedTensorType&>(*var->type));
  auto copy = ir::MakeNode<ir::WindowBuffer>(*alloc.wb);
  alloc.copies.push_back(copy);
  type->window_buffer = std::move(copy);
  new_type = std::move(type);
#else
  if (alloc.old_view_type == var->type.get()) {
    new_type = alloc.new_view_type;
  } else {
    auto type = ir::MakeNode<ir::DistributedTensorType>(
        static_cast<const ir::DistributedTensorType&>(*var->type));
    type->window_buffer = alloc.wb;
    new_type = std::move(type);
    alloc.old_view_type = var->type.get();
    alloc.new_view_type = new_type;
  }
#endif
  auto v = ir::MakeNode<Var>(var->name_hint, std::move(new_type));
  v->set_span(var->span());
  view.fresh = std::move(v);
  ++st.fresh_count;
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
      Inspect(static_cast<const ir::AssignStmt&>(*s));
      return;
    }
    detail::ForEachSubBody(*s, [this](const StmtPtr& c) { Walk(c); });
  }

  // For a statement a few ahead in the walk (its value node fetched already):
  // requests the table slot its definition will go to.
  void PrefetchSlots(const ir::Stmt& s) const {
    if (s.kind() != NodeKind::kAssignStmt) return;
    const auto& a = static_cast<const ir::AssignStmt&>(s);
    const ir::Expr& value = *a.value;
    if (value.kind() == NodeKind::kVar) {
      st_.view_alloc.PrefetchSlot(a.var.get());
    } else if (value.kind() == NodeKind::kCall) {
      const std::string& op = static_cast<const Call&>(value).OpName();
      if (op == ir::ops::kAllocWindowBuffer) {
        st_.alloc_of_ptr.PrefetchSlot(a.var.get());
      } else if (op == ir::ops::kWindow || InPlaceSourceArg(op) >= 0) {
        st_.view_alloc.PrefetchSlot(a.var.get());
      }
    }
  }

  void Inspect(const ir::AssignStmt& a) {
    const ExprPtr& value = a.value;
    const Var* lhs = a.var.get();
    switch (value->kind()) {
      case NodeKind::kConstInt:
        st_.loop_bounds.Insert(lhs, value);
        return;
      case NodeKind::kVar:
        AliasOf(lhs, value);
        return;
      case NodeKind::kCall:
        break;
      default:
        return;
    }
    const auto& call = static_cast<const Call&>(*value);
    const std::string& op = call.OpName();
    if (op.empty()) return;
    if (op == ir::ops::kAllocWindowBuffer) {
      AddAlloc(a);
    } else if (op == ir::ops::kWindow) {
      AddView(lhs, call);
    } else if (op == ir::ops::kWorldSize) {
      st_.loop_bounds.Insert(lhs, value);
    } else if (int src = InPlaceSourceArg(op);
               src >= 0 && static_cast<size_t>(src) < call.args.size()) {
      AliasOf(lhs, call.args[src]);
    }
  }

 private:
  void AddAlloc(const ir::AssignStmt& a) {
    AllocInfo info;
    info.stmt = &a;
    const Call& call = info.call();
    const ir::AttrValue* name = ir::FindKwarg(call.kwargs, "name");
    info.name = name && std::holds_alternative<std::string>(*name)
                    ? std::string_view(std::get<std::string>(*name))
                    : std::string_view(a.var->name_hint);
    info.span = call.span().IsKnown() ? call.span() : a.span();
    st_.alloc_of_ptr.Insert(a.var.get(), st_.allocs.size());
    st_.allocs.push_back(info);
    if (st_.fused) {
      AllocInfo& alloc = st_.allocs.back();
      MakeUnsizedWindowBuffer(alloc);
      if (!call.args.empty() && call.args[0]) {  // else left to SizeWindowBuffers
        try {
          alloc.size = ir::AllocSizeBytes(call);
        } catch (...) {
          alloc.size_error = std::current_exception();
        }
      }
    }
  }

  void AddView(const Var* lhs, const Call& call) {
    if (call.args.empty() || !IsPlainVar(call.args[0])) return;
    const size_t* idx = st_.alloc_of_ptr.Find(static_cast<const Var*>(call.args[0].get()));
    if (idx == nullptr) return;
    AllocInfo& alloc = st_.allocs[*idx];
    alloc.has_view = true;
    NewView(lhs, *idx);
  }

  void AliasOf(const Var* lhs, const ExprPtr& source) {
#if CDS_INJECT_BUG == 10
    // Injected: aliases and in-place results are not resolved.
    return;
#endif
    if (auto idx = ResolveView(st_, source)) NewView(lhs, *idx);
  }

  void NewView(const Var* lhs, size_t idx) {
    auto [view, fresh] = st_.view_alloc.FindOrInsert(lhs);
    if (!fresh) return;  // the first binding of a Var wins
    view->alloc = idx;
    if (st_.fused) AddFreshVar(st_, lhs, *view);
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
  std::optional<DeviceSetId> devices_id;  // `devices`, interned
};

class Scanner {
 public:
  Scanner(HostState& st, const NameSet& chip_orchs)
      : st_(st), chip_orchs_(chip_orchs) {}

  void Walk(const StmtPtr& s) {
    if (!s) return;
    ScanStmt(*s);
    switch (s->kind()) {
      case NodeKind::kForStmt:
        EnterFor(static_cast<const ir::ForStmt&>(*s));
        Walk(static_cast<const ir::ForStmt&>(*s).body);
        ExitLoop();
        return;
      case NodeKind::kWhileStmt:
        EnterWhile();
        Walk(static_cast<const ir::WhileStmt&>(*s).body);
        ExitLoop();
        return;
      default:
        detail::ForEachSubBody(*s, [this](const StmtPtr& c) { Walk(c); });
    }
  }

  // The pieces of Walk, for the fused walk, which calls them in the same order.
  // There an error is kept (the first one, as Walk would throw it) instead of
  // thrown: a dead alloc found later in the walk must still be reported first.
  void ScanStmt(const ir::Stmt& s) {
    if (!st_.fused) {
      ScanStmtExprs(s);
      return;
    }
    if (error_) return;
    try {
      ScanStmtExprs(s);
    } catch (const ValueError&) {
      error_ = std::current_exception();
    }
  }
  void EnterFor(const ir::ForStmt& f) {
    frames_.emplace_back();
    frames_.back().loop = &f;
  }
  void EnterWhile() { frames_.emplace_back(); }
  void ExitLoop() { frames_.pop_back(); }
  void RethrowError() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void ScanStmtExprs(const ir::Stmt& s) {
    detail::ForEachStmtExpr(s, [this](const ExprPtr& e) { Scan(e); });
    if (s.kind() == NodeKind::kForStmt) RejectCarriedViews(static_cast<const ir::ForStmt&>(s));
  }

  // A view seeding a loop-carried value would give the IterArg (typed like its
  // init, also by the parser) the window's type in every iteration, although later
  // iterations carry whatever the body yields; the pass does not guess which
  // buffer that is (docs/pass.md). A view inside a list would retype the list.
  void RejectCarriedViews(const ir::ForStmt& f) {
    for (const auto& ia : f.iter_args) {
      const Var* view_var = CarriedView(ia->init_value);
      if (view_var == nullptr) continue;
      const AllocInfo& alloc = st_.allocs[st_.view_alloc.Find(view_var)->alloc];
      // The loop's span: a Var's own span is its definition, not this use.
      throw ValueError(
          fmt::format("window view '{}' of window buffer '{}' seeds the loop-carried value '{}' "
                      "(init_values); a view cannot be carried by a loop",
                      view_var->name_hint, alloc.name, ia->name_hint),
          f.span());
    }
  }

  const Var* CarriedView(const ExprPtr& e) {
    if (!e) return nullptr;
    if (e->kind() == NodeKind::kMakeTuple) {
      for (const auto& x : static_cast<const ir::MakeTuple&>(*e).elements) {
        if (const Var* v = CarriedView(x)) return v;
      }
      return nullptr;
    }
    return Resolve(e) ? static_cast<const Var*>(e.get()) : nullptr;
  }

  void Scan(const ExprPtr& e) {
    if (!e) return;
    const NodeKind k = e->kind();
    if (k == NodeKind::kCall) {
      const auto& c = static_cast<const Call&>(*e);
      if (c.op && c.op->kind() == NodeKind::kGlobalVar) {
        const std::string& callee = static_cast<const ir::GlobalVar&>(*c.op).name;
        if (chip_orchs_.Contains(callee)) Dispatch(c, callee);
      } else if (IsHostCollective(c.OpName())) {
        Collective(ir::PtrCast<const Call>(e));
      }
    } else if (k <= NodeKind::kConstString) {
      return;  // Var-like leaves and constants
    }
    detail::ForEachSubExpr(*e, [this](const ExprPtr& x) { Scan(x); });
  }

  std::optional<size_t> Resolve(const ExprPtr& e) {
    if (!IsPlainVar(e)) return std::nullopt;
    const auto* var = static_cast<const Var*>(e.get());
    const ViewInfo* view = st_.view_alloc.Find(var);
    if (view == nullptr) {
      st_.Missed(var);
      return std::nullopt;
    }
    return view->alloc;
  }

  void Dispatch(const Call& c, const std::string& callee) {
    DeviceSetPool& pool = st_.device_sets;
    const DeviceSetId devices = DeviceOf(c, callee);
    for (const auto& arg : c.args) {
      if (auto idx = Resolve(arg)) {
        AllocInfo& alloc = st_.allocs[*idx];
        alloc.dispatched = true;
        const DeviceSet& cov = pool[alloc.dispatch_cov];
#if CDS_INJECT_BUG == 1
        // Injected: ALL does not absorb; only explicit ids are unioned.
        DeviceSet merged = DeviceSet::Of(cov.ids).Merge(DeviceSet::Of(pool[devices].ids));
        merged.all = cov.all && pool[devices].all;
        if (merged.all) merged.ids.clear();
        alloc.dispatch_cov = pool.Intern(merged);
#elif CDS_INJECT_BUG == 2
        // Injected: subsets are not unioned; the last dispatch wins.
        alloc.dispatch_cov = cov.all ? alloc.dispatch_cov : devices;
#else
        // Most dispatches repeat coverage the alloc already has (equal sets have
        // equal ids).
        if (!cov.all && alloc.dispatch_cov != devices) {
          alloc.dispatch_cov = pool.Merge(alloc.dispatch_cov, devices);
        }
#endif
      }
    }
  }

  // The interned device set of a dispatch (a loop's is interned once per loop).
  DeviceSetId DeviceOf(const Call& c, const std::string& callee) {
    ExprPtr device = ir::FindAttr(c.attrs, "device");
    if (!device) {
      throw ValueError(fmt::format("dispatch of chip orchestrator '{}' has no device=", callee),
                       c.span());
    }
    if (auto v = ConstValue(device)) {
      if (*v < 0) {
        throw ValueError(
            fmt::format("dispatch of '{}': device= is a negative constant ({})", callee, *v),
            c.span());
      }
      constant_.all = false;
      constant_.ids.assign(1, *v);  // no allocation per dispatch
      return st_.device_sets.Intern(constant_);
    }
    if (device->kind() == NodeKind::kVar || device->kind() == NodeKind::kIterArg) {
      const auto* var = static_cast<const Var*>(device.get());
      for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
        if (!it->loop || it->loop->loop_var.get() != var) continue;
        Evaluate(*it);
        if (!it->devices) {
          throw ValueError(fmt::format("dispatch of '{}': device= loop variable '{}' {}", callee,
                                       var->name_hint, it->problem),
                           c.span());
        }
        if (!it->devices_id) it->devices_id = st_.device_sets.Intern(*it->devices);
        return *it->devices_id;
      }
      throw ValueError(
          fmt::format("dispatch of '{}': device= variable '{}' is not the induction variable of an "
                      "enclosing pl.range loop",
                      callee, var->name_hint),
          c.span());
    }
    throw ValueError(
        fmt::format("dispatch of '{}': device= must be a non-negative integer constant or a "
                    "pl.range loop variable, got a {} expression",
                    callee, ir::NodeKindName(device->kind())),
        c.span());
  }

  ExprPtr Bound(const ExprPtr& e) const {
    if (!IsPlainVar(e)) return e;
    const auto* var = static_cast<const Var*>(e.get());
    const ExprPtr* bound = st_.loop_bounds.Find(var);
    if (bound == nullptr) {
      st_.Missed(var);
      return e;
    }
    return *bound;
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
      if (auto idx = Resolve(c->args[index])) return *idx;
    }
    throw ValueError(
        fmt::format("{}: the {} argument does not resolve to a window view (a pld.tensor.window "
                    "of a pld.tensor.alloc_window_buffer)",
                    c->OpName(), role),
        c->span());
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
          c->span());
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
  const NameSet& chip_orchs_;
  std::vector<LoopFrame> frames_;
  std::exception_ptr error_;  // fused walk only
  DeviceSet constant_;        // DeviceOf's result for a constant device=
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
    DeviceSetPool& pool = st.device_sets;
    AllocInfo& to = st.allocs[link.to];
    if (link.from == kNone) {
      if (pool[to.dispatch_cov].Empty()) {
#if CDS_INJECT_BUG == 5
        // Injected: an uncovered barrier signal is silently widened to all devices.
        to.inherited = pool.Intern(DeviceSet::All());
        to.inherits = true;
        continue;
#endif
        throw ValueError(
            fmt::format(
                "{}: signal window buffer '{}' has no dispatch coverage of its own (a barrier "
                "passes no coverage on)",
                link.call->OpName(), to.name),
            link.call->span());
      }
      continue;
    }
    const AllocInfo& from = st.allocs[link.from];
    if (pool[from.dispatch_cov].Empty()) {
      throw ValueError(
          fmt::format("{}: {} window buffer '{}' has no dispatch coverage to pass on to its {}",
                      link.call->OpName(), link.from_role, from.name, link.to_role),
          link.call->span());
    }
    // Only dispatch-derived coverage is handed on: no transitive chains.
    to.inherited = pool.Merge(to.inherited, from.dispatch_cov);
    to.inherits = true;
  }
}

void MergeCoverage(HostState& st) {
  for (auto& alloc : st.allocs) {
    alloc.coverage = st.device_sets.Merge(alloc.dispatch_cov, alloc.inherited);
    if (!st.device_sets[alloc.coverage].Empty()) continue;
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
    auto wb = ir::MakeNode<ir::WindowBuffer>(alloc.var(), ir::AllocSizeBytes(alloc.call()),
                                                 false, false);
    wb->set_span(alloc.span);
    alloc.wb = std::move(wb);
  }
}

// The fused walk's WindowBuffers exist already (MakeUnsizedWindowBuffer); their
// sizes are computed here, alloc by alloc, as BuildWindowBuffers does.
void SizeWindowBuffers(HostState& st) {
  for (auto& alloc : st.allocs) {
    if (alloc.size_error) std::rethrow_exception(alloc.size_error);
    if (!alloc.size) alloc.size = ir::AllocSizeBytes(alloc.call());  // pure: same result
    const ExprPtr& size = alloc.size;
    alloc.wb->size = size;
#if CDS_INJECT_BUG == 6
    for (const auto& wb : alloc.copies) wb->size = size;
#endif
  }
}

// ---------------------------------------------------------------------------
// Step 6: retype every Var resolving to a view and re-mint its defining Call.

TypePtr WithoutWindow(const TypePtr& t) {
  if (!t || t->kind() != NodeKind::kDistributedTensorType) return t;
  const auto& d = static_cast<const ir::DistributedTensorType&>(*t);
  if (!d.window_buffer) return t;
  auto copy = ir::MakeNode<ir::DistributedTensorType>(d);
  copy->window_buffer = nullptr;
  return copy;
}

bool SameApartFromWindow(const TypePtr& a, const TypePtr& b) {
  if (a == b) return true;
  return ir::StructuralEqual(WithoutWindow(a), WithoutWindow(b));
}

// ir::Substitute with the retyper's table (and its misses recorded): a new
// mutator per expression, as ir::Substitute makes one per call.
class FreshSubstituter final : public ir::IRMutator {
 public:
  explicit FreshSubstituter(HostState& st) : st_(st) {}
  ir::NodePtr MutateVar(const ir::NodeRef<const Var>& n) override { return Lookup(n); }
  ir::NodePtr MutateIterArg(const ir::NodeRef<const ir::IterArg>& n) override {
    return Lookup(n);
  }

 private:
  ir::NodePtr Lookup(const VarPtr& v) {
    if (st_.carried_count != 0) {
      if (const ExprPtr* carried = st_.carried.Find(v.get())) return *carried;
    }
    const ViewInfo* view = st_.view_alloc.Find(v.get());
    if (view != nullptr && view->fresh) return view->fresh;
    st_.Missed(v.get());
    return v;
  }
  HostState& st_;
};

// Rewrites uses and definitions of the view Vars; statements and expressions
// without any come back as the same pointer.
//
// Two modes. Three-walk (no collector/scanner): the collect and the scan have run
// over the whole body and the constructor makes every fresh Var up front. Fused
// (HostState::fused, with a collector and a scanner): this walk is the only one;
// each statement is first collected and scanned (in the pre-order of Collector::Walk
// and Scanner::Walk) and then rewritten, fresh Vars being made as views are
// defined. In SSA form every definition precedes its uses in that order, so each
// lookup finds what the complete tables would give; HostState::misses catches any
// program where it would not.
class ViewRetyper {
 public:
  ViewRetyper(HostState& st, Collector* collector = nullptr, Scanner* scanner = nullptr)
      : st_(st), collector_(collector), scanner_(scanner) {
    if (collector_ != nullptr) return;
    st.view_alloc.ForEach(
        [&](const void* var, ViewInfo& view) { AddFreshVar(st, static_cast<const Var*>(var), view); });
  }

  StmtPtr Rewrite(const StmtPtr& s) {
    if (!s) return s;
    if (collector_ != nullptr) {
      if (s->kind() == NodeKind::kAssignStmt) {
        collector_->Inspect(static_cast<const ir::AssignStmt&>(*s));
      }
      scanner_->ScanStmt(*s);
    }
    switch (s->kind()) {
      case NodeKind::kSeqStmts: {
        const auto& seq = static_cast<const ir::SeqStmts&>(*s).stmts;
        const size_t n = seq.size();
        std::vector<StmtPtr> stmts;
        bool changed = false;
        for (size_t i = 0; i < n; ++i) {
          // The walk is otherwise one cache miss after another on bodies larger
          // than the cache: fetch the statements ahead while this one is handled.
          detail::PrefetchAhead(seq, i);
          if (collector_ != nullptr && i + 4 < n) collector_->PrefetchSlots(*seq[i + 4]);
          StmtPtr r = Rewrite(seq[i]);
          if (r != seq[i] && !changed) {
            changed = true;
            stmts.reserve(n);
            stmts.assign(seq.begin(), seq.begin() + static_cast<std::ptrdiff_t>(i));
          }
          if (changed) stmts.push_back(std::move(r));
        }
        if (!changed) return s;
        return ir::Seq(std::move(stmts), s->span());
      }
      case NodeKind::kAssignStmt:
        return RewriteAssign(s, static_cast<const ir::AssignStmt&>(*s));
      case NodeKind::kEvalStmt: {
        const auto& e = static_cast<const ir::EvalStmt&>(*s);
        ExprPtr x = RewriteExpr(e.expr);
        if (x == e.expr) return s;
        return Rebuilt(e, [&](ir::EvalStmt& c) { c.expr = x; });
      }
      case NodeKind::kReturnStmt: {
        const auto& r = static_cast<const ir::ReturnStmt&>(*s);
        std::vector<ExprPtr> values = r.values.ToVector();
        if (!RewriteAll(values)) return s;
        return Rebuilt(r, [&](ir::ReturnStmt& c) { c.values = std::move(values); });
      }
      case NodeKind::kYieldStmt: {
        const auto& y = static_cast<const ir::YieldStmt&>(*s);
        std::vector<ExprPtr> values = y.values.ToVector();
        if (!RewriteAll(values)) return s;
        return Rebuilt(y, [&](ir::YieldStmt& c) { c.values = std::move(values); });
      }
      case NodeKind::kUnpackAssignStmt: {
        const auto& u = static_cast<const ir::UnpackAssignStmt&>(*s);
        ExprPtr x = RewriteExpr(u.value);
        if (x == u.value) return s;
        return Rebuilt(u, [&](ir::UnpackAssignStmt& c) { c.value = x; });
      }
      case NodeKind::kSubscriptAssignStmt: {
        const auto& u = static_cast<const ir::SubscriptAssignStmt&>(*s);
        ExprPtr t = RewriteExpr(u.target);
        ExprPtr x = RewriteExpr(u.value);
        if (t == u.target && x == u.value) return s;
        return Rebuilt(u, [&](ir::SubscriptAssignStmt& c) {
          c.target = t;
          c.value = x;
        });
      }
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ir::ForStmt&>(*s);
        ExprPtr a = RewriteExpr(f.start), b = RewriteExpr(f.stop), c = RewriteExpr(f.step);
        std::vector<ir::IterArgPtr> iter_args = RewriteIterArgs(f.iter_args);
        if (scanner_ != nullptr) scanner_->EnterFor(f);
        StmtPtr body = Rewrite(f.body);
        if (scanner_ != nullptr) scanner_->ExitLoop();
        if (a == f.start && b == f.stop && c == f.step && iter_args.empty() && body == f.body) {
          return s;
        }
        return Rebuilt(f, [&](ir::ForStmt& n) {
          n.start = a;
          n.stop = b;
          n.step = c;
          if (!iter_args.empty()) n.iter_args = std::move(iter_args);
          n.body = body;
        });
      }
      case NodeKind::kWhileStmt: {
        const auto& w = static_cast<const ir::WhileStmt&>(*s);
        ExprPtr cond = RewriteExpr(w.cond);
        if (scanner_ != nullptr) scanner_->EnterWhile();
        StmtPtr body = Rewrite(w.body);
        if (scanner_ != nullptr) scanner_->ExitLoop();
        if (cond == w.cond && body == w.body) return s;
        return Rebuilt(w, [&](ir::WhileStmt& n) {
          n.cond = cond;
          n.body = body;
        });
      }
      case NodeKind::kIfStmt: {
        const auto& i = static_cast<const ir::IfStmt&>(*s);
        ExprPtr cond = RewriteExpr(i.cond);
        StmtPtr t = Rewrite(i.then_body), e = Rewrite(i.else_body);
        if (cond == i.cond && t == i.then_body && e == i.else_body) return s;
        return Rebuilt(i, [&](ir::IfStmt& n) {
          n.cond = cond;
          n.then_body = t;
          n.else_body = e;
        });
      }
      case NodeKind::kScopeStmt: {
        const auto& sc = static_cast<const ir::ScopeStmt&>(*s);
        std::vector<ExprPtr> args = sc.args.ToVector();
        bool changed = RewriteAll(args);
        ir::KwargList kwargs = sc.kwargs.ToVector();
        changed |= RewriteKwargs(kwargs);
        StmtPtr body = Rewrite(sc.body);
        if (!changed && body == sc.body) return s;
        return Rebuilt(sc, [&](ir::ScopeStmt& n) {
          n.args = std::move(args);
          n.kwargs = std::move(kwargs);
          n.body = body;
        });
      }
      case NodeKind::kCommDomainScopeStmt: {
        const auto& sc = static_cast<const ir::CommDomainScopeStmt&>(*s);
        StmtPtr body = Rewrite(sc.body);
        if (body == sc.body) return s;
        return Rebuilt(sc, [&](ir::CommDomainScopeStmt& n) { n.body = body; });
      }
      default:
        return s;
    }
  }

 private:
  template <typename T, typename F>
  static StmtPtr Rebuilt(const T& n, F&& edit) {
    auto copy = ir::MakeNode<T>(n);
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

  // An init value that mentions a view (never is one: the scan rejects that) gets
  // its fresh Var; its IterArg keeps its type, since the init's type is unchanged,
  // and is replaced in the body. Empty when no init changes.
  std::vector<ir::IterArgPtr> RewriteIterArgs(std::span<const ir::IterArgPtr> iter_args) {
    std::vector<ir::IterArgPtr> out;
    for (size_t i = 0; i < iter_args.size(); ++i) {
      const ir::IterArg& ia = *iter_args[i];
      ExprPtr init = RewriteExpr(ia.init_value);
      if (init == ia.init_value && out.empty()) continue;
      if (out.empty()) out.assign(iter_args.begin(), iter_args.begin() + static_cast<std::ptrdiff_t>(i));
      if (init == ia.init_value) {
        out.push_back(iter_args[i]);
        continue;
      }
      auto fresh = ir::MakeNode<ir::IterArg>(ia);
      fresh->init_value = std::move(init);
      st_.carried.Insert(&ia, fresh);
      ++st_.carried_count;
      out.push_back(std::move(fresh));
    }
    return out;
  }

  // The fresh Var of a retypable Var, null if it has none.
  const ExprPtr* FreshOf(const Var* var) {
    const ViewInfo* view = st_.view_alloc.Find(var);
    if (view == nullptr || !view->fresh) {
      st_.Missed(var);
      return nullptr;
    }
    return &view->fresh;
  }

  ExprPtr RewriteExpr(const ExprPtr& e) {
    if (!e) return e;
    switch (e->kind()) {
      case NodeKind::kIterArg:
        if (st_.carried_count != 0) {
          if (const ExprPtr* carried = st_.carried.Find(static_cast<const Var*>(e.get()))) {
            return *carried;
          }
        }
        [[fallthrough]];
      case NodeKind::kVar: {
        const auto* var = static_cast<const Var*>(e.get());
        if (!IsRetypable(*var)) return e;
        const ExprPtr* fresh = FreshOf(var);
        return fresh == nullptr ? e : *fresh;
      }
      case NodeKind::kCall: {
        // Copy-on-first-change: most calls mention no view, and copying kwargs
        // (strings) for each of them dominated large programs.
        const auto& c = static_cast<const Call&>(*e);
        ir::NodeRef<Call> copy;
        auto edit = [&]() -> Call& {
          if (!copy) copy = ir::MakeNode<Call>(c);
          return *copy;
        };
        for (size_t i = 0; i < c.args.size(); ++i) {
          ExprPtr n = RewriteExpr(c.args[i]);
          if (n != c.args[i]) edit().args[i] = std::move(n);
        }
        for (size_t i = 0; i < c.kwargs.size(); ++i) {
          const auto* x = std::get_if<ExprPtr>(&c.kwargs[i].second);
          if (!x) continue;
          ExprPtr n = RewriteExpr(*x);
          if (n != *x) edit().kwargs[i].second = std::move(n);
        }
        for (size_t i = 0; i < c.attrs.size(); ++i) {
          ExprPtr n = RewriteExpr(c.attrs[i].second);
          if (n != c.attrs[i].second) edit().attrs[i].second = std::move(n);
        }
        if (!copy) return e;
        return copy;
      }
      case NodeKind::kMakeTuple: {
        // A tuple's type lists its elements' types, so a retyped element means a
        // new tuple type too (else the printed list reparses with the back-reference
        // its recorded type lacks): rebuild through the constructor, which derives it.
        const auto& t = static_cast<const ir::MakeTuple&>(*e);
        std::vector<ExprPtr> elements;
        for (size_t i = 0; i < t.elements.size(); ++i) {
          ExprPtr n = RewriteExpr(t.elements[i]);
          if (n == t.elements[i] && elements.empty()) continue;
          if (elements.empty()) elements.assign(t.elements.begin(), t.elements.begin() + i);
          elements.push_back(std::move(n));
        }
        if (elements.empty()) return e;
        auto copy = ir::MakeNode<ir::MakeTuple>(std::move(elements));
        copy->set_span(t.span());
        return copy;
      }
      case NodeKind::kBinaryExpr: {
        // Scalar arithmetic is everywhere in host code and never holds a view in a
        // well-typed program; only its operands can (types hold no view Vars).
        const auto& b = static_cast<const ir::BinaryExpr&>(*e);
        ExprPtr lhs = RewriteExpr(b.lhs), rhs = RewriteExpr(b.rhs);
        if (lhs == b.lhs && rhs == b.rhs) return e;
        auto copy = ir::MakeNode<ir::BinaryExpr>(b);
        copy->lhs = std::move(lhs);
        copy->rhs = std::move(rhs);
        return copy;
      }
      case NodeKind::kUnaryExpr: {
        const auto& u = static_cast<const ir::UnaryExpr&>(*e);
        ExprPtr x = RewriteExpr(u.operand);
        if (x == u.operand) return e;
        auto copy = ir::MakeNode<ir::UnaryExpr>(u);
        copy->operand = std::move(x);
        return copy;
      }
      case NodeKind::kTupleGetItem:
      case NodeKind::kSubscript:
      case NodeKind::kSlice: {
        // Rare around views; the generic substitution is good enough here.
        if (st_.fresh_count == 0 && st_.carried_count == 0 && !st_.fused) return e;  // ir::Substitute's shortcut
        FreshSubstituter sub(st_);
        return sub.MutateExpr(e);
      }
      default:
        return e;
    }
  }

  StmtPtr RewriteAssign(const StmtPtr& s, const ir::AssignStmt& a) {
    const ExprPtr* fresh = IsRetypable(*a.var) ? FreshOf(a.var.get()) : nullptr;
    ExprPtr value = RewriteExpr(a.value);
    if (fresh == nullptr) {
      if (value == a.value) return s;
      return Rebuilt(a, [&](ir::AssignStmt& n) { n.value = value; });
    }
    VarPtr var = ir::PtrCast<const Var>(*fresh);
    if (value->kind() == NodeKind::kCall) {
      const auto& call = static_cast<const Call&>(*value);
      const std::string& op = call.OpName();
      // Only the back-reference is added; a real shape/dtype disagreement stays
      // for the verifier to report.
      if ((op == ir::ops::kWindow || InPlaceSourceArg(op) >= 0) &&
          SameApartFromWindow(a.value->type, a.var->type)) {
#if CDS_INJECT_BUG != 11
        auto minted = ir::MakeNode<Call>(call);
        minted->type = var->type;
        value = std::move(minted);
#endif
      }
    }
    auto stmt = ir::MakeNode<ir::AssignStmt>(std::move(var), std::move(value));
    stmt->set_span(a.span());
    return stmt;
  }

  // Only DistributedTensor-typed Vars get a fresh Var (AddFreshVar): a look at the
  // type spares most statements the table lookup.
  static bool IsRetypable(const Var& v) {
    return v.type && v.type->kind() == NodeKind::kDistributedTensorType;
  }

  HostState& st_;
  Collector* collector_;
  Scanner* scanner_;
};

// ---------------------------------------------------------------------------
// Step 7: cluster allocs into comm domains and wrap the body.

struct Domain {
  DeviceSet devices;
  std::vector<WindowBufferPtr> slots;
  Span span;
};

// The (domain, alloc name) pairs seen, for the duplicate-name check: one
// open-addressing table sized for every alloc up front, over views of the names
// the allocs hold (a set of strings per domain cost an allocation per alloc).
class DomainNames {
 public:
  explicit DomainNames(size_t count) {
    size_t cap = 16;
    while (cap < count * 2) cap *= 2;
    slots_.resize(cap);
    mask_ = cap - 1;
  }
  // False when the domain has the name already.
  bool Insert(size_t domain, std::string_view name) {
    const size_t h = std::hash<std::string_view>()(name) ^ (domain * 0x9E3779B97F4A7C15ull);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        slot = Slot{true, domain, h, name};
        return true;
      }
      if (slot.hash == h && slot.domain == domain && slot.name == name) return false;
    }
  }

 private:
  struct Slot {
    bool used = false;
    size_t domain = 0;
    size_t hash = 0;
    std::string_view name;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

std::vector<Domain> ClusterAllocs(const HostState& st) {
  std::vector<Domain> domains;
  // Domain of each interned device set (equal sets have equal ids).
  std::vector<size_t> by_devices(st.device_sets.size(), kNone);
  DomainNames names(st.allocs.size());
  for (const auto& alloc : st.allocs) {
    size_t& di = by_devices[alloc.coverage];
    if (di == kNone) {
      di = domains.size();
      domains.push_back(Domain{st.device_sets[alloc.coverage], {}, alloc.span});
    }
    Domain& d = domains[di];
#if CDS_INJECT_BUG != 12
    if (!names.Insert(di, alloc.name)) {
      throw ValueError(fmt::format("duplicate window buffer name '{}' in comm domain 'comm_d{}'",
                                   alloc.name, di),
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

StmtPtr WrapInScopes(const StmtPtr& body, std::vector<Domain> domains) {
  StmtPtr inner = body->kind() == NodeKind::kSeqStmts ? body : ir::Seq({body}, body->span());
  for (size_t i = domains.size(); i-- > 0;) {
    Domain& d = domains[i];
    auto scope = ir::MakeNode<ir::CommDomainScopeStmt>(
        fmt::format("comm_d{}", i), std::move(d.devices), std::move(d.slots), ir::KwargList{},
        inner);
    scope->set_span(d.span);
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

ir::FunctionPtr Finish(const ir::FunctionPtr& f, HostState& st, const StmtPtr& body) {
  std::vector<Domain> domains = ClusterAllocs(st);
  auto copy = ir::MakeNode<ir::Function>(*f);
  copy->body = WrapInScopes(body, std::move(domains));
  return copy;
}

// The steps one after the other: collect, scan and retype are three walks. Used
// when the fused walk cannot stand in for them (a use before its definition).
ir::FunctionPtr MaterializeHostInThreeWalks(const ir::FunctionPtr& f,
                                            const NameSet& chip_orchs) {
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
  return Finish(f, st, body);
}

// Collect, scan and retype in one walk over the body (ViewRetyper's fused mode):
// on programs larger than the cache each walk costs a miss per node, so one walk
// instead of three is most of the pass's time. The errors keep their documented
// order: the walk keeps the first scan error and throws it only after the dead
// allocs (which the collect finds anywhere in the body) have been checked.
ir::FunctionPtr MaterializeHost(const ir::FunctionPtr& f,
                                const NameSet& chip_orchs) {
  if (!f->body || AlreadyWrapped(f->body)) return f;
  {
    HostState st;
    st.fused = true;
    Collector collector(st);
    Scanner scanner(st, chip_orchs);
    ViewRetyper walker(st, &collector, &scanner);
    StmtPtr body = walker.Rewrite(f->body);
    if (!st.AnyLateDefinition()) {
      if (st.allocs.empty()) {
        // As in the three walks: the scan's checks still apply; nothing changed.
        scanner.RethrowError();
        return f;
      }
      CheckAllocsHaveViews(st);
      scanner.RethrowError();
      InheritCoverage(st);
      MergeCoverage(st);
      SizeWindowBuffers(st);
      return Finish(f, st, body);
    }
  }
  return MaterializeHostInThreeWalks(f, chip_orchs);
}

}  // namespace

ir::ProgramPtr MaterializeCommDomainScopes(const ir::ProgramPtr& program) {
  if (!program) return program;
  NameSet chip_orchs;
  for (const auto& f : program->functions) {
    if (f->IsChipOrchestrator()) chip_orchs.Insert(f->name);
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
    auto copy = ir::MakeNode<ir::Function>(*f);
    for (auto& p : copy->params) {
      if (p->type->kind() != NodeKind::kDistributedTensorType) continue;
      auto t = ir::MakeNode<ir::DistributedTensorType>(
          static_cast<const ir::DistributedTensorType&>(*p->type));
      t->window_buffer = stamp;
      p = ir::MakeNode<Var>(p->name_hint, std::move(t));
    }
    f = std::move(copy);
  }
#endif
  if (!changed) return program;
  auto result =
      ir::MakeNode<ir::Program>(program->name, program->dynamic_dims, std::move(functions));
  result->set_span(program->span());
  return result;
}

}  // namespace cds::pass
