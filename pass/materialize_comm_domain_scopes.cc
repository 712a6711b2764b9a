#include "pass/materialize_comm_domain_scopes.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/mutator.h"
#include "ir/op_registry.h"
#include "ir/string_hash.h"
#include "ir/structural_equal.h"
#include "ir/walk.h"
#include "pass/device_coverage.h"
#include "pass/orchestrators.h"
#include "pass/window_buffer_size.h"

namespace cds::pass {
namespace {

using ir::Call;
using ir::ExprPtr;
using ir::NodeKind;
using ir::NodePtr;
using ir::NodeRef;
using ir::Span;
using ir::Stmt;
using ir::StmtPtr;
using ir::TypePtr;
using ir::Var;
using ir::VarPtr;
using ir::WindowBufferPtr;

// The names of the program's chip orchestrators: a call of one is a dispatch.
using ChipOrchestrators = ir::StringViewSet;

// ---------------------------------------------------------------------------
// What the steps find out about one host orchestrator

struct Alloc {
  const ir::AssignStmt* stmt = nullptr;  // `x = pld.tensor.alloc_window_buffer(...)`
  std::string_view name;                 // the name= kwarg, else the name of `x`
  Span span;                             // the alloc call's, else the statement's
  bool has_view = false;
  bool dispatched = false;    // some dispatch with a device= passed one of its views
  bool unplaced = false;      // some dispatch without device= passed one of its views
  bool inherits = false;      // some collective hands coverage on to it
  Devices dispatch_coverage;  // from dispatches only
  Devices inherited;          // from collectives pairing it with a data/target buffer
  Devices coverage;           // both, merged
  WindowBufferPtr window_buffer;

  const VarPtr& var() const { return stmt->var; }
  const Call& call() const { return static_cast<const Call&>(*stmt->value); }
};

// A Var that resolves to a window view of an alloc, and (DistributedTensor-typed
// Vars only, made in step 6) the fresh Var that replaces it.
struct View {
  size_t alloc = 0;
  VarPtr fresh;
};

// A host collective's hand-over: alloc `to` inherits the dispatch coverage of
// alloc `from`. A barrier has no `from`: its signal must be covered on its own.
struct Handover {
  std::optional<size_t> from;
  size_t to = 0;
  const Call* call = nullptr;
  std::string_view from_role;
  std::string_view to_role;
};

struct Host {
  std::vector<Alloc> allocs;                         // source order
  absl::flat_hash_map<const Var*, size_t> alloc_of;  // alloc LHS Var -> alloc
  absl::flat_hash_map<const Var*, View> view_of;     // every Var resolving to a view
  absl::flat_hash_map<const Var*, ExprPtr> scalars;  // `n = pld.world_size()`, `n = 4`
  std::vector<Handover> handovers;                   // source order of the collectives
};

bool IsPlainVar(const ExprPtr& e) { return e && e->kind() == NodeKind::kVar; }

std::optional<size_t> ResolveView(const Host& host, const ExprPtr& e) {
  if (!IsPlainVar(e)) return std::nullopt;
  auto it = host.view_of.find(static_cast<const Var*>(e.get()));
  if (it == host.view_of.end()) return std::nullopt;
  return it->second.alloc;
}

// The argument an in-place collective's result is the same window as, or -1.
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
// Steps 1-2: allocs, their views, and the scalars a loop bound may name

void AddAlloc(const ir::AssignStmt& a, Host& host) {
  const auto& call = static_cast<const Call&>(*a.value);
  const ir::AttrValue* name = ir::FindKwarg(call.kwargs, "name");
  Alloc alloc;
  alloc.stmt = &a;
  alloc.name = name && std::holds_alternative<std::string>(*name)
                   ? std::string_view(std::get<std::string>(*name))
                   : std::string_view(a.var->name_hint);
  alloc.span = call.span().IsKnown() ? call.span() : a.span();
  host.alloc_of.try_emplace(a.var.get(), host.allocs.size());
  host.allocs.push_back(std::move(alloc));
}

// The first binding of a Var wins.
void AddView(const Var* var, size_t alloc, Host& host) {
  host.view_of.try_emplace(var, View{alloc, nullptr});
}

void CollectDefinition(const ir::AssignStmt& a, Host& host) {
  const Var* lhs = a.var.get();
  const ExprPtr& value = a.value;
  if (value->kind() == NodeKind::kConstInt) {
    host.scalars.try_emplace(lhs, value);
    return;
  }
  if (value->kind() == NodeKind::kVar) {  // an alias `w = v`
    if (auto alloc = ResolveView(host, value)) AddView(lhs, *alloc, host);
    return;
  }
  if (value->kind() != NodeKind::kCall) return;
  const auto& call = static_cast<const Call&>(*value);
  const std::string& op = call.OpName();
  if (op == ir::ops::kAllocWindowBuffer) {
    AddAlloc(a, host);
  } else if (op == ir::ops::kWindow) {
    if (call.args.empty() || !IsPlainVar(call.args[0])) return;
    auto it = host.alloc_of.find(static_cast<const Var*>(call.args[0].get()));
    if (it == host.alloc_of.end()) return;
    host.allocs[it->second].has_view = true;
    AddView(lhs, it->second, host);
  } else if (op == ir::ops::kWorldSize) {
    host.scalars.try_emplace(lhs, value);
  } else if (int source = InPlaceSourceArg(op);
             source >= 0 && static_cast<size_t>(source) < call.args.size()) {
    if (auto alloc = ResolveView(host, call.args[source])) AddView(lhs, *alloc, host);
  }
}

// Every definition of the body, in pre-order: the later steps find each one
// whatever the order of definitions and uses.
void CollectAllocsAndViews(const Stmt& s, Host& host) {
  if (s.kind() == NodeKind::kAssignStmt)
    CollectDefinition(static_cast<const ir::AssignStmt&>(s), host);
  ir::ForEachSubStmt(s, [&](const StmtPtr& sub) { CollectAllocsAndViews(*sub, host); });
}

void RejectDeadAllocs(const Host& host) {
  for (const auto& alloc : host.allocs) {
    if (!alloc.has_view) {
      throw ValueError(
          fmt::format("window buffer '{}' has no pld.tensor.window materialisation (dead alloc)",
                      alloc.name),
          alloc.span);
    }
  }
}

// ---------------------------------------------------------------------------
// Step 3: the device coverage of dispatches, with a stack of enclosing loops.
// Host collectives met on the way are checked and their hand-overs recorded.

struct Loop {
  const ir::ForStmt* loop = nullptr;  // null for a while loop
  bool evaluated = false;
  std::optional<Devices> devices;  // what the induction variable covers
  std::string problem;             // why it covers nothing expressible
};

class DispatchScanner {
 public:
  DispatchScanner(Host& host, const ChipOrchestrators& chip_orchestrators)
      : host_(host), chip_orchestrators_(chip_orchestrators) {}

  void Walk(const Stmt& s) {
    ir::ForEachStmtOperand(s, [&](const ExprPtr& e) { Scan(*e); });
    const auto* loop =
        s.kind() == NodeKind::kForStmt ? static_cast<const ir::ForStmt*>(&s) : nullptr;
    if (loop) RejectCarriedViews(*loop);
    const bool enters_loop = loop || s.kind() == NodeKind::kWhileStmt;
    if (enters_loop) loops_.push_back(Loop{loop, false, std::nullopt, {}});
    ir::ForEachSubStmt(s, [&](const StmtPtr& sub) { Walk(*sub); });
    if (enters_loop) loops_.pop_back();
  }

 private:
  void Scan(const ir::Expr& e) {
    if (ir::IsVarLikeKind(e.kind())) return;  // a use: nothing to look into
    if (e.kind() == NodeKind::kCall) {
      const auto& c = static_cast<const Call&>(e);
      if (c.op && c.op->kind() == NodeKind::kGlobalVar) {
        const std::string& callee = static_cast<const ir::GlobalVar&>(*c.op).name;
        if (chip_orchestrators_.contains(callee)) Dispatch(c, callee);
      } else if (IsHostCollective(c.OpName())) {
        Collective(c);
      }
    }
    ir::ForEachOperand(e, [&](const ExprPtr& operand) { Scan(*operand); });
  }

  // Every positional argument that is a view adds the dispatch's devices to its alloc.
  // A dispatch without device= is placed by the runtime and covers no device, as in
  // PyPTO; it is remembered only to explain an alloc left without coverage.
  void Dispatch(const Call& c, const std::string& callee) {
    const ExprPtr device = ir::FindAttr(c.attrs, "device");
    const std::optional<Devices> devices =
        device ? std::optional<Devices>(DevicesOf(device, c, callee)) : std::nullopt;
    for (const auto& arg : c.args) {
      if (auto index = ResolveView(host_, arg)) {
        Alloc& alloc = host_.allocs[*index];
        if (!devices) {
          alloc.unplaced = true;
          continue;
        }
        alloc.dispatched = true;
        alloc.dispatch_coverage = Merge(alloc.dispatch_coverage, *devices);
      }
    }
  }

  // The device table: a constant N >= 0 is {N}; the induction variable of an
  // enclosing loop covers what the loop ranges over; anything else is an error.
  Devices DevicesOf(const ExprPtr& device, const Call& c, const std::string& callee) {
    if (auto id = ConstValue(device)) {
      if (*id < 0) {
        throw ValueError(
            fmt::format("dispatch of '{}': device= is a negative constant ({})", callee, *id),
            c.span());
      }
      return Devices::One(*id);
    }
    if (device->kind() == NodeKind::kVar || device->kind() == NodeKind::kIterArg) {
      const auto* var = static_cast<const Var*>(device.get());
      for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
        if (!it->loop || it->loop->loop_var.get() != var) continue;
        Evaluate(*it);
        if (!it->devices) {
          throw ValueError(fmt::format("dispatch of '{}': device= loop variable '{}' {}", callee,
                                       var->name_hint, it->problem),
                           c.span());
        }
        return *it->devices;
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

  // A loop bound may name a scalar defined as a constant or as world_size().
  ExprPtr Bound(const ExprPtr& e) const {
    if (!IsPlainVar(e)) return e;
    auto it = host_.scalars.find(static_cast<const Var*>(e.get()));
    return it == host_.scalars.end() ? e : it->second;
  }

  // `pl.range(pld.world_size())` covers all devices; `pl.range(a, b)` with constant
  // bounds, a >= 0 and step 1 covers a..b-1; no other loop is expressible. Worked out
  // on the first dispatch that uses the loop's variable.
  void Evaluate(Loop& frame) const {
    if (frame.evaluated) return;
    frame.evaluated = true;
    const ir::ForStmt& f = *frame.loop;
    ExprPtr start = f.start ? Bound(f.start) : nullptr;
    ExprPtr stop = Bound(f.stop);
    ExprPtr step = f.step ? Bound(f.step) : nullptr;
    std::optional<int64_t> a = start ? ConstValue(start) : std::optional<int64_t>(0);
    std::optional<int64_t> s = step ? ConstValue(step) : std::optional<int64_t>(1);
    if (IsWorldSizeCall(stop)) {
      if (a == 0 && s == 1) {
        frame.devices = Devices::All();
      } else {
        frame.problem =
            "ranges over pld.system.world_size() with a start other than 0 or a step other than 1; "
            "its coverage is not expressible";
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
    if (*a < 0) {
      frame.problem = fmt::format("starts at a negative device id ({})", *a);
      return;
    }
    if (*b > *a && *b - *a > kMaxEnumeratedDevices) {
      frame.problem = fmt::format("covers {} devices, more than the {} this pass enumerates",
                                  *b - *a, kMaxEnumeratedDevices);
      return;
    }
    frame.devices = Devices::Range(*a, *b);
  }

  size_t NeedView(const Call& c, size_t index, std::string_view role) const {
    if (index < c.args.size()) {
      if (auto alloc = ResolveView(host_, c.args[index])) return *alloc;
    }
    throw ValueError(
        fmt::format("{}: the {} argument does not resolve to a window view (a pld.tensor.window "
                    "of a pld.tensor.alloc_window_buffer)",
                    c.OpName(), role),
        c.span());
  }

  void HandOver(std::optional<size_t> from, size_t to, const Call& c, std::string_view from_role,
                std::string_view to_role) {
    host_.handovers.push_back(Handover{from, to, &c, from_role, to_role});
  }

  // The pairs: allreduce, broadcast, reduce_scatter: data -> signal; allgather,
  // all_to_all: target -> signal; all_to_all_v: target -> signal and target ->
  // recv_counts; barrier: its signal alone.
  void Collective(const Call& c) {
    const std::string& op = c.OpName();
    if (op == ir::ops::kAllToAllV && !loops_.empty()) {
      throw ValueError(
          "pld.tensor.all_to_all_v is not supported inside a for/while loop of a host orchestrator",
          c.span());
    }
    if (op == ir::ops::kAllReduce) {
      size_t data = NeedView(c, 0, "data");
      if (c.args.size() >= 2) HandOver(data, NeedView(c, 1, "signal"), c, "data", "signal");
    } else if (op == ir::ops::kBroadcast || op == ir::ops::kReduceScatter) {
      size_t data = NeedView(c, 0, "data");
      HandOver(data, NeedView(c, 1, "signal"), c, "data", "signal");
    } else if (op == ir::ops::kBarrier) {
      HandOver(std::nullopt, NeedView(c, 0, "signal"), c, "", "signal");
    } else if (op == ir::ops::kAllGather || op == ir::ops::kAllToAll) {
      size_t target = NeedView(c, 1, "target");
      HandOver(target, NeedView(c, 2, "signal"), c, "target", "signal");
    } else if (op == ir::ops::kAllToAllV) {
      size_t target = NeedView(c, 1, "target");
      size_t signal = NeedView(c, 2, "signal");
      size_t recv_counts = NeedView(c, 4, "recv_counts");
      HandOver(target, signal, c, "target", "signal");
      HandOver(target, recv_counts, c, "target", "recv_counts");
    }
  }

  // A view seeding a loop-carried value would give the IterArg (typed like its
  // init) the window's type in every iteration, although later iterations carry
  // whatever the body yields: the pass does not guess which buffer that is.
  void RejectCarriedViews(const ir::ForStmt& f) const {
    for (const auto& ia : f.iter_args) {
      const Var* view = CarriedView(ia->init_value);
      if (view == nullptr) continue;
      const Alloc& alloc = host_.allocs[host_.view_of.at(view).alloc];
      // The loop's span: a Var's own span is its definition, not this use.
      throw ValueError(
          fmt::format("window view '{}' of window buffer '{}' seeds the loop-carried value '{}' "
                      "(init_values); a view cannot be carried by a loop",
                      view->name_hint, alloc.name, ia->name_hint),
          f.span());
    }
  }

  // The init itself, or an element of a list, that is a view.
  const Var* CarriedView(const ExprPtr& e) const {
    if (!e) return nullptr;
    if (e->kind() == NodeKind::kMakeTuple) {
      for (const auto& x : static_cast<const ir::MakeTuple&>(*e).elements) {
        if (const Var* v = CarriedView(x)) return v;
      }
      return nullptr;
    }
    return ResolveView(host_, e) ? static_cast<const Var*>(e.get()) : nullptr;
  }

  Host& host_;
  const ChipOrchestrators& chip_orchestrators_;
  std::vector<Loop> loops_;
};

// ---------------------------------------------------------------------------
// Step 4: collectives hand coverage on; each alloc's coverage is merged

// Only dispatch coverage is handed on: no transitive chains.
void InheritThroughCollectives(Host& host) {
  for (const auto& h : host.handovers) {
    Alloc& to = host.allocs[h.to];
    if (!h.from) {
      if (to.dispatch_coverage.Empty()) {
        throw ValueError(
            fmt::format(
                "{}: signal window buffer '{}' has no dispatch coverage of its own (a barrier "
                "passes no coverage on)",
                h.call->OpName(), to.name),
            h.call->span());
      }
      continue;
    }
    const Alloc& from = host.allocs[*h.from];
    if (from.dispatch_coverage.Empty()) {
      throw ValueError(
          fmt::format("{}: {} window buffer '{}' has no dispatch coverage to pass on to its {}",
                      h.call->OpName(), h.from_role, from.name, h.to_role),
          h.call->span());
    }
    to.inherited = Merge(to.inherited, from.dispatch_coverage);
    to.inherits = true;
  }
}

void MergeCoverage(Host& host) {
  for (auto& alloc : host.allocs) {
    alloc.coverage = Merge(alloc.dispatch_coverage, alloc.inherited);
    if (!alloc.coverage.Empty()) continue;
    if (!alloc.dispatched && !alloc.inherits) {
      throw ValueError(
          fmt::format("window buffer '{}' is not consumed by any chip orchestrator dispatch{}",
                      alloc.name,
                      alloc.unplaced ? " with a device= (a dispatch without device= is placed at "
                                       "run time and gives no coverage)"
                                     : ""),
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
// Step 5: one WindowBuffer per alloc

void BuildWindowBuffers(Host& host) {
  for (auto& alloc : host.allocs) {
    alloc.window_buffer =
        ir::WithSpan(ir::MakeNode<ir::WindowBuffer>(
                         alloc.var(), WindowBufferSizeBytes(alloc.call()), false, false),
                     alloc.span);
  }
}

// ---------------------------------------------------------------------------
// Step 6: retype the views

TypePtr WithoutWindow(const TypePtr& t) {
  if (!t || t->kind() != NodeKind::kDistributedTensorType) return t;
  const auto& d = static_cast<const ir::DistributedTensorType&>(*t);
  if (!d.window_buffer) return t;
  auto copy = ir::MakeNode<ir::DistributedTensorType>(d);
  copy->window_buffer = nullptr;
  return copy;
}

bool SameApartFromWindow(const TypePtr& a, const TypePtr& b) {
  return a == b || ir::StructuralEqual(WithoutWindow(a), WithoutWindow(b));
}

// Replaces every DistributedTensor-typed view Var, definition and uses, by a fresh
// Var of the same name whose type carries its alloc's WindowBuffer, and re-mints
// the defining calls. Nodes without a replaced Var come back as the same pointer.
class ViewRetyper final : public ir::IRMutator {
 public:
  explicit ViewRetyper(Host& host) : host_(host) {}

  NodePtr MutateVar(const NodeRef<const Var>& v) override { return Replacement(v); }

  NodePtr MutateIterArg(const NodeRef<const ir::IterArg>& v) override {
    auto it = carried_.find(v.get());
    return it != carried_.end() ? NodePtr(it->second) : Replacement(v);
  }

  // An init that mentions a view (the scan rejected one that is a view) is
  // rewritten; the IterArg is a definition, so a new one replaces it, and the
  // body's uses follow (MutateIterArg).
  VarPtr MutateDef(const VarPtr& v) override {
    if (v->kind() != NodeKind::kIterArg) return v;
    const auto& carried = static_cast<const ir::IterArg&>(*v);
    ExprPtr init = MutateExpr(carried.init_value);
    if (init == carried.init_value) return v;
    auto fresh = ir::MakeNode<ir::IterArg>(carried);
    fresh->init_value = std::move(init);
    carried_.emplace(&carried, fresh);
    return fresh;
  }

  // Both sides of a view's assignment get the new type: the defining call (a window
  // or an in-place collective) is re-minted with exactly the Var's type, provided
  // its own type agreed with the Var's apart from the back-reference; a real
  // disagreement is left for the verifier to report.
  NodePtr MutateAssignStmt(const NodeRef<const ir::AssignStmt>& a) override {
    ExprPtr value = MentionsReplacedVar(*a->value) ? MutateExpr(a->value) : a->value;
    const VarPtr* fresh = FreshVarOf(*a->var);
    if (fresh == nullptr && value == a->value) return a;
    VarPtr var = fresh ? *fresh : a->var;
    if (fresh && value->kind() == NodeKind::kCall) {
      const std::string& op = static_cast<const Call&>(*value).OpName();
      if ((op == ir::ops::kWindow || InPlaceSourceArg(op) >= 0) &&
          SameApartFromWindow(a->value->type, a->var->type)) {
        auto minted = ir::MakeNode<Call>(static_cast<const Call&>(*value));
        minted->type = var->type;
        value = std::move(minted);
      }
    }
    return ir::Assign(std::move(var), std::move(value), a->span());
  }

  // A tuple's type lists its elements' types: a tuple with a retyped element is
  // built anew, which derives its type.
  NodePtr MutateMakeTuple(const NodeRef<const ir::MakeTuple>& t) override {
    std::vector<ExprPtr> elements;
    bool changed = false;
    for (const auto& e : t->elements) {
      elements.push_back(MutateExpr(e));
      changed |= elements.back() != e;
    }
    if (!changed) return t;
    return ir::WithSpan(ir::MakeNode<ir::MakeTuple>(std::move(elements), t->parenthesized),
                        t->span());
  }

  // Most statements mention no view: they are not copied to find that out.
  NodePtr MutateEvalStmt(const NodeRef<const ir::EvalStmt>& e) override {
    return MentionsReplacedVar(*e->expr) ? IRMutator::MutateEvalStmt(e) : e;
  }

  // Types are kept: no view can be a shape dimension.
#define CDS_KEEP_TYPE(N) \
  NodePtr Mutate##N(const NodeRef<const ir::N>& t) override { return t; }
  CDS_TYPE_NODES(CDS_KEEP_TYPE)
#undef CDS_KEEP_TYPE

 private:
  // The replacement of a retyped view Var (made on first sight), null for others.
  const VarPtr* FreshVarOf(const Var& var) {
    if (!var.type || var.type->kind() != NodeKind::kDistributedTensorType) return nullptr;
    auto it = host_.view_of.find(&var);
    if (it == host_.view_of.end()) return nullptr;
    View& view = it->second;
    if (!view.fresh) {
      auto type = ir::MakeNode<ir::DistributedTensorType>(
          static_cast<const ir::DistributedTensorType&>(*var.type));
      type->window_buffer = host_.allocs[view.alloc].window_buffer;
      auto fresh = ir::MakeNode<Var>(var.name_hint, std::move(type));
      fresh->set_span(var.span());
      view.fresh = std::move(fresh);
    }
    return &view.fresh;
  }

  NodePtr Replacement(const VarPtr& v) {
    const VarPtr* fresh = FreshVarOf(*v);
    return fresh ? NodePtr(*fresh) : NodePtr(v);
  }

  bool MentionsReplacedVar(const ir::Expr& e) {
    if (e.kind() == NodeKind::kVar || e.kind() == NodeKind::kIterArg) {
      const auto& var = static_cast<const Var&>(e);
      return carried_.contains(&var) || FreshVarOf(var) != nullptr;
    }
    bool found = false;
    ir::ForEachOperand(e, [&](const ExprPtr& x) { found = found || MentionsReplacedVar(*x); });
    return found;
  }

  Host& host_;
  absl::flat_hash_map<const Var*, ExprPtr> carried_;  // old IterArg -> its replacement
};

StmtPtr RetypeViews(const StmtPtr& body, Host& host) {
  ViewRetyper retyper(host);
  return retyper.MutateStmt(body);
}

// ---------------------------------------------------------------------------
// Step 7: cluster the allocs into comm domains and wrap the body

struct Domain {
  Devices devices;
  std::vector<WindowBufferPtr> slots;
  Span span;  // its first alloc's
};

// In source order, each alloc joins the domain with its coverage or opens a new
// one. Alloc names are unique within a domain.
std::vector<Domain> ClusterAllocs(const Host& host) {
  std::vector<Domain> domains;
  absl::flat_hash_map<Devices, size_t> domain_of;
  absl::flat_hash_set<std::pair<size_t, std::string_view>> names;
  for (const auto& alloc : host.allocs) {
    auto [it, opened] = domain_of.try_emplace(alloc.coverage, domains.size());
    const size_t index = it->second;
    if (opened) domains.push_back(Domain{alloc.coverage, {}, alloc.span});
    if (!names.emplace(index, alloc.name).second) {
      throw ValueError(fmt::format("duplicate window buffer name '{}' in comm domain 'comm_d{}'",
                                   alloc.name, index),
                       alloc.span);
    }
    domains[index].slots.push_back(alloc.window_buffer);
  }
  return domains;
}

// Domain K is named comm_dK; the first domain is the outermost scope and the
// innermost holds the original statements.
StmtPtr WrapInScopes(const StmtPtr& body, std::vector<Domain> domains) {
  StmtPtr inner = body->kind() == NodeKind::kSeqStmts ? body : ir::Seq({body}, body->span());
  for (size_t i = domains.size(); i-- > 0;) {
    Domain& d = domains[i];
    auto scope = ir::MakeNode<ir::CommDomainScopeStmt>(
        fmt::format("comm_d{}", i), ir::DeviceSet{d.devices.all, std::move(d.devices.ids)},
        std::move(d.slots), ir::KwargList{}, inner);
    scope->set_span(d.span);
    inner = ir::Seq({scope}, d.span);
  }
  return inner;
}

// A body that starts with a comm domain has been through the pass already.
bool AlreadyWrapped(const Stmt& body) {
  if (body.kind() == NodeKind::kCommDomainScopeStmt) return true;
  if (body.kind() != NodeKind::kSeqStmts) return false;
  const auto& stmts = static_cast<const ir::SeqStmts&>(body).stmts;
  return !stmts.empty() && stmts.front()->kind() == NodeKind::kCommDomainScopeStmt;
}

// ---------------------------------------------------------------------------
// The pass on one host orchestrator

ir::FunctionPtr MaterializeHost(const ir::FunctionPtr& f,
                                const ChipOrchestrators& chip_orchestrators) {
  if (!f->body || AlreadyWrapped(*f->body)) return f;
  Host host;
  // 1-2. Collect every alloc and its window views (also through aliases and
  //      in-place collectives). An alloc without any view is dead.
  CollectAllocsAndViews(*f->body, host);
  RejectDeadAllocs(host);
  // 3.   Each dispatch adds its device set to the allocs of the views it passes.
  DispatchScanner(host, chip_orchestrators).Walk(*f->body);
  //      Without allocs there is nothing to materialise (the scan's checks hold).
  if (host.allocs.empty()) return f;
  // 4.   Signals inherit the dispatch coverage of their collective's data/target;
  //      ALL absorbs, otherwise sets unite. No alloc may end up uncovered.
  InheritThroughCollectives(host);
  MergeCoverage(host);
  // 5.   One WindowBuffer per alloc: base = the alloc's Var, size in bytes.
  BuildWindowBuffers(host);
  // 6.   Every view Var is replaced by one typed with its alloc's WindowBuffer.
  StmtPtr body = RetypeViews(f->body, host);
  // 7.   Allocs with equal coverage share a comm domain; the domains wrap the body.
  auto out = ir::MakeNode<ir::Function>(*f);
  out->body = WrapInScopes(body, ClusterAllocs(host));
  return out;
}

}  // namespace

ir::ProgramPtr MaterializeCommDomainScopes(const ir::ProgramPtr& program) {
  if (!program) return program;
  ChipOrchestrators chip_orchestrators;
  for (const auto& f : program->functions) {
    if (IsChipOrchestrator(*f)) chip_orchestrators.insert(f->name);
  }
  std::vector<ir::FunctionPtr> functions;
  functions.reserve(program->functions.size());
  bool changed = false;
  for (const auto& f : program->functions) {
    functions.push_back(IsHostOrchestrator(*f) ? MaterializeHost(f, chip_orchestrators) : f);
    changed |= functions.back() != f;
  }
  if (!changed) return program;
  auto result =
      ir::MakeNode<ir::Program>(program->name, program->dynamic_dims, std::move(functions));
  result->set_span(program->span());
  return result;
}

}  // namespace cds::pass
