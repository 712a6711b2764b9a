#include "verifier/host_analysis.h"

#include <fmt/format.h>

#include "ir/op_registry.h"
#include "verifier/type_util.h"


namespace cds::verify {

using namespace cds::ir;

size_t HostAnalysis::ViewAlloc(const ExprPtr& e) const {
  if (!e || !IsVarLikeKind(e->kind())) return kNone;
  const size_t* alloc = alloc_of_view.Find(e.get());
  return alloc == nullptr ? kNone : *alloc;
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

  void Stmts(std::span<const StmtPtr> stmts, const Span& owner) {
    for (const auto& s : stmts) {
      if (!s) {
        Malformed("null statement in a statement list", owner);
        continue;
      }
      Stmt(s);
    }
  }

  void Stmt(const StmtPtr& s) {
    if (!s) return;
    switch (s->kind()) {
      case NodeKind::kSeqStmts:
        Stmts(static_cast<const SeqStmts&>(*s).stmts, s->span());
        break;
      case NodeKind::kAssignStmt:
        Assign(static_cast<const AssignStmt&>(*s));
        break;
      case NodeKind::kUnpackAssignStmt:
        Expr(static_cast<const UnpackAssignStmt&>(*s).value);
        break;
      case NodeKind::kSubscriptAssignStmt: {
        const auto& x = static_cast<const SubscriptAssignStmt&>(*s);
        Expr(x.target);
        Expr(x.value);
        break;
      }
      case NodeKind::kEvalStmt:
        Expr(static_cast<const EvalStmt&>(*s).expr);
        break;
      case NodeKind::kReturnStmt:
        for (const auto& v : static_cast<const ReturnStmt&>(*s).values) Expr(v);
        break;
      case NodeKind::kYieldStmt:
        for (const auto& v : static_cast<const YieldStmt&>(*s).values) Expr(v);
        break;
      case NodeKind::kForStmt:
        For(static_cast<const ForStmt&>(*s));
        break;
      case NodeKind::kWhileStmt: {
        const auto& w = static_cast<const WhileStmt&>(*s);
        Expr(w.cond);
        Stmt(w.body);
        break;
      }
      case NodeKind::kIfStmt: {
        const auto& i = static_cast<const IfStmt&>(*s);
        Expr(i.cond);
        Stmt(i.then_body);
        Stmt(i.else_body);
        break;
      }
      case NodeKind::kCommDomainScopeStmt: {
        const auto& scope = static_cast<const CommDomainScopeStmt&>(*s);
        a_.chain_problems.push_back(
            {fmt::format(
                 "scope '{}' of '{}' does not wrap the whole body (it sits inside the statements)",
                 scope.name_hint, a_.fn->name),
             scope.span()});
        a_.scopes.push_back({&scope, false, {}});
        Stmt(scope.body);
        break;
      }
      case NodeKind::kScopeStmt: {
        const auto& x = static_cast<const ScopeStmt&>(*s);
        for (const auto& e : x.args) Expr(e);
        Stmt(x.body);
        break;
      }
      default:
        Malformed(fmt::format("{} where a statement belongs", NodeKindName(s->kind())), s->span());
        break;
    }
  }

  void For(const ForStmt& loop) {
    Expr(loop.start);
    Expr(loop.stop);
    Expr(loop.step);
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
      bounds_.Set(lhs, {BoundKind::kConst, static_cast<const ConstInt&>(*s.value).value});
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
      a_.alloc_of_ptr.Set(lhs, a_.allocs.size());
      a_.allocs.push_back(std::move(info));
    } else if (op == ops::kWindow) {
      if (!call->args.empty() && call->args[0] && IsVarLikeKind(call->args[0]->kind())) {
        if (const size_t* alloc = a_.alloc_of_ptr.Find(call->args[0].get()))
          AddView(lhs, &s, *alloc, ViewKind::kWindow);
      }
    } else if (op == ops::kWorldSize) {
      bounds_.Set(lhs, {BoundKind::kWorldSize, 0});
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
    a_.alloc_of_view.Set(var, alloc);
    a_.allocs[alloc].views.push_back(a_.views.size());
    a_.views.push_back({var, stmt, alloc, kind});
  }

  void Expr(const ExprPtr& e) {
    if (!e) return;
    switch (e->kind()) {
      case NodeKind::kCall: {
        const auto& c = static_cast<const Call&>(*e);
        HandleCall(c);
        for (const auto& x : c.args) {
          if (!x) {
            Malformed(fmt::format("null argument of a call to {}", DescribeExpr(e)), c.span());
            continue;
          }
          Expr(x);
        }
        for (const auto& [k, v] : c.kwargs) {
          if (const auto* x = std::get_if<ExprPtr>(&v)) Expr(*x);
        }
        for (const auto& [k, v] : c.attrs) Expr(v);
        break;
      }
      case NodeKind::kBinaryExpr: {
        const auto& b = static_cast<const BinaryExpr&>(*e);
        Expr(b.lhs);
        Expr(b.rhs);
        break;
      }
      case NodeKind::kUnaryExpr:
        Expr(static_cast<const UnaryExpr&>(*e).operand);
        break;
      case NodeKind::kMakeTuple:
        for (const auto& x : static_cast<const MakeTuple&>(*e).elements) Expr(x);
        break;
      case NodeKind::kTupleGetItem:
        Expr(static_cast<const TupleGetItem&>(*e).tuple);
        break;
      case NodeKind::kSubscript: {
        const auto& x = static_cast<const Subscript&>(*e);
        Expr(x.value);
        for (const auto& i : x.indices) Expr(i);
        break;
      }
      case NodeKind::kSlice: {
        const auto& x = static_cast<const Slice&>(*e);
        Expr(x.start);
        Expr(x.stop);
        Expr(x.step);
        break;
      }
      default:
        break;
    }
  }

  bool IsChipOrchestratorName(const std::string& name) {
    auto it = chip_cache_.find(name);
    if (it != chip_cache_.end()) return it->second;
    // A linear scan that skips null functions (reported as CDS-V029 by the caller):
    // Program::FindFunction's binary search would dereference them. Cached per name.
    bool chip = false;
    for (const auto& f : a_.program->functions) {
      if (f && f->name == name) {
        chip = f->IsChipOrchestrator();
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
    consumed_.clear();
    for (const auto& arg : c.args) {
      size_t alloc = a_.ViewAlloc(arg);
      if (alloc != kNone) consumed_.push_back(alloc);
    }
    // A device= that cannot matter (no view is passed) is not the verifier's business.
    if (consumed_.empty()) return;
    // The common descriptors (a loop variable of an enclosing loop, a non-negative
    // constant) are read without copying a DeviceSet; everything else goes through
    // DeviceDescriptor, which also words the reason.
    const ExprPtr* device = nullptr;
    for (const auto& [k, v] : c.attrs) {
      if (k == "device") {
        device = &v;
        break;
      }
    }
    const DeviceSet* set = nullptr;
    if (device != nullptr && *device) {
      const ir::Expr& e = **device;
      if (IsVarLikeKind(e.kind())) {
        auto it = loops_.find(static_cast<const Var*>(&e));
        if (it != loops_.end() && it->second.ok) set = &it->second.set;
      } else if (e.kind() == NodeKind::kConstInt && static_cast<const ConstInt&>(e).value >= 0) {
        const_set_.all = false;
        const_set_.ids.assign(1, static_cast<const ConstInt&>(e).value);
        set = &const_set_;
      }
    }
    if (set != nullptr) {
      AddCoverage(*set);
      return;
    }
    Descriptor d = DeviceDescriptor(device != nullptr ? *device : ExprPtr(), loops_);
    if (!d.ok) {
      sink_.Report(
          CheckId::kDispatchDeviceUnresolvable,
          fmt::format(
              "dispatch of '{}' in '{}' passes window view(s) of alloc '{}' but its device= {}",
              callee, a_.fn->name, a_.allocs[consumed_[0]].name, d.why),
          c.span());
      return;
    }
    AddCoverage(d.set);
  }

  void AddCoverage(const DeviceSet& set) {
    for (size_t alloc : consumed_) {
      AllocInfo& info = a_.allocs[alloc];
      if (!info.dispatched) {
        info.dispatch_cov = set;
        info.dispatched = true;
      } else if (!info.dispatch_cov.all && info.dispatch_cov != set) {
        info.dispatch_cov = info.dispatch_cov.Merge(set);
      }
    }
  }

  HostAnalysis& a_;
  DiagnosticSink& sink_;
  BoundTable bounds_;
  LoopEnv loops_;
  std::unordered_map<std::string, bool> chip_cache_;
  std::vector<size_t> consumed_;
  DeviceSet const_set_;  // scratch for a constant device= (keeps its buffer)
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
