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
#include "ir/visitor.h"
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

// ---------------------------------------------------------------------------
// Step 1: the names a synthesized name must avoid

// Every name with the reserved prefix that a Var of the program has (definitions
// and uses, parameters, loop and iter vars, dynamic dims) or an alloc's name= holds.
class ReservedNames final : public ir::IRVisitor {
 public:
  explicit ReservedNames(NameSet& names) : names_(names) {}

  void VisitDef(const VarPtr& v) override {
    Note(v->name_hint);
    IRVisitor::VisitDef(v);
  }
  void VisitVar(const NodeRef<const ir::Var>& v) override { Note(v->name_hint); }
  void VisitIterArg(const NodeRef<const ir::IterArg>& v) override { Note(v->name_hint); }
  void VisitCall(const NodeRef<const Call>& c) override {
    if (c->OpName() == ir::ops::kAllocWindowBuffer) {
      const ir::AttrValue* name = ir::FindKwarg(c->kwargs, "name");
      if (name && std::holds_alternative<std::string>(*name)) Note(std::get<std::string>(*name));
    }
    VisitChildren(*c);
  }

  // No name is declared inside a type.
#define CDS_SKIP_TYPE(N) \
  void Visit##N(const NodeRef<const ir::N>&) override {}
  CDS_TYPE_NODES(CDS_SKIP_TYPE)
#undef CDS_SKIP_TYPE

 private:
  void Note(const std::string& name) {
    if (std::string_view(name).substr(0, kReservedPrefix.size()) == kReservedPrefix) {
      names_.insert(name);
    }
  }

  NameSet& names_;
};

// ---------------------------------------------------------------------------
// Step 2: complete the allreduces of host orchestrators

[[noreturn]] void ThrowNested(const Span& span) {
  throw ValueError(
      "pld.tensor.allreduce must be a direct assignment, a bare statement or a return value; "
      "it cannot be nested inside another expression",
      span);
}

// An allreduce anywhere inside `e` (or `e` itself) is nested in a larger expression.
void RejectNestedAllReduce(const ExprPtr& e) {
  if (!e || ir::IsVarLikeKind(e->kind())) return;
  if (IsAllReduce(*e)) ThrowNested(e->span());
  ir::ForEachOperand(*e, [](const ExprPtr& operand) { RejectNestedAllReduce(operand); });
}

// An allreduce is completed where it is written directly: `x = allreduce(...)`, a
// bare `allreduce(...)`, or a value of `return`. A call without signal gets one,
// defined right before its statement; a returned allreduce is bound to a Var first.
// Expressions never change: they are only searched for a nested allreduce.
class SignalSynthesizer final : public ir::IRMutator {
 public:
  SignalSynthesizer(const NameSet& reserved, int64_t default_core_num)
      : reserved_(reserved), default_core_num_(default_core_num) {}

  // In a statement list, a completed allreduce takes the place of its statement.
  NodePtr MutateSeqStmts(const NodeRef<const ir::SeqStmts>& seq) override {
    std::vector<StmtPtr> out;
    out.reserve(seq->stmts.size());
    bool changed = false;
    for (const auto& s : seq->stmts) {
      if (IsAllReduceForm(*s)) {
        changed |= Complete(s, out);
      } else {
        out.push_back(MutateStmt(s));
        changed |= out.back() != s;
      }
    }
    if (!changed) return seq;
    return ir::Seq(std::move(out), seq->span());
  }

  // A lone body statement that is completed becomes a list of its own.
  NodePtr MutateAssignStmt(const NodeRef<const ir::AssignStmt>& s) override { return Alone(s); }
  NodePtr MutateEvalStmt(const NodeRef<const ir::EvalStmt>& s) override { return Alone(s); }
  NodePtr MutateReturnStmt(const NodeRef<const ir::ReturnStmt>& s) override { return Alone(s); }

  NodePtr MutateForStmt(const NodeRef<const ir::ForStmt>& loop) override {
    ++loop_depth_;
    NodePtr out = IRMutator::MutateForStmt(loop);
    --loop_depth_;
    return out;
  }
  NodePtr MutateWhileStmt(const NodeRef<const ir::WhileStmt>& loop) override {
    ++loop_depth_;
    NodePtr out = IRMutator::MutateWhileStmt(loop);
    --loop_depth_;
    return out;
  }

  VarPtr MutateDef(const VarPtr& v) override {
    if (v->kind() == NodeKind::kIterArg) {
      RejectNestedAllReduce(static_cast<const ir::IterArg&>(*v).init_value);
    }
    return v;
  }

#define CDS_CHECK_EXPR(N)                                                  \
  NodePtr Mutate##N(const NodeRef<const ir::N>& e) override {              \
    RejectNestedAllReduce(e);                                              \
    return e;                                                              \
  }
  CDS_EXPR_NODES(CDS_CHECK_EXPR)
#undef CDS_CHECK_EXPR

 private:
  static bool IsAllReduceForm(const ir::Stmt& s) {
    return s.kind() == NodeKind::kAssignStmt || s.kind() == NodeKind::kEvalStmt ||
           s.kind() == NodeKind::kReturnStmt;
  }

  StmtPtr Alone(const StmtPtr& s) {
    std::vector<StmtPtr> out;
    if (!Complete(s, out)) return s;
    return ir::Seq(std::move(out), s->span());
  }

  // Appends what replaces `s` (an assignment, bare statement or return) to `out`:
  // the statements defining new signals, then `s` rewritten; or `s` itself, and
  // then returns false.
  bool Complete(const StmtPtr& s, std::vector<StmtPtr>& out) {
    StmtPtr rewritten;
    if (s->kind() == NodeKind::kAssignStmt) {
      const auto& a = static_cast<const ir::AssignStmt&>(*s);
      if (ExprPtr call = WithSignal(a.value, out)) rewritten = ir::Assign(a.var, call, a.span());
    } else if (s->kind() == NodeKind::kEvalStmt) {
      const auto& e = static_cast<const ir::EvalStmt&>(*s);
      if (ExprPtr call = WithSignal(e.expr, out)) rewritten = ir::Eval(call, e.span());
    } else {
      const auto& r = static_cast<const ir::ReturnStmt&>(*s);
      std::vector<ExprPtr> values = r.values.ToVector();
      bool lifted = false;
      for (auto& v : values) {
        if (!v || !IsAllReduce(*v)) {
          RejectNestedAllReduce(v);
          continue;
        }
        // Host lowering needs every allreduce bound to a Var: a returned one is
        // lifted even when it has its signal.
        ExprPtr call = WithSignal(v, out);
        if (!call) call = v;
        VarPtr result = ir::MakeVar(NextResultName(), call->type, call->span());
        out.push_back(ir::Assign(result, call, call->span()));
        v = result;
        lifted = true;
      }
      if (lifted) rewritten = ir::Return(std::move(values), r.span());
    }
    out.push_back(rewritten ? rewritten : s);
    return rewritten != nullptr;
  }

  // For a direct allreduce without signal: the call with its signal, the signal's
  // definitions appended to `out`. Null for anything else (searched for a nested
  // allreduce) and for an allreduce that has its signal.
  ExprPtr WithSignal(const ExprPtr& value, std::vector<StmtPtr>& out) {
    if (!value || !IsAllReduce(*value)) {
      RejectNestedAllReduce(value);
      return nullptr;
    }
    const auto& call = static_cast<const Call&>(*value);
    for (const auto& a : call.args) RejectNestedAllReduce(a);
    for (const auto& [key, v] : call.kwargs) {
      if (const auto* e = std::get_if<ExprPtr>(&v)) RejectNestedAllReduce(*e);
    }
    const size_t arity = call.args.size();
    if (arity < 1 || arity > 2) {
      throw ValueError(
          fmt::format(
              "pld.tensor.allreduce takes 1 or 2 positional arguments (data, signal), got {}",
              arity),
          call.span());
    }
    if (arity == 2) return nullptr;
    if (loop_depth_ > 0) {
      throw ValueError(
          "a signal-less pld.tensor.allreduce is not supported inside a for/while loop; pass an "
          "explicit signal",
          call.span());
    }
    return AddSignal(call, CoreNum(call), out);
  }

  // world_size, a buffer of world_size * core_num INT32 flags and its
  // [world_size, core_num] INT32 window, then the call with the window as signal.
  ExprPtr AddSignal(const Call& call, int64_t core_num, std::vector<StmtPtr>& out) {
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
    CallPtr rebuilt = ir::MakeOpCallWithType(ir::ops::kAllReduce, {call.args[0], signal},
                                             call.kwargs, call.type, sp);
    if (call.attrs.empty()) return rebuilt;
    auto with_attrs = ir::MakeNode<Call>(*rebuilt);
    with_attrs->attrs = call.attrs;
    return with_attrs;
  }

  int64_t CoreNum(const Call& call) const {
    const ir::AttrValue* v = ir::FindKwarg(call.kwargs, "core_num");
    if (!v) return default_core_num_;
    if (!std::holds_alternative<int64_t>(*v) || std::get<int64_t>(*v) <= 0) {
      std::string got = std::holds_alternative<int64_t>(*v)
                            ? fmt::format("{}", std::get<int64_t>(*v))
                            : std::string("a non-integer");
      throw ValueError(
          fmt::format("pld.tensor.allreduce: core_num= must be a positive integer, got {}", got),
          call.span());
    }
    return std::get<int64_t>(*v);
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
  const int64_t default_core_num_;
  int loop_depth_ = 0;
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
  NameSet reserved;
  ReservedNames(reserved).VisitNode(program);
  // Functions in name order (the program's order): the numbering depends on it.
  SignalSynthesizer synthesizer(reserved, options.default_core_num);
  std::vector<ir::FunctionPtr> functions;
  functions.reserve(program->functions.size());
  bool changed = false;
  for (const auto& f : program->functions) {
    StmtPtr body = IsHostOrchestrator(*f) ? synthesizer.MutateStmt(f->body) : f->body;
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
  auto result =
      ir::MakeNode<ir::Program>(program->name, program->dynamic_dims, std::move(functions));
  result->set_span(program->span());
  return result;
}

}  // namespace cds::pass
