#include "pass/synthesize_allreduce_signals.h"

#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/mutator.h"
#include "ir/op_registry.h"
#include "ir/walk.h"
#include "pass/orchestrators.h"

namespace cds::pass {
namespace {

using ir::Call;
using ir::CallPtr;
using ir::ExprPtr;
using ir::NodeKind;
using ir::NodePtr;
using ir::NodeRef;
using ir::Span;
using ir::StmtPtr;
using ir::VarPtr;

// Only names with this prefix can collide with a synthesized one.
constexpr std::string_view kReservedPrefix = "__allreduce_";
// A signal holds one INT32 flag per device and core.
constexpr int64_t kSignalFlagBytes = 4;

using NameSet = absl::flat_hash_set<std::string>;

bool IsAllReduce(const ir::Expr& e) {
  return e.kind() == NodeKind::kCall && static_cast<const Call&>(e).OpName() == ir::ops::kAllReduce;
}

// The three statements that can hold an allreduce directly: `x = allreduce(...)`,
// a bare `allreduce(...)`, and `return ..., allreduce(...), ...`.
bool IsAllReduceForm(const ir::Stmt& s) {
  return s.kind() == NodeKind::kAssignStmt || s.kind() == NodeKind::kEvalStmt ||
         s.kind() == NodeKind::kReturnStmt;
}

[[noreturn]] void ThrowNested(const Span& span) {
  throw ValueError(
      "pld.tensor.allreduce must be a direct assignment, a bare statement or a return value; "
      "it cannot be nested inside another expression",
      span);
}

int64_t CoreNum(const Call& call, int64_t default_core_num) {
  const ir::AttrValue* v = ir::FindKwarg(call.kwargs, "core_num");
  if (!v) return default_core_num;
  if (!std::holds_alternative<int64_t>(*v) || std::get<int64_t>(*v) <= 0) {
    std::string got = std::holds_alternative<int64_t>(*v) ? fmt::format("{}", std::get<int64_t>(*v))
                                                          : std::string("a non-integer");
    throw ValueError(
        fmt::format("pld.tensor.allreduce: core_num= must be a positive integer, got {}", got),
        call.span());
  }
  return std::get<int64_t>(*v);
}

// ---------------------------------------------------------------------------
// Step 1: read the program. Every name with the reserved prefix that a Var has
// (definitions and uses, parameters, loop and iter vars, dynamic dims) or an
// alloc's name= holds; in host orchestrators, every allreduce checked, in source
// order, and the statements that change (the sites) recorded.

class ProgramReader {
 public:
  ProgramReader(NameSet& reserved, absl::flat_hash_set<const ir::Stmt*>& sites,
                int64_t default_core_num)
      : reserved_(reserved), sites_(sites), default_core_num_(default_core_num) {}

  void Read(const ir::Program& program) {
    for (const auto& v : program.dynamic_dims) Note(v->name_hint);
    for (const auto& f : program.functions) {
      for (const auto& p : f->params) Note(p->name_hint);
      host_ = IsHostOrchestrator(*f);
      if (f->body) ReadStmt(*f->body, 0);
    }
  }

 private:
  void ReadStmt(const ir::Stmt& s, int loop_depth) {
    ir::ForEachDefinedVar(s, [&](const ir::Var& v) { Note(v.name_hint); });
    if (host_ && IsAllReduceForm(s)) {
      if (ReadAllReduceForm(s, loop_depth)) sites_.insert(&s);
    } else {
      ir::ForEachStmtOperand(s, [&](const ExprPtr& e) { ReadExpr(*e, host_); });
    }
    const bool loop = s.kind() == NodeKind::kForStmt || s.kind() == NodeKind::kWhileStmt;
    ir::ForEachSubStmt(s, [&](const StmtPtr& sub) { ReadStmt(*sub, loop_depth + loop); });
  }

  // Names below `e`; with `reject_allreduce`, an allreduce at or below `e` is
  // nested in a larger expression.
  void ReadExpr(const ir::Expr& e, bool reject_allreduce) {
    if (ir::IsVarLikeKind(e.kind())) {
      Note(static_cast<const ir::Var&>(e).name_hint);
      return;
    }
    if (e.kind() == NodeKind::kCall) {
      const auto& c = static_cast<const Call&>(e);
      if (reject_allreduce && c.OpName() == ir::ops::kAllReduce) ThrowNested(c.span());
      if (c.OpName() == ir::ops::kAllocWindowBuffer) {
        const ir::AttrValue* name = ir::FindKwarg(c.kwargs, "name");
        if (name && std::holds_alternative<std::string>(*name)) Note(std::get<std::string>(*name));
      }
    }
    ir::ForEachOperand(e, [&](const ExprPtr& operand) { ReadExpr(*operand, reject_allreduce); });
  }

  // True when the statement changes: an allreduce without signal, or a returned one.
  bool ReadAllReduceForm(const ir::Stmt& s, int loop_depth) {
    if (s.kind() != NodeKind::kReturnStmt) {
      const ExprPtr& value = s.kind() == NodeKind::kAssignStmt
                                 ? static_cast<const ir::AssignStmt&>(s).value
                                 : static_cast<const ir::EvalStmt&>(s).expr;
      if (value && IsAllReduce(*value))
        return !ReadAllReduce(static_cast<const Call&>(*value), loop_depth);
      if (value) ReadExpr(*value, true);
      return false;
    }
    bool lifted = false;
    for (const auto& v : static_cast<const ir::ReturnStmt&>(s).values) {
      if (v && IsAllReduce(*v)) {
        ReadAllReduce(static_cast<const Call&>(*v), loop_depth);
        lifted = true;
      } else if (v) {
        ReadExpr(*v, true);
      }
    }
    return lifted;
  }

  // The checks of a direct allreduce, in their order: nothing nested in its
  // arguments and kwargs, one or two arguments, no signal-less call inside a
  // for/while loop, a valid core_num. True when it has its signal.
  bool ReadAllReduce(const Call& call, int loop_depth) {
    for (const auto& a : call.args) {
      if (a) ReadExpr(*a, true);
    }
    for (const auto& [key, value] : call.kwargs) {
      if (const auto* e = std::get_if<ExprPtr>(&value); e && *e) ReadExpr(**e, true);
    }
    for (const auto& [key, e] : call.attrs) {
      if (e) ReadExpr(*e, false);
    }
    const size_t arity = call.args.size();
    if (arity < 1 || arity > 2) {
      throw ValueError(
          fmt::format(
              "pld.tensor.allreduce takes 1 or 2 positional arguments (data, signal), got {}",
              arity),
          call.span());
    }
    if (arity == 2) return true;
    if (loop_depth > 0) {
      throw ValueError(
          "a signal-less pld.tensor.allreduce is not supported inside a for/while loop; pass an "
          "explicit signal",
          call.span());
    }
    CoreNum(call, default_core_num_);
    return false;
  }

  void Note(const std::string& name) {
    if (std::string_view(name).substr(0, kReservedPrefix.size()) == kReservedPrefix) {
      reserved_.insert(name);
    }
  }

  NameSet& reserved_;
  absl::flat_hash_set<const ir::Stmt*>& sites_;
  const int64_t default_core_num_;
  bool host_ = false;
};

// ---------------------------------------------------------------------------
// Step 2: rewrite the sites, numbering them in source order. A call without
// signal gets one, defined right before its statement; a returned allreduce is
// bound to a Var first. Nothing else changes.

class SiteRewriter final : public ir::IRMutator {
 public:
  SiteRewriter(const NameSet& reserved, const absl::flat_hash_set<const ir::Stmt*>& sites,
               int64_t default_core_num)
      : reserved_(reserved), sites_(sites), default_core_num_(default_core_num) {}

  // In a statement list, the statements replacing a site take its place.
  NodePtr MutateSeqStmts(const NodeRef<const ir::SeqStmts>& seq) override {
    std::vector<StmtPtr> out;
    out.reserve(seq->stmts.size());
    bool changed = false;
    for (const auto& s : seq->stmts) {
      if (sites_.contains(s.get())) {
        Rewrite(*s, out);
        changed = true;
      } else {
        out.push_back(MutateStmt(s));
        changed |= out.back() != s;
      }
    }
    if (!changed) return seq;
    return ir::Seq(std::move(out), seq->span());
  }

  // A site that is a whole body on its own becomes a list.
  NodePtr MutateAssignStmt(const NodeRef<const ir::AssignStmt>& s) override { return Alone(s); }
  NodePtr MutateEvalStmt(const NodeRef<const ir::EvalStmt>& s) override { return Alone(s); }
  NodePtr MutateReturnStmt(const NodeRef<const ir::ReturnStmt>& s) override { return Alone(s); }

#define CDS_KEEP_EXPR(N) \
  NodePtr Mutate##N(const NodeRef<const ir::N>& e) override { return e; }
  CDS_EXPR_NODES(CDS_KEEP_EXPR)
#undef CDS_KEEP_EXPR

 private:
  StmtPtr Alone(const StmtPtr& s) {
    if (!sites_.contains(s.get())) return s;
    std::vector<StmtPtr> out;
    Rewrite(*s, out);
    return ir::Seq(std::move(out), s->span());
  }

  void Rewrite(const ir::Stmt& s, std::vector<StmtPtr>& out) {
    if (s.kind() == NodeKind::kAssignStmt) {
      const auto& a = static_cast<const ir::AssignStmt&>(s);
      out.push_back(
          ir::Assign(a.var, WithSignal(static_cast<const Call&>(*a.value), out), a.span()));
    } else if (s.kind() == NodeKind::kEvalStmt) {
      const auto& e = static_cast<const ir::EvalStmt&>(s);
      out.push_back(ir::Eval(WithSignal(static_cast<const Call&>(*e.expr), out), e.span()));
    } else {
      const auto& r = static_cast<const ir::ReturnStmt&>(s);
      std::vector<ExprPtr> values = r.values.ToVector();
      for (auto& v : values) {
        if (!v || !IsAllReduce(*v)) continue;
        // Host lowering needs every allreduce bound to a Var: a returned one is
        // lifted even when it has its signal.
        ExprPtr call = WithSignal(static_cast<const Call&>(*v), out);
        VarPtr result = ir::MakeVar(NextResultName(), call->type, call->span());
        out.push_back(ir::Assign(result, call, call->span()));
        v = result;
      }
      out.push_back(ir::Return(std::move(values), r.span()));
    }
  }

  // The call itself when it has its signal; else world_size, a buffer of
  // world_size * core_num INT32 flags and its [world_size, core_num] INT32 window
  // are appended to `out`, and the call gets the window as its signal.
  ExprPtr WithSignal(const Call& call, std::vector<StmtPtr>& out) {
    if (call.args.size() == 2) return ExprPtr(&call);
    const int64_t core_num = CoreNum(call, default_core_num_);
    const Span& sp = call.span();
    const int64_t k = NextSignalIndex();

    CallPtr ws_call = ir::MakeOpCall(ir::ops::kWorldSize, {}, {}, sp);
    VarPtr ws = ir::MakeVar(fmt::format("__allreduce_signal_world_size_{}", k), ws_call->type, sp);
    out.push_back(ir::Assign(ws, ws_call, sp));

    std::string buf_name = fmt::format("__allreduce_signal_buf_{}", k);
    ExprPtr size = ir::Binary(
        ir::BinaryOp::kMul,
        ir::Binary(ir::BinaryOp::kMul, ws, ir::Int(core_num, ir::DataType::kInt64, sp), sp),
        ir::Int(kSignalFlagBytes, ir::DataType::kInt64, sp), sp);
    CallPtr alloc = ir::MakeOpCall(ir::ops::kAllocWindowBuffer, {size}, {{"name", buf_name}}, sp);
    VarPtr buf = ir::MakeVar(buf_name, alloc->type, sp);
    out.push_back(ir::Assign(buf, alloc, sp));

    ExprPtr shape = ir::Tuple({ws, ir::Int(core_num, ir::DataType::kInt64, sp)}, sp);
    CallPtr window =
        ir::MakeOpCall(ir::ops::kWindow, {buf, shape}, {{"dtype", ir::DataType::kInt32}}, sp);
    VarPtr signal = ir::MakeVar(fmt::format("__allreduce_signal_{}", k), window->type, sp);
    out.push_back(ir::Assign(signal, window, sp));

    // The call keeps its result type (a pl._dump.call may record one other than
    // the deduced type), its kwargs and its attrs.
    return ir::MakeOpCallWithType(ir::ops::kAllReduce, {call.args[0], signal}, call.kwargs,
                                  call.type, sp, call.attrs);
  }

  // One counter for the whole program. A signal takes the first value from the
  // counter on whose three names are all free, a result name the first whose name
  // is free; the counter then moves past it. The names this pass takes are below
  // the counter, so only the program's own names need checking.
  int64_t NextSignalIndex() {
    int64_t k = counter_;
    while (Reserved(fmt::format("__allreduce_signal_world_size_{}", k)) ||
           Reserved(fmt::format("__allreduce_signal_buf_{}", k)) ||
           Reserved(fmt::format("__allreduce_signal_{}", k))) {
      ++k;
    }
    counter_ = k + 1;
    return k;
  }

  std::string NextResultName() {
    int64_t k = counter_;
    while (Reserved(fmt::format("__allreduce_result_{}", k))) ++k;
    counter_ = k + 1;
    return fmt::format("__allreduce_result_{}", k);
  }

  bool Reserved(const std::string& name) const { return reserved_.contains(name); }

  const NameSet& reserved_;
  const absl::flat_hash_set<const ir::Stmt*>& sites_;
  const int64_t default_core_num_;
  int64_t counter_ = 0;
};

}  // namespace

ir::ProgramPtr SynthesizeAllReduceSignals(const ir::ProgramPtr& program,
                                          const SynthesizeOptions& options) {
  if (options.default_core_num <= 0) {
    throw ValueError(
        fmt::format("default core_num must be positive, got {}", options.default_core_num),
        program ? program->span() : Span{});
  }
  if (!program) return program;
  // 1. Read the program: the names to avoid, and the sites, checked.
  NameSet reserved;
  absl::flat_hash_set<const ir::Stmt*> sites;
  ProgramReader(reserved, sites, options.default_core_num).Read(*program);
  if (sites.empty()) return program;
  // 2. Rewrite the sites of the host orchestrators, in name order (the program's
  //    order), which fixes the numbering.
  SiteRewriter rewriter(reserved, sites, options.default_core_num);
  std::vector<ir::FunctionPtr> functions;
  functions.reserve(program->functions.size());
  bool changed = false;
  for (const auto& f : program->functions) {
    StmtPtr body = IsHostOrchestrator(*f) ? rewriter.MutateStmt(f->body) : f->body;
    if (body == f->body) {
      functions.push_back(f);
      continue;
    }
    auto copy = ir::MakeNode<ir::Function>(*f);
    copy->body = std::move(body);
    functions.push_back(std::move(copy));
    changed = true;
  }
  if (!changed) return program;
  return ir::WithSpan(
      ir::MakeNode<ir::Program>(program->name, program->dynamic_dims, std::move(functions)),
      program->span());
}

}  // namespace cds::pass
