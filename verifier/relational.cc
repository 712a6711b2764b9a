// Relational mode: the output against the pipeline input. Functions other than
// host orchestrators must be unchanged; a host orchestrator must equal its input
// once both sides are normalized the same way:
//   1. the outer scope chain is unwrapped (an already-materialized input too),
//   2. window_buffer back-references are erased (Var, Call and parameter types),
//   3. what SynthesizeAllReduceSignals adds is taken out again: each
//      `__allreduce_signal_world_size_K = world_size()`, alloc
//      `__allreduce_signal_buf_K` of ws * core_num * 4 bytes, window
//      `__allreduce_signal_K` of shape [ws, core_num] INT32 triple whose signal is
//      the second argument of exactly one later allreduce in the same statement
//      list (with a matching core_num) is removed together with that argument, and
//      `__allreduce_result_K = allreduce(...)` assignments folded into the return
//      that follows them.
// A triple of the wrong shape or size is not taken out, so it shows up as a
// difference. Normalizing the input too keeps a user-written copy of the pattern
// from being reported.

#include "verifier/relational.h"

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include "ir/op_registry.h"
#include "ir/structural_equal.h"
#include "verifier/byte_size.h"
#include "verifier/checks.h"
#include "verifier/ir_rewrite.h"
#include "verifier/orchestrators.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

const Call* CallOf(const ExprPtr& e, std::string_view op) {
  if (!e || e->kind() != NodeKind::kCall) return nullptr;
  const auto* c = static_cast<const Call*>(e.get());
  return c->OpName() == op ? c : nullptr;
}

const AssignStmt* AssignOf(const StmtPtr& s) {
  return s && s->kind() == NodeKind::kAssignStmt ? static_cast<const AssignStmt*>(s.get())
                                                 : nullptr;
}

int64_t CoreNum(const Call& allreduce) {
  if (const AttrValue* v = FindKwarg(allreduce.kwargs, "core_num")) {
    if (const auto* i = std::get_if<int64_t>(v)) return *i;
    return -1;
  }
  return 1;
}

struct Triple {
  size_t first = 0;  // index of the world_size statement
  int64_t core_num = 0;
  bool used = false;
};

// Recognizes the synthesized triple starting at stmts[i]; returns the signal Var.
const Var* MatchTriple(std::span<const StmtPtr> stmts, size_t i, int64_t& core_num) {
  if (i + 2 >= stmts.size()) return nullptr;
  const AssignStmt* s0 = AssignOf(stmts[i]);
  const AssignStmt* s1 = AssignOf(stmts[i + 1]);
  const AssignStmt* s2 = AssignOf(stmts[i + 2]);
  if (!s0 || !s1 || !s2 || !s0->var || !s1->var || !s2->var) return nullptr;
  constexpr std::string_view kWs = "__allreduce_signal_world_size_";
  constexpr std::string_view kBuf = "__allreduce_signal_buf_";
  constexpr std::string_view kSig = "__allreduce_signal_";
  if (!StartsWith(s0->var->name_hint, kWs)) return nullptr;
  const std::string k = s0->var->name_hint.substr(kWs.size());
  const Call* ws = CallOf(s0->value, ops::kWorldSize);
  if (!ws || !ws->args.empty()) return nullptr;

  const Call* alloc = CallOf(s1->value, ops::kAllocWindowBuffer);
  if (!alloc) return nullptr;
  const AttrValue* name = FindKwarg(alloc->kwargs, "name");
  const auto* name_str = name ? std::get_if<std::string>(name) : nullptr;
  if (!name_str || *name_str != std::string(kBuf) + k) return nullptr;

  const Call* window = CallOf(s2->value, ops::kWindow);
  if (!window || s2->var->name_hint != std::string(kSig) + k || window->args.size() != 2)
    return nullptr;
  if (window->args[0].get() != s1->var.get()) return nullptr;
  const AttrValue* dt = FindKwarg(window->kwargs, "dtype");
  if (!dt || !std::holds_alternative<DataType>(*dt) || std::get<DataType>(*dt) != DataType::kInt32)
    return nullptr;
  const ExprPtr& shape = window->args[1];
  if (!shape || shape->kind() != NodeKind::kMakeTuple) return nullptr;
  const auto& dims = static_cast<const MakeTuple&>(*shape).elements;
  if (dims.size() != 2 || dims[0].get() != s0->var.get() || !dims[1] ||
      dims[1]->kind() != NodeKind::kConstInt) {
    return nullptr;
  }
  core_num = static_cast<const ConstInt&>(*dims[1]).value;
  if (core_num <= 0) return nullptr;

  // ws * core_num * 4 bytes, in whatever order the factors are written.
  std::string why;
  std::optional<ByteSize> size = AllocByteSize(*alloc, &why);
  int64_t bytes = 0;
  if (!size || __builtin_mul_overflow(core_num, 4, &bytes) || size->constant != bytes ||
      size->factors.size() != 1 || size->factors[0].get() != s0->var.get()) {
    return nullptr;
  }
  return s2->var.get();
}

// Drops the signal argument of an allreduce call when it is a pending synthesized one.
using PendingTriples = absl::flat_hash_map<const Var*, Triple>;

ExprPtr Unsignal(const ExprPtr& e, PendingTriples& pending) {
  const Call* c = CallOf(e, ops::kAllReduce);
  if (!c || c->args.size() != 2 || !c->args[1] || !IsVarLikeKind(c->args[1]->kind())) return e;
  auto it = pending.find(static_cast<const Var*>(c->args[1].get()));
  if (it == pending.end() || it->second.used || it->second.core_num != CoreNum(*c)) return e;
  it->second.used = true;
  auto copy = MakeNode<Call>(*c);
  copy->args.pop_back();
  return copy;
}

// Statement-level only (synthesized statements sit in statement lists, their
// allreduce at the top of a statement), and copies only what changes: the
// normalization runs on every host orchestrator of every verified program.
class SignalStripper {
 public:
  StmtPtr Strip(const StmtPtr& s) {
    if (!s) return s;
    switch (s->kind()) {
      case NodeKind::kSeqStmts: {
        const auto& seq = static_cast<const SeqStmts&>(*s);
        std::vector<StmtPtr> stmts;
        bool changed = false;
        stmts.reserve(seq.stmts.size());
        for (const auto& x : seq.stmts) {
          stmts.push_back(Strip(x));
          changed |= stmts.back() != x;
        }
        changed |= StripTriples(stmts);
        changed |= FoldLiftedReturns(stmts);
        if (!changed) return s;
        auto out = MakeNode<SeqStmts>(seq);
        out->stmts = std::move(stmts);
        return out;
      }
      case NodeKind::kForStmt:
        return WithBody<ForStmt>(s, &ForStmt::body);
      case NodeKind::kWhileStmt:
        return WithBody<WhileStmt>(s, &WhileStmt::body);
      case NodeKind::kCommDomainScopeStmt:
        return WithBody<CommDomainScopeStmt>(s, &CommDomainScopeStmt::body);
      case NodeKind::kScopeStmt:
        return WithBody<ScopeStmt>(s, &ScopeStmt::body);
      case NodeKind::kIfStmt: {
        const auto& x = static_cast<const IfStmt&>(*s);
        StmtPtr t = Strip(x.then_body);
        StmtPtr e = Strip(x.else_body);
        if (t == x.then_body && e == x.else_body) return s;
        auto out = MakeNode<IfStmt>(x);
        out->then_body = t;
        out->else_body = e;
        return out;
      }
      default:
        return s;
    }
  }

 private:
  template <typename T>
  StmtPtr WithBody(const StmtPtr& s, StmtPtr T::*body) {
    const auto& x = static_cast<const T&>(*s);
    StmtPtr b = Strip(x.*body);
    if (b == x.*body) return s;
    auto out = MakeNode<T>(x);
    (*out).*body = b;
    return out;
  }

  static bool StripTriples(std::vector<StmtPtr>& stmts) {
    PendingTriples pending;
    for (size_t i = 0; i + 2 < stmts.size(); ++i) {
      int64_t core_num = 0;
      if (const Var* sig = MatchTriple(stmts, i, core_num)) {
        pending[sig] = Triple{i, core_num, false};
        i += 2;
      }
    }
    if (pending.empty()) return false;
    for (auto& s : stmts) {
      if (const AssignStmt* a = AssignOf(s)) {
        ExprPtr v = Unsignal(a->value, pending);
        if (v != a->value) {
          auto copy = MakeNode<AssignStmt>(*a);
          copy->value = v;
          s = copy;
        }
      } else if (s && s->kind() == NodeKind::kEvalStmt) {
        const auto& ev = static_cast<const EvalStmt&>(*s);
        ExprPtr v = Unsignal(ev.expr, pending);
        if (v != ev.expr) {
          auto copy = MakeNode<EvalStmt>(ev);
          copy->expr = v;
          s = copy;
        }
      } else if (s && s->kind() == NodeKind::kReturnStmt) {
        const auto& ret = static_cast<const ReturnStmt&>(*s);
        std::vector<ExprPtr> values = ret.values.ToVector();
        bool any = false;
        for (auto& v : values) {
          ExprPtr nv = Unsignal(v, pending);
          any |= nv != v;
          v = nv;
        }
        if (any) {
          auto copy = MakeNode<ReturnStmt>(ret);
          copy->values = std::move(values);
          s = copy;
        }
      }
    }
    std::vector<bool> drop(stmts.size(), false);
    bool changed = false;
    for (const auto& [sig, t] : pending) {
      if (!t.used) continue;
      drop[t.first] = drop[t.first + 1] = drop[t.first + 2] = true;
      changed = true;
    }
    if (!changed) return false;
    size_t w = 0;
    for (size_t r = 0; r < stmts.size(); ++r) {
      if (!drop[r]) stmts[w++] = std::move(stmts[r]);
    }
    stmts.resize(w);
    return true;
  }

  static bool FoldLiftedReturns(std::vector<StmtPtr>& stmts) {
    bool changed = false;
    for (size_t r = 0; r < stmts.size(); ++r) {
      if (!stmts[r] || stmts[r]->kind() != NodeKind::kReturnStmt) continue;
      auto ret = MakeNode<ReturnStmt>(static_cast<const ReturnStmt&>(*stmts[r]));
      size_t first = r;
      while (first > 0) {
        const AssignStmt* a = AssignOf(stmts[first - 1]);
        if (!a || !a->var || !StartsWith(a->var->name_hint, "__allreduce_result_") ||
            !CallOf(a->value, ops::kAllReduce)) {
          break;
        }
        bool found = false;
        for (auto& v : ret->values) {
          if (v.get() == a->var.get()) {
            v = a->value;
            found = true;
            break;
          }
        }
        if (!found) break;
        --first;
      }
      if (first == r) continue;
      stmts[r] = ret;
      stmts.erase(stmts.begin() + static_cast<std::ptrdiff_t>(first),
                  stmts.begin() + static_cast<std::ptrdiff_t>(r));
      r = first;
      changed = true;
    }
    return changed;
  }
};

StmtPtr UnwrapScopeChain(const StmtPtr& body) {
  StmtPtr cur = body;
  while (cur) {
    const StmtPtr* next = nullptr;
    if (cur->kind() == NodeKind::kSeqStmts) {
      const auto& seq = static_cast<const SeqStmts&>(*cur);
      if (seq.stmts.size() == 1 && seq.stmts[0] &&
          seq.stmts[0]->kind() == NodeKind::kCommDomainScopeStmt) {
        next = &static_cast<const CommDomainScopeStmt&>(*seq.stmts[0]).body;
      }
    } else if (cur->kind() == NodeKind::kCommDomainScopeStmt) {
      next = &static_cast<const CommDomainScopeStmt&>(*cur).body;
    }
    if (!next) break;
    cur = *next;
  }
  return cur;
}

// Unwrapped and stripped, back-references still in place (compare with
// ir::StructuralEqual(..., {.ignore_window_buffers = true})).
FunctionPtr UnwrapAndStrip(const FunctionPtr& fn) {
  auto out = MakeNode<Function>(*fn);
  out->body = SignalStripper().Strip(UnwrapScopeChain(fn->body));
  return out;
}

}  // namespace

FunctionPtr NormalizeHostOrchestrator(const FunctionPtr& fn) {
  if (!fn) return fn;
  WindowBufferEraser eraser;
  return eraser.MutateAs<Function>(UnwrapAndStrip(fn));
}

namespace {

// The difference path comes from ir::StructuralEqualWhere, which is slow on large
// programs; it only runs once the fast comparison has found a difference.
EqualityResult CompareHost(const FunctionPtr& f, const FunctionPtr& g) {
  if (ir::StructuralEqual(UnwrapAndStrip(f), UnwrapAndStrip(g), {.ignore_window_buffers = true}))
    return {};
  return StructuralEqualWhere(NormalizeHostOrchestrator(f), NormalizeHostOrchestrator(g));
}

EqualityResult CompareOther(const FunctionPtr& f, const FunctionPtr& g) {
  if (ir::StructuralEqual(f, g)) return {};
  return StructuralEqualWhere(f, g);
}

// Program::FindFunction, but safe on a malformed program that holds null functions
// (its binary search would dereference them).
FunctionPtr FindFn(const Program& p, std::string_view name) {
  for (const auto& f : p.functions) {
    if (f == nullptr) {
      for (const auto& g : p.functions) {
        if (g && g->name == name) return g;
      }
      return nullptr;
    }
  }
  return p.FindFunction(name);
}

}  // namespace

void CheckRelational(const ProgramPtr& before, const ProgramPtr& after, DiagnosticSink& sink) {
  if (!before || !after) {
    sink.Report(CheckId::kMalformedIR,
                before ? "the output program is null" : "the input program is null",
                after ? after->span() : Span{});
    return;
  }
  if (before->name != after->name) {
    sink.Report(CheckId::kProgramStructureChanged,
                fmt::format("program name changed from '{}' to '{}'", before->name, after->name),
                after->span());
  }
  if (before->dynamic_dims.size() != after->dynamic_dims.size()) {
    sink.Report(CheckId::kProgramStructureChanged,
                fmt::format("program '{}' has {} dynamic dims, its input {}", after->name,
                            after->dynamic_dims.size(), before->dynamic_dims.size()),
                after->span());
  }
  for (const auto& f : before->functions) {
    if (!f) continue;
    FunctionPtr g = FindFn(*after, f->name);
    if (!g) {
      sink.Report(CheckId::kProgramStructureChanged,
                  fmt::format("function '{}' of the input is missing from the output", f->name),
                  after->span());
      continue;
    }
    if (f == g) continue;
    if (IsHostOrchestrator(*f) || IsHostOrchestrator(*g)) {
      EqualityResult r = CompareHost(f, g);
      if (!r.equal) {
        sink.Report(
            CheckId::kHostBodyChanged,
            fmt::format(
                "host orchestrator '{}' differs from its input (scopes unwrapped, back-references "
                "erased, synthesized signals removed) at {}: {}",
                g->name, r.path.empty() ? std::string("<function>") : r.path, r.reason),
            g->span());
      }
      continue;
    }
    EqualityResult r = CompareOther(f, g);
    if (!r.equal) {
      sink.Report(
          CheckId::kFunctionChanged,
          fmt::format(
              "function '{}' is not a host orchestrator but differs from its input at {}: {}",
              g->name, r.path.empty() ? std::string("<function>") : r.path, r.reason),
          g->span());
    }
  }
  for (const auto& g : after->functions) {
    if (g && !FindFn(*before, g->name)) {
      sink.Report(CheckId::kProgramStructureChanged,
                  fmt::format("function '{}' of the output does not exist in the input", g->name),
                  g->span());
    }
  }
}

}  // namespace cds::verify
