#include "pass/synthesize_allreduce_signals.h"

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "pass/ir_walk.h"

namespace cds::pass {
namespace {

using ir::Call;
using ir::CallPtr;
using ir::ExprPtr;
using ir::NodeKind;
using ir::Span;
using ir::StmtPtr;
using ir::VarPtr;

constexpr std::string_view kReservedPrefix = "__allreduce_";

bool IsAllReduce(const ExprPtr& e) {
  return e && e->kind() == NodeKind::kCall &&
         static_cast<const Call&>(*e).OpName() == ir::ops::kAllReduce;
}

// Only names that could collide with synthesized ones matter, so the set stays tiny
// even on very large programs.
class ReservedNameCollector {
 public:
  explicit ReservedNameCollector(std::unordered_set<std::string>& names) : names_(names) {}

  void Collect(const ir::Program& program) {
    for (const auto& v : program.dynamic_dims) Note(v);
    for (const auto& f : program.functions) {
      for (const auto& p : f->params) Note(p);
      Walk(f->body);
    }
  }

 private:
  void Walk(const StmtPtr& s) {
    if (!s) return;
    switch (s->kind()) {
      case NodeKind::kAssignStmt:
        Note(static_cast<const ir::AssignStmt&>(*s).var);
        break;
      case NodeKind::kUnpackAssignStmt:
        for (const auto& v : static_cast<const ir::UnpackAssignStmt&>(*s).vars) Note(v);
        break;
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ir::ForStmt&>(*s);
        Note(f.loop_var);
        for (const auto& v : f.iter_args) Note(v);
        for (const auto& v : f.return_vars) Note(v);
        break;
      }
      case NodeKind::kScopeStmt:
        Note(static_cast<const ir::ScopeStmt&>(*s).as_var);
        break;
      default:
        break;
    }
    detail::ForEachStmtExpr(*s, [this](const ExprPtr& e) { Scan(e); });
    detail::ForEachSubBody(*s, [this](const StmtPtr& c) { Walk(c); });
  }

  void Scan(const ExprPtr& e) {
    if (!e) return;
    if (e->kind() == NodeKind::kVar || e->kind() == NodeKind::kIterArg) {
      Note(static_cast<const ir::Var&>(*e).name_hint);
      return;
    }
    if (e->kind() == NodeKind::kCall) {
      const auto& c = static_cast<const Call&>(*e);
      if (c.OpName() == ir::ops::kAllocWindowBuffer) {
        const ir::AttrValue* name = ir::FindKwarg(c.kwargs, "name");
        if (name && std::holds_alternative<std::string>(*name)) Note(std::get<std::string>(*name));
      }
    }
    detail::ForEachSubExpr(*e, [this](const ExprPtr& x) { Scan(x); });
  }

  void Note(const VarPtr& v) {
    if (v) Note(v->name_hint);
  }
  void Note(const std::string& n) {
    if (n.size() >= kReservedPrefix.size() &&
        std::string_view(n).substr(0, kReservedPrefix.size()) == kReservedPrefix) {
      names_.insert(n);
    }
  }
  std::unordered_set<std::string>& names_;
};

// Rejects an allreduce anywhere below `e`.
void CheckNotNested(const ExprPtr& e) {
  if (!e || e->kind() <= NodeKind::kConstString) return;
  if (IsAllReduce(e)) {
    throw ValueError(
        "pld.tensor.allreduce must be a direct assignment, a bare statement or a return value; "
        "it cannot be nested inside another expression",
        e->span);
  }
  detail::ForEachSubExpr(*e, [](const ExprPtr& x) { CheckNotNested(x); });
}

void CheckStmtNotNested(const ir::Stmt& s) {
  detail::ForEachStmtExpr(s, [](const ExprPtr& x) { CheckNotNested(x); });
}

void CheckKwargsNotNested(const ir::KwargList& kwargs) {
  detail::ForEachKwargExpr(kwargs, [](const ExprPtr& x) { CheckNotNested(x); });
}

class Synthesizer {
 public:
  Synthesizer(std::unordered_set<std::string>& used, const SynthesizeOptions& options)
      : used_(used), options_(options) {}

  // Returns `body` itself when nothing in it changed.
  StmtPtr RewriteBody(const StmtPtr& body, int loop_depth) {
    if (!body) return body;
    std::vector<StmtPtr> out;
    if (body->kind() == NodeKind::kSeqStmts) {
      const auto& seq = static_cast<const ir::SeqStmts&>(*body);
      out.reserve(seq.stmts.size());
      bool changed = false;
      for (const auto& s : seq.stmts) {
        size_t before = out.size();
        RewriteInto(s, loop_depth, out);
        changed |= out.size() != before + 1 || out.back() != s;
      }
      if (!changed) return body;
      return ir::Seq(std::move(out), body->span);
    }
    RewriteInto(body, loop_depth, out);
    if (out.size() == 1) return out[0];
    return ir::Seq(std::move(out), body->span);
  }

 private:
  template <typename T>
  static std::shared_ptr<T> CopyOf(const std::shared_ptr<const T>& n) {
    return std::make_shared<T>(*n);
  }

  // Appends the statements replacing `s` (inserted ones first) to `out`.
  void RewriteInto(const StmtPtr& s, int depth, std::vector<StmtPtr>& out) {
    switch (s->kind()) {
      case NodeKind::kSeqStmts:
        out.push_back(RewriteBody(s, depth));
        return;
      case NodeKind::kForStmt: {
        auto f = ir::As<ir::ForStmt>(s);
        CheckNotNested(f->start);
        CheckNotNested(f->stop);
        CheckNotNested(f->step);
        for (const auto& ia : f->iter_args) CheckNotNested(ia->init_value);
        StmtPtr body = RewriteBody(f->body, depth + 1);
        if (body == f->body) break;
        auto copy = CopyOf(f);
        copy->body = body;
        out.push_back(copy);
        return;
      }
      case NodeKind::kWhileStmt: {
        auto w = ir::As<ir::WhileStmt>(s);
        CheckNotNested(w->cond);
        StmtPtr body = RewriteBody(w->body, depth + 1);
        if (body == w->body) break;
        auto copy = CopyOf(w);
        copy->body = body;
        out.push_back(copy);
        return;
      }
      case NodeKind::kIfStmt: {
        auto i = ir::As<ir::IfStmt>(s);
        CheckNotNested(i->cond);
        StmtPtr then_body = RewriteBody(i->then_body, depth);
        StmtPtr else_body = RewriteBody(i->else_body, depth);
        if (then_body == i->then_body && else_body == i->else_body) break;
        auto copy = CopyOf(i);
        copy->then_body = then_body;
        copy->else_body = else_body;
        out.push_back(copy);
        return;
      }
      case NodeKind::kScopeStmt: {
        auto sc = ir::As<ir::ScopeStmt>(s);
        for (const auto& a : sc->args) CheckNotNested(a);
        CheckKwargsNotNested(sc->kwargs);
        StmtPtr body = RewriteBody(sc->body, depth);
        if (body == sc->body) break;
        auto copy = CopyOf(sc);
        copy->body = body;
        out.push_back(copy);
        return;
      }
      case NodeKind::kCommDomainScopeStmt: {
        auto sc = ir::As<ir::CommDomainScopeStmt>(s);
        StmtPtr body = RewriteBody(sc->body, depth);
        if (body == sc->body) break;
        auto copy = CopyOf(sc);
        copy->body = body;
        out.push_back(copy);
        return;
      }
      case NodeKind::kAssignStmt: {
        auto a = ir::As<ir::AssignStmt>(s);
        if (!IsAllReduce(a->value)) {
          CheckNotNested(a->value);
          break;
        }
        ExprPtr call = Synthesize(ir::As<Call>(a->value), depth, out);
        if (call == a->value) break;
        out.push_back(ir::Assign(a->var, call, a->span));
        return;
      }
      case NodeKind::kEvalStmt: {
        auto e = ir::As<ir::EvalStmt>(s);
        if (!IsAllReduce(e->expr)) {
          CheckNotNested(e->expr);
          break;
        }
        ExprPtr call = Synthesize(ir::As<Call>(e->expr), depth, out);
        if (call == e->expr) break;
        out.push_back(ir::Eval(call, e->span));
        return;
      }
      case NodeKind::kReturnStmt: {
        auto r = ir::As<ir::ReturnStmt>(s);
        std::vector<ExprPtr> values = r->values;
        bool lifted = false;
        for (auto& v : values) {
          if (!IsAllReduce(v)) {
            CheckNotNested(v);
            continue;
          }
          ExprPtr call = Synthesize(ir::As<Call>(v), depth, out);
          // Host lowering needs every allreduce bound to a Var, so even a call that
          // already has its signal is lifted out of the return.
          VarPtr result = ir::MakeVar(NextResultName(), call->type, call->span);
          out.push_back(ir::Assign(result, call, call->span));
          v = result;
          lifted = true;
        }
        if (!lifted) break;
        out.push_back(ir::Return(std::move(values), r->span));
        return;
      }
      default:
        CheckStmtNotNested(*s);
        break;
    }
    out.push_back(s);
  }

  // Gives a signal-less call its signal (inserting the three defining statements
  // into `out`); returns the call itself when it already has one.
  ExprPtr Synthesize(const CallPtr& call, int depth, std::vector<StmtPtr>& out) {
    for (const auto& a : call->args) CheckNotNested(a);
    CheckKwargsNotNested(call->kwargs);
    const size_t arity = call->args.size();
    if (arity < 1 || arity > 2) {
      throw ValueError(
          fmt::format(
              "pld.tensor.allreduce takes 1 or 2 positional arguments (data, signal), got {}",
              arity),
          call->span);
    }
    if (arity == 2) return call;
    if (depth > 0) {
      throw ValueError(
          "a signal-less pld.tensor.allreduce is not supported inside a for/while loop; pass an "
          "explicit signal",
          call->span);
    }
#if CDS_INJECT_BUG == 15
    // Injected: the signal is sized for one core whatever core_num= says.
    (void)CoreNum(*call);
    const int64_t core_num = 1;
#else
    const int64_t core_num = CoreNum(*call);
#endif
    const Span& sp = call->span;
    const int64_t k = NextSignalIndex();

    CallPtr ws_call = ir::MakeOpCall(ir::ops::kWorldSize, {}, {}, sp);
    VarPtr ws = ir::MakeVar(fmt::format("__allreduce_signal_world_size_{}", k), ws_call->type, sp);
    out.push_back(ir::Assign(ws, ws_call, sp));

    std::string buf_name = fmt::format("__allreduce_signal_buf_{}", k);
    ExprPtr size = ir::Binary(
        ir::BinaryOp::kMul,
        ir::Binary(ir::BinaryOp::kMul, ws, ir::Int(core_num, ir::DataType::kInt64, sp), sp),
        ir::Int(4, ir::DataType::kInt64, sp), sp);
    CallPtr alloc = ir::MakeOpCall(ir::ops::kAllocWindowBuffer, {size}, {{"name", buf_name}}, sp);
    VarPtr buf = ir::MakeVar(buf_name, alloc->type, sp);
    out.push_back(ir::Assign(buf, alloc, sp));

    ExprPtr shape = ir::Tuple({ws, ir::Int(core_num, ir::DataType::kInt64, sp)}, sp);
    CallPtr window =
        ir::MakeOpCall(ir::ops::kWindow, {buf, shape}, {{"dtype", ir::DataType::kInt32}}, sp);
    VarPtr signal = ir::MakeVar(fmt::format("__allreduce_signal_{}", k), window->type, sp);
    out.push_back(ir::Assign(signal, window, sp));

    // The call keeps the result type it had (a pl._dump.call may have recorded one
    // that differs from the deduced type; DESIGN §3 says it is kept exactly).
    CallPtr rebuilt = ir::MakeOpCallWithType(ir::ops::kAllReduce, {call->args[0], signal},
                                             call->kwargs, call->type, sp);
    if (!call->attrs.empty()) {
      auto with_attrs = std::make_shared<Call>(*rebuilt);
      with_attrs->attrs = call->attrs;
      return with_attrs;
    }
    return rebuilt;
  }

  int64_t CoreNum(const Call& call) const {
    const ir::AttrValue* v = ir::FindKwarg(call.kwargs, "core_num");
    if (!v) return options_.default_core_num;
    if (!std::holds_alternative<int64_t>(*v) || std::get<int64_t>(*v) <= 0) {
      std::string got = std::holds_alternative<int64_t>(*v)
                            ? fmt::format("{}", std::get<int64_t>(*v))
                            : std::string("a non-integer");
      throw ValueError(
          fmt::format("pld.tensor.allreduce: core_num= must be a positive integer, got {}", got),
          call.span);
    }
    return std::get<int64_t>(*v);
  }

  bool Used(const std::string& n) const { return used_.count(n) != 0; }

  // One counter for the whole program: a signal takes the first value whose three
  // names are all free.
  int64_t NextSignalIndex() {
    int64_t k = counter_;
    for (;; ++k) {
      std::string a = fmt::format("__allreduce_signal_world_size_{}", k);
      std::string b = fmt::format("__allreduce_signal_buf_{}", k);
      std::string c = fmt::format("__allreduce_signal_{}", k);
#if CDS_INJECT_BUG == 14
      // Injected: only the view name is checked for collisions.
      if (Used(c)) continue;
#else
      if (Used(a) || Used(b) || Used(c)) continue;
#endif
      used_.insert(std::move(a));
      used_.insert(std::move(b));
      used_.insert(std::move(c));
      break;
    }
    counter_ = k + 1;
    return k;
  }

  std::string NextResultName() {
    int64_t k = counter_;
    std::string name;
    for (;; ++k) {
      name = fmt::format("__allreduce_result_{}", k);
      if (!Used(name)) break;
    }
    used_.insert(name);
    counter_ = k + 1;
    return name;
  }

  std::unordered_set<std::string>& used_;
  const SynthesizeOptions& options_;
  int64_t counter_ = 0;
};

}  // namespace

ir::ProgramPtr SynthesizeAllReduceSignals(const ir::ProgramPtr& program,
                                          const SynthesizeOptions& options) {
  if (options.default_core_num <= 0) {
    throw ValueError(
        fmt::format("default core_num must be positive, got {}", options.default_core_num),
        program ? program->span : Span{});
  }
  if (!program) return program;
  std::unordered_set<std::string> used;
  ReservedNameCollector collector(used);
  collector.Collect(*program);

  Synthesizer synth(used, options);
  std::vector<ir::FunctionPtr> functions;
  functions.reserve(program->functions.size());
  bool changed = false;
  // Program keeps functions in name order, which fixes the numbering.
  for (const auto& f : program->functions) {
    if (!f->IsHostOrchestrator()) {
      functions.push_back(f);
      continue;
    }
    StmtPtr body = synth.RewriteBody(f->body, 0);
    if (body == f->body) {
      functions.push_back(f);
      continue;
    }
    auto copy = std::make_shared<ir::Function>(*f);
    copy->body = body;
    functions.push_back(std::move(copy));
    changed = true;
  }
  if (!changed) return program;
  auto result =
      std::make_shared<ir::Program>(program->name, program->dynamic_dims, std::move(functions));
  result->span = program->span;
  return result;
}

}  // namespace cds::pass
