#include "tests/prop/malformed.h"

#include <random>

#include "ir/ir.h"
#include "tests/verifier/mutators.h"
#include "verifier/orchestrators.h"

namespace cds::prop {

using namespace cds::ir;
using verify::testing::BuildChain;
using verify::testing::WithBody;

namespace {

template <typename T>
ir::NodeRef<T> Copy(const StmtPtr& s) {
  return ir::MakeNode<T>(static_cast<const T&>(*s));
}

StmtPtr EditIn(const StmtPtr& s, const std::function<StmtPtr(const StmtPtr&)>& edit, bool& done) {
  if (done || !s) return s;
  if (StmtPtr r = edit(s)) {
    done = true;
    return r;
  }
  switch (s->kind()) {
    case NodeKind::kSeqStmts: {
      const auto& seq = static_cast<const SeqStmts&>(*s);
      std::vector<StmtPtr> stmts;
      for (const auto& x : seq.stmts) stmts.push_back(EditIn(x, edit, done));
      if (!done) return s;
      auto c = Copy<SeqStmts>(s);
      c->stmts = std::move(stmts);
      return c;
    }
    case NodeKind::kForStmt: {
      StmtPtr b = EditIn(static_cast<const ForStmt&>(*s).body, edit, done);
      if (!done) return s;
      auto c = Copy<ForStmt>(s);
      c->body = b;
      return c;
    }
    case NodeKind::kWhileStmt: {
      StmtPtr b = EditIn(static_cast<const WhileStmt&>(*s).body, edit, done);
      if (!done) return s;
      auto c = Copy<WhileStmt>(s);
      c->body = b;
      return c;
    }
    case NodeKind::kIfStmt: {
      const auto& i = static_cast<const IfStmt&>(*s);
      StmtPtr t = EditIn(i.then_body, edit, done);
      StmtPtr e = EditIn(i.else_body, edit, done);
      if (!done) return s;
      auto c = Copy<IfStmt>(s);
      c->then_body = t;
      c->else_body = e;
      return c;
    }
    case NodeKind::kScopeStmt: {
      StmtPtr b = EditIn(static_cast<const ScopeStmt&>(*s).body, edit, done);
      if (!done) return s;
      auto c = Copy<ScopeStmt>(s);
      c->body = b;
      return c;
    }
    case NodeKind::kCommDomainScopeStmt: {
      StmtPtr b = EditIn(static_cast<const CommDomainScopeStmt&>(*s).body, edit, done);
      if (!done) return s;
      auto c = Copy<CommDomainScopeStmt>(s);
      c->body = b;
      return c;
    }
    default:
      return s;
  }
}

ProgramPtr WithFunctions(const ProgramPtr& p, std::vector<FunctionPtr> fns) {
  auto out = ir::MakeNode<Program>(p->name, p->dynamic_dims, std::move(fns));
  out->set_span(p->span());
  return out;
}

// The CommDomainScopeStmt chain of a materialized host body, outermost first.
std::vector<CommDomainScopeStmtPtr> Chain(const StmtPtr& body, StmtPtr* inner = nullptr) {
  std::vector<CommDomainScopeStmtPtr> out;
  StmtPtr cur = body;
  while (cur && cur->kind() == NodeKind::kSeqStmts) {
    const auto& seq = static_cast<const SeqStmts&>(*cur);
    if (seq.stmts.size() != 1 || !seq.stmts[0] ||
        seq.stmts[0]->kind() != NodeKind::kCommDomainScopeStmt) {
      break;
    }
    out.push_back(ir::PtrCast<const CommDomainScopeStmt>(seq.stmts[0]));
    cur = out.back()->body;
  }
  if (inner) *inner = cur;
  return out;
}

// Rebuilds the first host orchestrator with a scope chain: `f(scopes, inner)`
// returns its new body, or null to skip.
std::optional<ProgramPtr> EditChain(
    const ProgramPtr& p,
    const std::function<StmtPtr(std::vector<CommDomainScopeStmtPtr>&, StmtPtr&)>& f) {
  for (const auto& fn : p->functions) {
    if (!verify::IsHostOrchestrator(*fn)) continue;
    StmtPtr inner;
    std::vector<CommDomainScopeStmtPtr> scopes = Chain(fn->body, &inner);
    if (scopes.empty()) continue;
    StmtPtr body = f(scopes, inner);
    if (!body) continue;
    return ReplaceFunction(p, fn, WithBody(fn, body));
  }
  return std::nullopt;
}

const Call* AsCall(const ExprPtr& e) {
  return e && e->kind() == NodeKind::kCall ? static_cast<const Call*>(e.get()) : nullptr;
}

bool IsDistributed(const VarPtr& v) {
  return v && v->type && v->type->kind() == NodeKind::kDistributedTensorType;
}

// An AssignStmt edit: `pred(assign)` selects it, `f` builds the replacement.
std::function<StmtPtr(const StmtPtr&)> OnAssign(
    std::function<bool(const AssignStmt&)> pred,
    std::function<StmtPtr(const ir::NodeRef<const AssignStmt>&)> f) {
  return [pred, f](const StmtPtr& s) -> StmtPtr {
    if (s->kind() != NodeKind::kAssignStmt) return nullptr;
    auto a = ir::PtrCast<const AssignStmt>(s);
    if (!a->var || !a->value || !pred(*a)) return nullptr;
    return f(a);
  };
}

StmtPtr Retyped(const ir::NodeRef<const AssignStmt>& a, TypePtr var_type, ExprPtr value = nullptr) {
  auto c = ir::MakeNode<AssignStmt>(*a);
  c->var = MakeVar(a->var->name_hint, std::move(var_type), a->var->span());
  if (value) c->value = std::move(value);
  return c;
}

bool CallOfKind(const AssignStmt& a, NodeKind type_kind) {
  const Call* c = AsCall(a.value);
  return c && c->type && c->type->kind() == type_kind && a.var->type &&
         a.var->type->kind() == type_kind;
}

std::vector<MalformedMutator> Build() {
  std::vector<MalformedMutator> m;
  // --- scope chain shapes (CDS-V012) --------------------------------------------
  m.push_back({"scope-not-in-seq", "CDS-V012", true, [](const ProgramPtr& p) {
                 return EditChain(p, [](auto& scopes, StmtPtr& inner) -> StmtPtr {
                   auto outer = ir::MakeNode<CommDomainScopeStmt>(*scopes[0]);
                   outer->body = BuildChain({scopes.begin() + 1, scopes.end()}, inner);
                   return outer;  // the body is the scope itself, not SeqStmts[scope]
                 });
               }});
  m.push_back({"innermost-body-not-seq", "CDS-V012", true, [](const ProgramPtr& p) {
                 return EditChain(p, [](auto& scopes, StmtPtr& inner) -> StmtPtr {
                   auto wrapped = ir::MakeNode<ScopeStmt>("pl.manual_scope", std::vector<ExprPtr>{},
                                                          KwargList{}, nullptr, inner);
                   return BuildChain(scopes, wrapped);
                 });
               }});
  m.push_back({"innermost-body-null", "CDS-V012", true, [](const ProgramPtr& p) {
                 return EditChain(p, [](auto& scopes, StmtPtr&) -> StmtPtr {
                   auto last = ir::MakeNode<CommDomainScopeStmt>(*scopes.back());
                   last->body = nullptr;
                   scopes.back() = last;
                   std::vector<CommDomainScopeStmtPtr> outer(scopes.begin(), scopes.end() - 1);
                   return BuildChain(outer, Seq({last}));
                 });
               }});
  m.push_back({"duplicate-scope-devices", "CDS-V019", true, [](const ProgramPtr& p) {
                 return EditChain(p, [](auto& scopes, StmtPtr& inner) -> StmtPtr {
                   if (scopes.size() < 2) return nullptr;
                   auto second = ir::MakeNode<CommDomainScopeStmt>(*scopes[1]);
                   second->devices = scopes[0]->devices;
                   scopes[1] = second;
                   return BuildChain(scopes, inner);
                 });
               }});
  m.push_back({"slot-of-no-alloc", "CDS-V016", true, [](const ProgramPtr& p) {
                 return EditChain(p, [](auto& scopes, StmtPtr& inner) -> StmtPtr {
                   auto first = ir::MakeNode<CommDomainScopeStmt>(*scopes[0]);
                   auto ghost = MakeVar("ghost_buf", PtrType::Get());
                   first->slots.push_back(ir::MakeNode<WindowBuffer>(ghost, Int(64), false, false));
                   scopes[0] = first;
                   return BuildChain(scopes, inner);
                 });
               }});
  m.push_back({"null-slot", "CDS-V029", true, [](const ProgramPtr& p) {
                 return EditChain(p, [](auto& scopes, StmtPtr& inner) -> StmtPtr {
                   auto first = ir::MakeNode<CommDomainScopeStmt>(*scopes[0]);
                   first->slots.push_back(nullptr);
                   scopes[0] = first;
                   return BuildChain(scopes, inner);
                 });
               }});
  // --- null and missing nodes (CDS-V029) ------------------------------------------
  m.push_back({"null-statement", "CDS-V029", true, [](const ProgramPtr& p) {
                 return EditChain(p, [](auto& scopes, StmtPtr& inner) -> StmtPtr {
                   if (!inner || inner->kind() != NodeKind::kSeqStmts) return nullptr;
                   auto seq = Copy<SeqStmts>(inner);
                   seq->stmts.insert(seq->stmts.begin(), nullptr);
                   return BuildChain(scopes, seq);
                 });
               }});
  m.push_back({"for-without-loop-var", "CDS-V029", true, [](const ProgramPtr& p) {
                 return EditFirstHostStmt(p, [](const StmtPtr& s) -> StmtPtr {
                   if (s->kind() != NodeKind::kForStmt) return nullptr;
                   auto c = Copy<ForStmt>(s);
                   c->loop_var = nullptr;
                   return c;
                 });
               }});
  m.push_back({"assign-without-value", "CDS-V029", true, [](const ProgramPtr& p) {
                 return EditFirstHostStmt(
                     p, OnAssign([](const AssignStmt& a) { return !IsDistributed(a.var); },
                                 [](const auto& a) -> StmtPtr {
                                   auto c = ir::MakeNode<AssignStmt>(*a);
                                   c->value = nullptr;
                                   return c;
                                 }));
               }});
  m.push_back({"null-dispatch-argument", "CDS-V029", true, [](const ProgramPtr& p) {
                 return EditFirstHostStmt(p, [](const StmtPtr& s) -> StmtPtr {
                   if (s->kind() != NodeKind::kEvalStmt) return nullptr;
                   const Call* c = AsCall(static_cast<const EvalStmt&>(*s).expr);
                   if (!c || !c->Callee() || c->args.empty()) return nullptr;
                   auto call = ir::MakeNode<Call>(*c);
                   call->args[0] = nullptr;
                   auto e = Copy<EvalStmt>(s);
                   e->expr = call;
                   return e;
                 });
               }});
  m.push_back({"null-op-argument", "CDS-V029", true, [](const ProgramPtr& p) {
                 return EditFirstHostStmt(
                     p, OnAssign(
                            [](const AssignStmt& a) {
                              const Call* c = AsCall(a.value);
                              return c && !c->Callee() && !c->args.empty() &&
                                     !IsDistributed(a.var) &&
                                     c->OpName() != "pld.tensor.alloc_window_buffer";
                            },
                            [](const auto& a) -> StmtPtr {
                              auto call = ir::MakeNode<Call>(*AsCall(a->value));
                              call->args[0] = nullptr;
                              auto c = ir::MakeNode<AssignStmt>(*a);
                              c->value = call;
                              return c;
                            }));
               }});
  m.push_back({"null-chip-parameter", "CDS-V029", true,
               [](const ProgramPtr& p) -> std::optional<ProgramPtr> {
                 for (const auto& fn : p->functions) {
                   if (!verify::IsChipOrchestrator(*fn) || fn->params.empty()) continue;
                   auto c = ir::MakeNode<Function>(*fn);
                   c->params[0] = nullptr;
                   return ReplaceFunction(p, fn, c);
                 }
                 return std::nullopt;
               }});
  // --- non-view assignments whose two sides disagree (CDS-V006) -------------------
  m.push_back(
      {"scalar-type-mismatch", "CDS-V006", true, [](const ProgramPtr& p) {
         return EditFirstHostStmt(
             p, OnAssign([](const AssignStmt& a) { return CallOfKind(a, NodeKind::kScalarType); },
                         [](const auto& a) {
                           const auto& t = static_cast<const ScalarType&>(*a->var->type);
                           return Retyped(a,
                                          ScalarTy(t.dtype == DataType::kInt8 ? DataType::kInt16
                                                                              : DataType::kInt8));
                         }));
       }});
  m.push_back(
      {"tensor-type-mismatch", "CDS-V006", true, [](const ProgramPtr& p) {
         return EditFirstHostStmt(
             p, OnAssign([](const AssignStmt& a) { return CallOfKind(a, NodeKind::kTensorType); },
                         [](const auto& a) {
                           const auto& t = static_cast<const TensorType&>(*a->var->type);
                           std::vector<ExprPtr> shape = t.shape.ToVector();
                           shape.push_back(Int(3));
                           return Retyped(a, ir::MakeNode<TensorType>(shape, t.dtype));
                         }));
       }});
  m.push_back(
      {"tuple-type-mismatch", "CDS-V006", true, [](const ProgramPtr& p) {
         return EditFirstHostStmt(
             p,
             OnAssign([](const AssignStmt& a) { return AsCall(a.value) && !IsDistributed(a.var); },
                      [](const auto& a) {
                        auto call = ir::MakeNode<Call>(*AsCall(a->value));
                        call->type = ir::MakeNode<TupleType>(std::vector<TypePtr>{call->type});
                        TypePtr other = ir::MakeNode<TupleType>(std::vector<TypePtr>{
                            ScalarTy(DataType::kBool), ScalarTy(DataType::kBool)});
                        return Retyped(a, other, call);
                      }));
       }});
  m.push_back({"ptr-retyped-unknown", "CDS-V006", true, [](const ProgramPtr& p) {
                 return EditFirstHostStmt(
                     p,
                     OnAssign([](const AssignStmt& a) { return CallOfKind(a, NodeKind::kPtrType); },
                              [](const auto& a) { return Retyped(a, UnknownType::Get()); }));
               }});
  // --- an allreduce whose signal is no window (CDS-V023) --------------------------
  m.push_back({"allreduce-signal-not-window", "CDS-V023", true, [](const ProgramPtr& p) {
                 return EditFirstHostStmt(p, [](const StmtPtr& s) -> StmtPtr {
                   ExprPtr value;
                   if (s->kind() == NodeKind::kEvalStmt)
                     value = static_cast<const EvalStmt&>(*s).expr;
                   if (s->kind() == NodeKind::kAssignStmt)
                     value = static_cast<const AssignStmt&>(*s).value;
                   const Call* c = AsCall(value);
                   if (!c || c->OpName() != "pld.tensor.allreduce" || c->args.size() != 2)
                     return nullptr;
                   auto call = ir::MakeNode<Call>(*c);
                   call->args[1] = Int(0);
                   if (s->kind() == NodeKind::kEvalStmt) {
                     auto e = Copy<EvalStmt>(s);
                     e->expr = call;
                     return e;
                   }
                   auto a = Copy<AssignStmt>(s);
                   a->value = call;
                   return a;
                 });
               }});
  // --- program-level changes (relational, CDS-V026) -------------------------------
  m.push_back(
      {"renamed-program", "CDS-V026", false, [](const ProgramPtr& p) -> std::optional<ProgramPtr> {
         auto out = ir::MakeNode<Program>(p->name + "_renamed", p->dynamic_dims, p->functions);
         return out;
       }});
  m.push_back({"added-dynamic-dim", "CDS-V026", false,
               [](const ProgramPtr& p) -> std::optional<ProgramPtr> {
                 std::vector<VarPtr> dims = p->dynamic_dims;
                 dims.push_back(MakeVar("NR_extra", ScalarTy(DataType::kIndex)));
                 return ir::MakeNode<Program>(p->name, std::move(dims), p->functions);
               }});
  m.push_back(
      {"dropped-function", "CDS-V026", false, [](const ProgramPtr& p) -> std::optional<ProgramPtr> {
         std::vector<FunctionPtr> fns;
         bool dropped = false;
         for (const auto& f : p->functions) {
           if (!dropped && !verify::IsHostOrchestrator(*f)) {
             dropped = true;
             continue;
           }
           fns.push_back(f);
         }
         if (!dropped) return std::nullopt;
         return WithFunctions(p, std::move(fns));
       }});
  m.push_back(
      {"added-function", "CDS-V026", false, [](const ProgramPtr& p) -> std::optional<ProgramPtr> {
         for (const auto& f : p->functions) {
           if (verify::IsHostOrchestrator(*f)) continue;
           auto extra = ir::MakeNode<Function>(*f);
           extra->name = f->name + "_extra";
           std::vector<FunctionPtr> fns = p->functions;
           fns.push_back(extra);
           return WithFunctions(p, std::move(fns));
         }
         return std::nullopt;
       }});
  return m;
}

// --- reshaping ---------------------------------------------------------------------

class Reshaper {
 public:
  explicit Reshaper(uint64_t seed) : rng_(seed) {}

  StmtPtr Body(const StmtPtr& s) {
    if (!s) return s;
    if (s->kind() != NodeKind::kSeqStmts) return Stmt(s);
    const auto& seq = static_cast<const SeqStmts&>(*s);
    std::vector<StmtPtr> stmts;
    for (const auto& x : seq.stmts) stmts.push_back(Stmt(x));
    // One-statement bodies stay in their SeqStmts: docs/ir-conventions.md makes every
    // body a SeqStmts. (A bare branch holding an implicit allreduce becomes a SeqStmts
    // when the signal is inserted, which the relational check reports as CDS-V028.)
    // A run of two or more statements wrapped in a nested SeqStmts.
    if (stmts.size() >= 2 && Coin()) {
      std::uniform_int_distribution<size_t> pick(0, stmts.size() - 2);
      const size_t i = pick(rng_);
      std::uniform_int_distribution<size_t> len(2, stmts.size() - i);
      const size_t n = len(rng_);
      std::vector<StmtPtr> run(stmts.begin() + static_cast<std::ptrdiff_t>(i),
                               stmts.begin() + static_cast<std::ptrdiff_t>(i + n));
      stmts.erase(stmts.begin() + static_cast<std::ptrdiff_t>(i),
                  stmts.begin() + static_cast<std::ptrdiff_t>(i + n));
      stmts.insert(stmts.begin() + static_cast<std::ptrdiff_t>(i), Seq(std::move(run)));
    }
    return Seq(std::move(stmts), s->span());
  }

 private:
  bool Coin() { return std::uniform_int_distribution<int>(0, 1)(rng_) == 1; }

  static ExprPtr Tagged(const ExprPtr& e) {
    const Call* c = AsCall(e);
    if (!c || c->OpName() != "pld.tensor.allreduce" || c->args.size() != 1) return e;
    auto copy = ir::MakeNode<Call>(*c);
    copy->attrs.emplace_back("tag", Int(7));
    return copy;
  }

  StmtPtr Stmt(const StmtPtr& s) {
    switch (s->kind()) {
      case NodeKind::kForStmt: {
        auto c = Copy<ForStmt>(s);
        // An init_values loop keeps its SeqStmts body (its yield must stay last).
        c->body = Body(c->body);
        return c;
      }
      case NodeKind::kWhileStmt: {
        auto c = Copy<WhileStmt>(s);
        c->body = Body(c->body);
        return c;
      }
      case NodeKind::kIfStmt: {
        auto c = Copy<IfStmt>(s);
        c->then_body = Body(c->then_body);
        c->else_body = Body(c->else_body);
        return c;
      }
      case NodeKind::kScopeStmt: {
        auto c = Copy<ScopeStmt>(s);
        c->body = Body(c->body);
        return c;
      }
      case NodeKind::kEvalStmt: {
        ExprPtr t = Tagged(static_cast<const EvalStmt&>(*s).expr);
        if (t == static_cast<const EvalStmt&>(*s).expr) return s;
        auto c = Copy<EvalStmt>(s);
        c->expr = t;
        return c;
      }
      case NodeKind::kAssignStmt: {
        ExprPtr t = Tagged(static_cast<const AssignStmt&>(*s).value);
        if (t == static_cast<const AssignStmt&>(*s).value) return s;
        auto c = Copy<AssignStmt>(s);
        c->value = t;
        return c;
      }
      default:
        return s;
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace

ProgramPtr ReplaceFunction(const ProgramPtr& program, const FunctionPtr& fn,
                           FunctionPtr replacement) {
  std::vector<FunctionPtr> fns = program->functions;
  for (auto& f : fns) {
    if (f == fn) f = replacement;
  }
  return WithFunctions(program, std::move(fns));
}

std::optional<ProgramPtr> EditFirstHostStmt(const ProgramPtr& program,
                                            const std::function<StmtPtr(const StmtPtr&)>& edit) {
  for (const auto& fn : program->functions) {
    if (!verify::IsHostOrchestrator(*fn)) continue;
    bool done = false;
    StmtPtr body = EditIn(fn->body, edit, done);
    if (done) return ReplaceFunction(program, fn, WithBody(fn, body));
  }
  return std::nullopt;
}

const std::vector<MalformedMutator>& MalformedMutators() {
  static const std::vector<MalformedMutator> all = Build();
  return all;
}

ProgramPtr ReshapeInput(const ProgramPtr& program, uint64_t seed) {
  Reshaper r(seed);
  std::vector<FunctionPtr> fns;
  for (const auto& f : program->functions) {
    fns.push_back(verify::IsHostOrchestrator(*f) ? WithBody(f, r.Body(f->body)) : f);
  }
  return WithFunctions(program, std::move(fns));
}

ProgramPtr StripScopes(const ProgramPtr& program) {
  std::vector<FunctionPtr> fns;
  for (const auto& f : program->functions) {
    StmtPtr inner;
    if (verify::IsHostOrchestrator(*f) && !Chain(f->body, &inner).empty()) {
      fns.push_back(WithBody(f, inner));
    } else {
      fns.push_back(f);
    }
  }
  return WithFunctions(program, std::move(fns));
}

}  // namespace cds::prop
