#include "verifier/host_analysis.h"

#include <fmt/format.h>

#include "ir/op_registry.h"
#include "ir/walk.h"
#include "verifier/orchestrators.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

size_t HostAnalysis::ViewAlloc(const ExprPtr& e) const {
  if (!e || !IsVarLikeKind(e->kind())) return kNone;
  auto it = alloc_of_view.find(static_cast<const Var*>(e.get()));
  return it == alloc_of_view.end() ? kNone : it->second;
}

namespace {

const Call* AsCall(const ExprPtr& e) {
  return e && e->kind() == NodeKind::kCall ? static_cast<const Call*>(e.get()) : nullptr;
}

const CommDomainScopeStmt* AsScope(const StmtPtr& s) {
  return s && s->kind() == NodeKind::kCommDomainScopeStmt
             ? static_cast<const CommDomainScopeStmt*>(s.get())
             : nullptr;
}

std::string AllocName(const Call& call, const Var& lhs) {
  if (const AttrValue* v = FindKwarg(call.kwargs, "name")) {
    if (const auto* s = std::get_if<std::string>(v)) return *s;
  }
  return lhs.name_hint;
}

// The statement and operand walk comes from ir/walk.h; the statements handled
// here by kind are the ones the analysis reads (assignments define allocs, views
// and bounds; loops scope their induction variable's descriptor; a scope inside
// the body is a stray one) or checks for holes (a null entry in a statement list).
class HostWalker {
 public:
  HostWalker(HostAnalysis& a, DiagnosticSink& sink) : a_(a), sink_(sink) {}

  void Run() {
    const Function& fn = *a_.fn;
    StmtPtr inner = PeelChain(fn.body);
    Stmt(inner);
    a_.chain_length = 0;
    for (const auto& s : a_.scopes) a_.chain_length += s.in_chain ? 1 : 0;
  }

 private:
  // The materialized shape is SeqStmts[scope0[SeqStmts[scope1[... SeqStmts[body]]]]];
  // returns the innermost body and records the chain.
  StmtPtr PeelChain(const StmtPtr& body) {
    StmtPtr cur = body;
    while (cur) {
      const CommDomainScopeStmt* scope = nullptr;
      if (cur->kind() == NodeKind::kSeqStmts) {
        const auto& seq = static_cast<const SeqStmts&>(*cur);
        if (seq.stmts.size() == 1) scope = AsScope(seq.stmts[0]);
      } else if ((scope = AsScope(cur))) {
        a_.chain_problems.push_back({fmt::format("scope '{}' of '{}' is not wrapped in a SeqStmts",
                                                 scope->name_hint, a_.fn->name),
                                     scope->span()});
      }
      if (!scope) break;
      a_.scopes.push_back({scope, true, {}});
      cur = scope->body;
    }
    if (!a_.scopes.empty() && cur && cur->kind() != NodeKind::kSeqStmts) {
      a_.chain_problems.push_back(
          {fmt::format("the body of innermost scope '{}' of '{}' is a {}, not a SeqStmts",
                       a_.scopes.back().stmt->name_hint, a_.fn->name, NodeKindName(cur->kind())),
           cur->span()});
    }
    if (!a_.scopes.empty() && !cur) {
      a_.chain_problems.push_back({fmt::format("innermost scope '{}' of '{}' has no body",
                                               a_.scopes.back().stmt->name_hint, a_.fn->name),
                                   a_.scopes.back().stmt->span()});
    }
    return cur;
  }

  void Malformed(const std::string& what, const Span& span) {
    sink_.Report(CheckId::kMalformedIR, fmt::format("in '{}': {}", a_.fn->name, what), span);
  }

  void Stmt(const StmtPtr& s) {
    if (!s) return;
    switch (s->kind()) {
      case NodeKind::kSeqStmts:
        for (const auto& x : static_cast<const SeqStmts&>(*s).stmts) {
          if (!x) Malformed("null statement in a statement list", s->span());
        }
        break;
      case NodeKind::kAssignStmt:
        Assign(static_cast<const AssignStmt&>(*s));
        return;
      case NodeKind::kForStmt:
        For(static_cast<const ForStmt&>(*s));
        return;
      case NodeKind::kCommDomainScopeStmt: {
        const auto& scope = static_cast<const CommDomainScopeStmt&>(*s);
        a_.chain_problems.push_back(
            {fmt::format(
                 "scope '{}' of '{}' does not wrap the whole body (it sits inside the statements)",
                 scope.name_hint, a_.fn->name),
             scope.span()});
        a_.scopes.push_back({&scope, false, {}});
        break;
      }
      default:
        break;
    }
    Children(*s);
  }

  void Children(const ir::Stmt& s) {
    ForEachStmtOperand(s, [&](const ExprPtr& e) { Expr(e); });
    ForEachSubStmt(s, [&](const StmtPtr& c) { Stmt(c); });
  }

  void For(const ForStmt& loop) {
    ForEachStmtOperand(loop, [&](const ExprPtr& e) { Expr(e); });
    if (!loop.loop_var) {
      Malformed("for loop without a loop variable", loop.span());
      Stmt(loop.body);
      return;
    }
    loops_[loop.loop_var.get()] = LoopDescriptor(loop, bounds_);
    Stmt(loop.body);
    loops_.erase(loop.loop_var.get());
  }

  void Assign(const AssignStmt& s) {
    Expr(s.value);
    if (!s.var || !s.value) {
      Malformed(s.var ? "assignment without a value" : "assignment without a variable", s.span());
      return;
    }
    const Var* lhs = s.var.get();
    const NodeKind vk = s.value->kind();
    if ((vk == NodeKind::kCall || IsVarLikeKind(vk)) && !TypesAgree(lhs->type, s.value->type))
      a_.asymmetric_assigns.push_back(&s);
    if (vk == NodeKind::kConstInt) {
      bounds_[lhs] = {BoundKind::kConst, static_cast<const ConstInt&>(*s.value).value};
      return;
    }
    if (IsVarLikeKind(vk)) {
      size_t alloc = a_.ViewAlloc(s.value);
      if (alloc != kNone) AddView(lhs, &s, alloc, ViewKind::kAlias);
      return;
    }
    const Call* call = AsCall(s.value);
    if (!call) return;
    const std::string& op = call->OpName();
    if (op.empty()) return;
    if (op == ops::kAllocWindowBuffer) {
      AllocInfo info;
      info.var = lhs;
      info.call = call;
      info.span = s.span().IsKnown() ? s.span() : call->span();
      info.name = AllocName(*call, *lhs);
      a_.alloc_of_ptr[lhs] = a_.allocs.size();
      a_.allocs.push_back(std::move(info));
    } else if (op == ops::kWindow) {
      if (!call->args.empty() && call->args[0] && IsVarLikeKind(call->args[0]->kind())) {
        auto it = a_.alloc_of_ptr.find(static_cast<const Var*>(call->args[0].get()));
        if (it != a_.alloc_of_ptr.end()) AddView(lhs, &s, it->second, ViewKind::kWindow);
      }
    } else if (op == ops::kWorldSize) {
      bounds_[lhs] = {BoundKind::kWorldSize, 0};
    } else if (op == ops::kAllReduce) {
      if (!call->args.empty()) {
        size_t alloc = a_.ViewAlloc(call->args[0]);
        if (alloc != kNone) AddView(lhs, &s, alloc, ViewKind::kCollectiveResult);
      }
    } else if (op == ops::kAllGather || op == ops::kAllToAll || op == ops::kAllToAllV) {
      if (call->args.size() > 1) {
        size_t alloc = a_.ViewAlloc(call->args[1]);
        if (alloc != kNone) AddView(lhs, &s, alloc, ViewKind::kCollectiveResult);
      }
    }
  }

  void AddView(const Var* var, const AssignStmt* stmt, size_t alloc, ViewKind kind) {
    a_.alloc_of_view[var] = alloc;
    a_.allocs[alloc].views.push_back(a_.views.size());
    a_.views.push_back({var, stmt, alloc, kind});
  }

  // A use of a Var is a leaf: what a definition reads was walked where it stands.
  void Expr(const ExprPtr& e) {
    if (!e || IsVarLikeKind(e->kind())) return;
    if (const Call* c = AsCall(e)) {
      HandleCall(*c);
      for (const auto& x : c->args) {
        if (!x) Malformed(fmt::format("null argument of a call to {}", CalleeText(*c)), c->span());
      }
    }
    ForEachOperand(*e, [&](const ExprPtr& x) { Expr(x); });
  }

  bool IsChipOrchestratorName(const std::string& name) {
    auto it = chip_cache_.find(name);
    if (it != chip_cache_.end()) return it->second;
    // A linear scan that skips null functions (reported as CDS-V029 by the caller):
    // Program::FindFunction's binary search would dereference them. Cached per name.
    bool chip = false;
    for (const auto& f : a_.program->functions) {
      if (f && f->name == name) {
        chip = IsChipOrchestrator(*f);
        break;
      }
    }
    chip_cache_.emplace(name, chip);
    return chip;
  }

  void Pair(const Call& c, size_t from_arg, size_t to_arg) {
    if (c.args.size() <= std::max(from_arg, to_arg)) return;
    size_t from = a_.ViewAlloc(c.args[from_arg]);
    size_t to = a_.ViewAlloc(c.args[to_arg]);
    if (from != kNone && to != kNone) a_.inheritances.push_back({from, to});
  }

  void HandleCall(const Call& c) {
    if (GlobalVarPtr callee = c.Callee()) {
      if (IsChipOrchestratorName(callee->name)) Dispatch(c, callee->name);
      return;
    }
    const std::string& op = c.OpName();
    if (op == ops::kAllReduce) {
      a_.allreduces.push_back(&c);
      Pair(c, 0, 1);
    } else if (op == ops::kBroadcast || op == ops::kReduceScatter) {
      Pair(c, 0, 1);
    } else if (op == ops::kAllGather || op == ops::kAllToAll) {
      Pair(c, 1, 2);
    } else if (op == ops::kAllToAllV) {
      Pair(c, 1, 2);
      Pair(c, 1, 4);
    }
  }

  void Dispatch(const Call& c, const std::string& callee) {
    std::vector<size_t> consumed;
    for (const auto& arg : c.args) {
      size_t alloc = a_.ViewAlloc(arg);
      if (alloc != kNone) consumed.push_back(alloc);
    }
    // A device= that cannot matter (no view is passed) is not the verifier's business.
    if (consumed.empty()) return;
    const ExprPtr device = FindAttr(c.attrs, "device");
    // Without device= the runtime places the dispatch: it covers no device.
    if (!device) {
      for (size_t alloc : consumed) a_.allocs[alloc].unplaced = true;
      return;
    }
    Descriptor d = DeviceDescriptor(device, loops_);
    if (!d.ok) {
      sink_.Report(
          CheckId::kDispatchDeviceUnresolvable,
          fmt::format(
              "dispatch of '{}' in '{}' passes window view(s) of alloc '{}' but its device= {}",
              callee, a_.fn->name, a_.allocs[consumed[0]].name, d.why),
          c.span());
      return;
    }
    for (size_t alloc : consumed) {
      AllocInfo& info = a_.allocs[alloc];
      if (!info.dispatched) {
        info.dispatch_cov = d.set;
        info.dispatched = true;
      } else if (info.dispatch_cov != d.set) {
        info.dispatch_cov.Absorb(d.set);
      }
    }
  }

  HostAnalysis& a_;
  DiagnosticSink& sink_;
  BoundEnv bounds_;
  LoopEnv loops_;
  absl::flat_hash_map<std::string, bool> chip_cache_;
};

}  // namespace

HostAnalysis AnalyzeHostOrchestrator(const Program& program, const Function& fn,
                                     DiagnosticSink& sink) {
  HostAnalysis a;
  a.program = &program;
  a.fn = &fn;
  HostWalker(a, sink).Run();
  return a;
}

}  // namespace cds::verify
