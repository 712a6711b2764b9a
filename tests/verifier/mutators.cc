#include "tests/verifier/mutators.h"

#include <algorithm>
#include <set>

#include "ir/ir.h"
#include "ir/mutator.h"
#include "verifier/ir_rewrite.h"
#include "verifier/orchestrators.h"

namespace cds::verify::testing {

using namespace cds::ir;

FunctionPtr WithBody(const FunctionPtr& fn, StmtPtr body) {
  auto copy = ir::MakeNode<Function>(*fn);
  copy->body = std::move(body);
  return copy;
}

StmtPtr BuildChain(const std::vector<CommDomainScopeStmtPtr>& scopes, StmtPtr inner) {
  StmtPtr body = std::move(inner);
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto s = ir::MakeNode<CommDomainScopeStmt>(**it);
    s->body = body;
    body = Seq({s});
  }
  return body;
}

namespace {

// ---------------------------------------------------------------------------
// Locating things in a materialized program (kept independent of the verifier's
// own analysis on purpose: a shared bug would hide itself).

struct Chain {
  FunctionPtr fn;
  std::vector<CommDomainScopeStmtPtr> scopes;
  StmtPtr inner;
};

std::optional<Chain> FirstChain(const ProgramPtr& p) {
  for (const auto& fn : p->functions) {
    if (!IsHostOrchestrator(*fn)) continue;
    Chain c{fn, {}, fn->body};
    while (c.inner && c.inner->kind() == NodeKind::kSeqStmts) {
      const auto& seq = static_cast<const SeqStmts&>(*c.inner);
      if (seq.stmts.size() != 1 || seq.stmts[0]->kind() != NodeKind::kCommDomainScopeStmt) break;
      auto scope = ir::PtrCast<const CommDomainScopeStmt>(seq.stmts[0]);
      c.scopes.push_back(scope);
      c.inner = scope->body;
    }
    if (!c.scopes.empty()) return c;
  }
  return std::nullopt;
}

ProgramPtr ReplaceFunction(const ProgramPtr& p, const FunctionPtr& old_fn, FunctionPtr new_fn) {
  std::vector<FunctionPtr> fns = p->functions;
  for (auto& f : fns) {
    if (f == old_fn) f = new_fn;
  }
  return ir::MakeNode<Program>(p->name, p->dynamic_dims, std::move(fns));
}

ProgramPtr WithScopes(const ProgramPtr& p, const Chain& c,
                      const std::vector<CommDomainScopeStmtPtr>& scopes) {
  return ReplaceFunction(p, c.fn, WithBody(c.fn, BuildChain(scopes, c.inner)));
}

CommDomainScopeStmtPtr Edit(const CommDomainScopeStmtPtr& s,
                            const std::function<void(CommDomainScopeStmt&)>& f) {
  auto copy = ir::MakeNode<CommDomainScopeStmt>(*s);
  f(*copy);
  return copy;
}

void CollectAssigns(const StmtPtr& s, std::vector<ir::NodeRef<const AssignStmt>>& out) {
  if (!s) return;
  switch (s->kind()) {
    case NodeKind::kSeqStmts:
      for (const auto& x : static_cast<const SeqStmts&>(*s).stmts) CollectAssigns(x, out);
      break;
    case NodeKind::kAssignStmt:
      out.push_back(ir::PtrCast<const AssignStmt>(s));
      break;
    case NodeKind::kForStmt:
      CollectAssigns(static_cast<const ForStmt&>(*s).body, out);
      break;
    case NodeKind::kWhileStmt:
      CollectAssigns(static_cast<const WhileStmt&>(*s).body, out);
      break;
    case NodeKind::kIfStmt:
      CollectAssigns(static_cast<const IfStmt&>(*s).then_body, out);
      CollectAssigns(static_cast<const IfStmt&>(*s).else_body, out);
      break;
    case NodeKind::kCommDomainScopeStmt:
      CollectAssigns(static_cast<const CommDomainScopeStmt&>(*s).body, out);
      break;
    default:
      break;
  }
}

// Assignments under a for, while or if of the host chain: the pass must retype
// views there as well, and the verifier must look there.
void CollectNestedAssigns(const StmtPtr& s, bool nested,
                          std::vector<ir::NodeRef<const AssignStmt>>& out) {
  if (!s) return;
  switch (s->kind()) {
    case NodeKind::kSeqStmts:
      for (const auto& x : static_cast<const SeqStmts&>(*s).stmts) {
        CollectNestedAssigns(x, nested, out);
      }
      break;
    case NodeKind::kAssignStmt:
      if (nested) out.push_back(ir::PtrCast<const AssignStmt>(s));
      break;
    case NodeKind::kForStmt:
      CollectNestedAssigns(static_cast<const ForStmt&>(*s).body, true, out);
      break;
    case NodeKind::kWhileStmt:
      CollectNestedAssigns(static_cast<const WhileStmt&>(*s).body, true, out);
      break;
    case NodeKind::kIfStmt:
      CollectNestedAssigns(static_cast<const IfStmt&>(*s).then_body, true, out);
      CollectNestedAssigns(static_cast<const IfStmt&>(*s).else_body, true, out);
      break;
    default:
      break;
  }
}

void CollectEvals(const StmtPtr& s, std::vector<ir::NodeRef<const EvalStmt>>& out) {
  if (!s) return;
  switch (s->kind()) {
    case NodeKind::kSeqStmts:
      for (const auto& x : static_cast<const SeqStmts&>(*s).stmts) CollectEvals(x, out);
      break;
    case NodeKind::kEvalStmt:
      out.push_back(ir::PtrCast<const EvalStmt>(s));
      break;
    case NodeKind::kForStmt:
      CollectEvals(static_cast<const ForStmt&>(*s).body, out);
      break;
    case NodeKind::kWhileStmt:
      CollectEvals(static_cast<const WhileStmt&>(*s).body, out);
      break;
    case NodeKind::kIfStmt:
      CollectEvals(static_cast<const IfStmt&>(*s).then_body, out);
      CollectEvals(static_cast<const IfStmt&>(*s).else_body, out);
      break;
    default:
      break;
  }
}

WindowBufferPtr WindowOfType(const TypePtr& t) {
  if (!t || t->kind() != NodeKind::kDistributedTensorType) return nullptr;
  return static_cast<const DistributedTensorType&>(*t).window_buffer;
}

TypePtr WithWindow(const TypePtr& t, WindowBufferPtr wb) {
  auto copy = ir::MakeNode<DistributedTensorType>(static_cast<const DistributedTensorType&>(*t));
  copy->window_buffer = std::move(wb);
  return copy;
}

// The first assignment in a host chain that defines a view through a window Call.
ir::NodeRef<const AssignStmt> FirstWindowAssign(const Chain& c) {
  std::vector<ir::NodeRef<const AssignStmt>> assigns;
  CollectAssigns(c.inner, assigns);
  for (const auto& a : assigns) {
    if (WindowOfType(a->var->type) && a->value->kind() == NodeKind::kCall &&
        static_cast<const Call&>(*a->value).OpName() == ops::kWindow) {
      return a;
    }
  }
  return nullptr;
}

ir::NodeRef<const AssignStmt> AllocAssignOf(const Chain& c, const Var* alloc_var) {
  std::vector<ir::NodeRef<const AssignStmt>> assigns;
  CollectAssigns(c.inner, assigns);
  for (const auto& a : assigns) {
    if (a->var.get() == alloc_var) return a;
  }
  return nullptr;
}

// Rewrites statements by identity, and Vars / WindowBuffers by mapping, everywhere.
class Rewriter : public RetypingMutator {
 public:
  std::unordered_map<const Stmt*, StmtPtr> stmts;
  std::unordered_map<const WindowBuffer*, WindowBufferPtr> windows;

  NodePtr MutateAssignStmt(const ir::NodeRef<const AssignStmt>& n) override {
    if (auto it = stmts.find(n.get()); it != stmts.end()) return it->second;
    return RetypingMutator::MutateAssignStmt(n);
  }
  NodePtr MutateEvalStmt(const ir::NodeRef<const EvalStmt>& n) override {
    if (auto it = stmts.find(n.get()); it != stmts.end()) return it->second;
    return RetypingMutator::MutateEvalStmt(n);
  }
  NodePtr MutateWindowBuffer(const ir::NodeRef<const WindowBuffer>& n) override {
    if (auto it = windows.find(n.get()); it != windows.end()) return it->second;
    return RetypingMutator::MutateWindowBuffer(n);
  }
};

ProgramPtr RewriteFunction(const ProgramPtr& p, const FunctionPtr& fn, Rewriter& r) {
  return ReplaceFunction(p, fn, r.MutateAs<Function>(fn));
}

// Replaces one WindowBuffer (views, calls, slots) with an edited copy.
std::optional<ProgramPtr> EditWindowBuffer(const ProgramPtr& p,
                                           const std::function<void(WindowBuffer&)>& f) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  for (const auto& s : c->scopes) {
    if (s->slots.empty()) continue;
    const WindowBufferPtr& wb = s->slots[0];
    auto copy = ir::MakeNode<WindowBuffer>(*wb);
    f(*copy);
    Rewriter r;
    r.windows[wb.get()] = copy;
    return RewriteFunction(p, c->fn, r);
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// The mutators.

std::optional<ProgramPtr> ViewWindowBufferCopy(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto a = FirstWindowAssign(*c);
  if (!a) return std::nullopt;
  auto copy = ir::MakeNode<const WindowBuffer>(*WindowOfType(a->var->type));
  TypePtr t = WithWindow(a->var->type, copy);
  auto var = ir::MakeNode<Var>(*a->var);
  var->type = t;
  auto call = ir::MakeNode<Call>(static_cast<const Call&>(*a->value));
  call->type = t;
  Rewriter r;
  r.MapVar(a->var.get(), var);
  r.stmts[a.get()] = Assign(var, call, a->span());
  return RewriteFunction(p, c->fn, r);
}

std::optional<ProgramPtr> ViewWithoutWindowBuffer(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto a = FirstWindowAssign(*c);
  if (!a) return std::nullopt;
  TypePtr t = WithWindow(a->var->type, nullptr);
  auto var = ir::MakeNode<Var>(*a->var);
  var->type = t;
  auto call = ir::MakeNode<Call>(static_cast<const Call&>(*a->value));
  call->type = t;
  Rewriter r;
  r.MapVar(a->var.get(), var);
  r.stmts[a.get()] = Assign(var, call, a->span());
  return RewriteFunction(p, c->fn, r);
}

std::optional<ProgramPtr> DropCallType(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto a = FirstWindowAssign(*c);
  if (!a) return std::nullopt;
  auto call = ir::MakeNode<Call>(static_cast<const Call&>(*a->value));
  call->type = WithWindow(call->type, nullptr);
  Rewriter r;
  r.stmts[a.get()] = Assign(a->var, call, a->span());
  return RewriteFunction(p, c->fn, r);
}

std::optional<ProgramPtr> DropSlot(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  // Prefer a scope that keeps a slot, so only the dropped alloc is affected.
  auto it = std::find_if(scopes.begin(), scopes.end(),
                         [](const auto& s) { return s->slots.size() >= 2; });
  if (it == scopes.end()) it = scopes.begin();
  if ((*it)->slots.empty()) return std::nullopt;
  *it = Edit(*it, [](CommDomainScopeStmt& s) { s.slots.pop_back(); });
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> DuplicateSlot(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c || c->scopes.size() < 2 || c->scopes[0]->slots.empty()) return std::nullopt;
  auto scopes = c->scopes;
  WindowBufferPtr wb = scopes[0]->slots[0];
  scopes[1] = Edit(scopes[1], [&](CommDomainScopeStmt& s) { s.slots.push_back(wb); });
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> ChangeDevices(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  scopes[0] = Edit(scopes[0], [](CommDomainScopeStmt& s) {
    std::vector<int64_t> ids = s.devices.all ? std::vector<int64_t>{} : s.devices.ids;
    if (std::find(ids.begin(), ids.end(), 977) == ids.end()) ids.push_back(977);
    std::sort(ids.begin(), ids.end());
    s.devices = DeviceSet{false, ids};
  });
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> AllToSubset(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  for (auto& s : scopes) {
    if (!s->devices.all) continue;
    s = Edit(s, [](CommDomainScopeStmt& x) {
      x.devices = DeviceSet{false, {0, 1, 2, 3, 4, 5, 6, 7}};
    });
    return WithScopes(p, *c, scopes);
  }
  return std::nullopt;
}

std::optional<ProgramPtr> SwapScopes(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c || c->scopes.size() < 2) return std::nullopt;
  auto scopes = c->scopes;
  // Names stay in place: only the order of the domains changes.
  scopes[0] =
      Edit(c->scopes[1], [&](CommDomainScopeStmt& s) { s.name_hint = c->scopes[0]->name_hint; });
  scopes[1] =
      Edit(c->scopes[0], [&](CommDomainScopeStmt& s) { s.name_hint = c->scopes[1]->name_hint; });
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> ReorderSlots(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  for (auto& s : scopes) {
    if (s->slots.size() < 2) continue;
    s = Edit(s, [](CommDomainScopeStmt& x) { std::reverse(x.slots.begin(), x.slots.end()); });
    return WithScopes(p, *c, scopes);
  }
  return std::nullopt;
}

std::optional<ProgramPtr> ChipParamBackReference(const ProgramPtr& p) {
  for (const auto& fn : p->functions) {
    if (!IsChipOrchestrator(*fn) && fn->func_type != FunctionType::kInCore) continue;
    for (const auto& param : fn->params) {
      if (!param->type || param->type->kind() != NodeKind::kDistributedTensorType) continue;
      auto base = MakeVar("chip_buf", PtrType::Get());
      auto wb = ir::MakeNode<const WindowBuffer>(base, Int(1024), false, false);
      auto np = ir::MakeNode<Var>(*param);
      np->type = WithWindow(param->type, wb);
      Rewriter r;
      r.MapVar(param.get(), np);
      return RewriteFunction(p, fn, r);
    }
  }
  return std::nullopt;
}

std::optional<ProgramPtr> WindowBufferSize(const ProgramPtr& p) {
  return EditWindowBuffer(p, [](WindowBuffer& wb) { wb.size = Add(wb.size, Int(1)); });
}

std::optional<ProgramPtr> WindowBufferBase(const ProgramPtr& p) {
  return EditWindowBuffer(
      p, [](WindowBuffer& wb) { wb.base = MakeVar(wb.base->name_hint, PtrType::Get()); });
}

std::optional<ProgramPtr> LoadFromHost(const ProgramPtr& p) {
  return EditWindowBuffer(p, [](WindowBuffer& wb) { wb.load_from_host = true; });
}

std::optional<ProgramPtr> AddEmptyScope(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  scopes.push_back(ir::MakeNode<CommDomainScopeStmt>(
      "comm_d" + std::to_string(scopes.size()), DeviceSet{false, {4242}},
      std::vector<WindowBufferPtr>{}, KwargList{}, nullptr));
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> DuplicateSlotName(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  for (const auto& s : c->scopes) {
    if (s->slots.size() < 2) continue;
    auto first = AllocAssignOf(*c, s->slots[0]->base.get());
    auto second = AllocAssignOf(*c, s->slots[1]->base.get());
    if (!first || !second) continue;
    const auto& first_call = static_cast<const Call&>(*first->value);
    auto call = ir::MakeNode<Call>(static_cast<const Call&>(*second->value));
    for (auto& [k, v] : call->kwargs) {
      if (k == "name") v = *FindKwarg(first_call.kwargs, "name");
    }
    Rewriter r;
    r.stmts[second.get()] = Assign(second->var, call, second->span());
    return RewriteFunction(p, c->fn, r);
  }
  return std::nullopt;
}

std::optional<ProgramPtr> RemoveSignal(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  std::vector<ir::NodeRef<const AssignStmt>> assigns;
  CollectAssigns(c->inner, assigns);
  for (const auto& a : assigns) {
    if (a->value->kind() != NodeKind::kCall) continue;
    const auto& call = static_cast<const Call&>(*a->value);
    if (call.OpName() != ops::kAllReduce || call.args.size() != 2) continue;
    auto copy = ir::MakeNode<Call>(call);
    copy->args.pop_back();
    Rewriter r;
    r.stmts[a.get()] = Assign(a->var, copy, a->span());
    return RewriteFunction(p, c->fn, r);
  }
  return std::nullopt;
}

std::optional<ProgramPtr> UnwrapScope(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  scopes.pop_back();
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> RenameScope(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  scopes[0] = Edit(scopes[0], [](CommDomainScopeStmt& s) { s.name_hint = "comm_renamed"; });
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> ScopeAttrs(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  auto scopes = c->scopes;
  scopes[0] =
      Edit(scopes[0], [](CommDomainScopeStmt& s) { s.attrs.emplace_back("tag", int64_t{1}); });
  return WithScopes(p, *c, scopes);
}

std::optional<ProgramPtr> HoistStatement(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c || !c->inner || c->inner->kind() != NodeKind::kSeqStmts) return std::nullopt;
  auto stmts = static_cast<const SeqStmts&>(*c->inner).stmts;
  if (stmts.empty()) return std::nullopt;
  StmtPtr hoisted = stmts.front();
  stmts.erase(stmts.begin());
  StmtPtr chain = BuildChain(c->scopes, Seq(stmts));
  auto outer = static_cast<const SeqStmts&>(*chain).stmts;
  outer.insert(outer.begin(), hoisted);
  return ReplaceFunction(p, c->fn, WithBody(c->fn, Seq(outer)));
}

std::optional<ProgramPtr> NegativeDevice(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  // Rewrites the first dispatch whose arguments include a Var with a back-reference.
  // Calls of Graph or InCore functions carry device= as well but are no dispatches:
  // a bad device there breaks only the relational check, not V021.
  std::set<std::string> chips;
  for (const auto& fn : p->functions) {
    if (IsChipOrchestrator(*fn)) chips.insert(fn->name);
  }
  struct Finder : IRMutator {
    const std::set<std::string>* chips = nullptr;
    bool done = false;
    NodePtr MutateCall(const ir::NodeRef<const Call>& n) override {
      if (done || !n->Callee() || !chips->count(n->Callee()->name) ||
          !FindAttr(n->attrs, "device")) {
        return IRMutator::MutateCall(n);
      }
      bool has_view = std::any_of(n->args.begin(), n->args.end(), [](const ExprPtr& a) {
        return a && IsVarLikeKind(a->kind()) && WindowOfType(a->type);
      });
      if (!has_view) return n;
      done = true;
      auto copy = ir::MakeNode<Call>(*n);
      for (auto& [k, v] : copy->attrs) {
        if (k == "device") v = Int(-1);
      }
      return copy;
    }
  } finder;
  finder.chips = &chips;
  FunctionPtr fn = finder.MutateAs<Function>(c->fn);
  if (!finder.done) return std::nullopt;
  return ReplaceFunction(p, c->fn, fn);
}

// Gives the view defined by `a` (Var and defining Call alike, so V006 stays quiet)
// a WindowBuffer of its own: equal in value to the alloc's, but another object.
ProgramPtr CopyWindowOfAssign(const ProgramPtr& p, const Chain& c,
                              const ir::NodeRef<const AssignStmt>& a) {
  auto copy = ir::MakeNode<const WindowBuffer>(*WindowOfType(a->var->type));
  TypePtr t = WithWindow(a->var->type, copy);
  auto var = ir::MakeNode<Var>(*a->var);
  var->type = t;
  auto call = ir::MakeNode<Call>(static_cast<const Call&>(*a->value));
  call->type = t;
  Rewriter r;
  r.MapVar(a->var.get(), var);
  r.stmts[a.get()] = Assign(var, call, a->span());
  return RewriteFunction(p, c.fn, r);
}

bool IsInPlaceCollective(std::string_view op) {
  return op == ops::kAllReduce || op == ops::kAllGather || op == ops::kAllToAll ||
         op == ops::kAllToAllV;
}

std::optional<ProgramPtr> InPlaceResultWindowBufferCopy(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  std::vector<ir::NodeRef<const AssignStmt>> assigns;
  CollectAssigns(c->inner, assigns);
  for (const auto& a : assigns) {
    if (!WindowOfType(a->var->type) || a->value->kind() != NodeKind::kCall) continue;
    if (!IsInPlaceCollective(static_cast<const Call&>(*a->value).OpName())) continue;
    if (!WindowOfType(a->value->type)) continue;
    return CopyWindowOfAssign(p, *c, a);
  }
  return std::nullopt;
}

std::optional<ProgramPtr> InnerViewWithoutWindowBuffer(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  // Prefer a view under a loop or if; fall back to the last view of the body so
  // straight-line programs are probed at a second position too.
  std::vector<ir::NodeRef<const AssignStmt>> assigns;
  CollectNestedAssigns(c->inner, false, assigns);
  std::vector<ir::NodeRef<const AssignStmt>> all;
  CollectAssigns(c->inner, all);
  assigns.insert(assigns.end(), all.rbegin(), all.rend());
  for (const auto& a : assigns) {
    if (!WindowOfType(a->var->type) || a->value->kind() != NodeKind::kCall) continue;
    if (static_cast<const Call&>(*a->value).OpName() != ops::kWindow) continue;
    TypePtr t = WithWindow(a->var->type, nullptr);
    auto var = ir::MakeNode<Var>(*a->var);
    var->type = t;
    auto call = ir::MakeNode<Call>(static_cast<const Call&>(*a->value));
    call->type = t;
    Rewriter r;
    r.MapVar(a->var.get(), var);
    r.stmts[a.get()] = Assign(var, call, a->span());
    return RewriteFunction(p, c->fn, r);
  }
  return std::nullopt;
}

std::optional<ProgramPtr> RemoveBareSignal(const ProgramPtr& p) {
  auto c = FirstChain(p);
  if (!c) return std::nullopt;
  std::vector<ir::NodeRef<const EvalStmt>> evals;
  CollectEvals(c->inner, evals);
  for (const auto& e : evals) {
    if (!e->expr || e->expr->kind() != NodeKind::kCall) continue;
    const auto& call = static_cast<const Call&>(*e->expr);
    if (call.OpName() != ops::kAllReduce || call.args.size() != 2) continue;
    auto copy = ir::MakeNode<Call>(call);
    copy->args.pop_back();
    auto stmt = ir::MakeNode<EvalStmt>(*e);  // keeps the span
    stmt->expr = copy;
    Rewriter r;
    r.stmts[e.get()] = stmt;
    return RewriteFunction(p, c->fn, r);
  }
  return std::nullopt;
}

}  // namespace

const std::vector<Mutator>& AllMutators() {
  static const std::vector<Mutator> registry = {
      {"view-window-buffer-copy", "CDS-V003", ViewWindowBufferCopy},
      {"view-without-window-buffer", "CDS-V001", ViewWithoutWindowBuffer},
      {"drop-call-type", "CDS-V006", DropCallType},
      {"drop-slot", "CDS-V008", DropSlot},
      {"duplicate-slot", "CDS-V009", DuplicateSlot},
      {"change-devices", "CDS-V018", ChangeDevices},
      {"all-to-subset", "CDS-V018", AllToSubset},
      {"swap-scopes", "CDS-V014", SwapScopes},
      {"reorder-slots", "CDS-V015", ReorderSlots},
      {"chip-param-back-reference", "CDS-V007", ChipParamBackReference},
      {"window-buffer-size", "CDS-V004", WindowBufferSize},
      {"window-buffer-base", "CDS-V002", WindowBufferBase},
      {"add-empty-scope", "CDS-V011", AddEmptyScope},
      {"duplicate-slot-name", "CDS-V010", DuplicateSlotName},
      {"remove-allreduce-signal", "CDS-V022", RemoveSignal},
      {"unwrap-scope", "CDS-V008", UnwrapScope},
      {"load-from-host", "CDS-V005", LoadFromHost},
      {"rename-scope", "CDS-V013", RenameScope},
      {"scope-attrs", "CDS-V017", ScopeAttrs},
      {"hoist-statement-out-of-scopes", "CDS-V012", HoistStatement},
      {"negative-device", "CDS-V021", NegativeDevice},
      {"in-place-result-window-buffer-copy", "CDS-V003", InPlaceResultWindowBufferCopy},
      {"inner-view-without-window-buffer", "CDS-V001", InnerViewWithoutWindowBuffer},
      {"remove-bare-allreduce-signal", "CDS-V022", RemoveBareSignal},
  };
  return registry;
}

std::vector<const Mutator*> ApplicableMutators(const ProgramPtr& program) {
  std::vector<const Mutator*> out;
  for (const auto& m : AllMutators()) {
    if (m.apply(program)) out.push_back(&m);
  }
  return out;
}

}  // namespace cds::verify::testing
