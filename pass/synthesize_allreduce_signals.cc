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

bool IsAllReduce(const ir::Expr* e) {
  return e && e->kind() == NodeKind::kCall &&
         static_cast<const Call&>(*e).OpName() == ir::ops::kAllReduce;
}

[[noreturn]] void ThrowNested(const Span& span) {
  throw ValueError(
      "pld.tensor.allreduce must be a direct assignment, a bare statement or a return value; "
      "it cannot be nested inside another expression",
      span);
}

// The pass in one walk over the program plus a fill-in step.
//
// The walk (`Rewrite*`) does what used to be two walks: it collects the names
// that could collide with synthesized ones (every function; only names starting
// with `__allreduce_` are kept, so the set stays tiny), and in host orchestrators
// it checks every allreduce in source order (nesting, arity, loops, core_num: the
// same checks in the same order as a rewrite walk, so the first error reported is
// unchanged) and builds the new bodies. A signal's number depends on names that
// may only appear later in the program, so a statement that changes is left as
// placeholder slots in its new SeqStmts (`Pending`); `FillPending` then numbers
// the sites in source order, as before, and writes the statements into the slots.
// The SeqStmts holding slots are created by this pass and are not visible to
// anyone until the program is returned.
class Synthesizer {
 public:
  explicit Synthesizer(const SynthesizeOptions& options) : options_(options) {}

  ir::ProgramPtr Run(const ir::ProgramPtr& program) {
    for (const auto& v : program->dynamic_dims) Note(v.get());
    std::vector<ir::FunctionPtr> functions;
    functions.reserve(program->functions.size());
    bool changed = false;
    // Program keeps functions in name order, which fixes the numbering.
    for (const auto& f : program->functions) {
      for (const auto& p : f->params) Note(p.get());
      if (!f->IsHostOrchestrator()) {
        NoteBody(f->body.get());
        functions.push_back(f);
        continue;
      }
      StmtPtr body = RewriteBody(f->body, 0);
      if (body == f->body) {
        functions.push_back(f);
        continue;
      }
      auto copy = ir::MakeNode<ir::Function>(*f);
      copy->body = body;
      functions.push_back(std::move(copy));
      changed = true;
    }
    if (!changed) return program;
    FillPending();
    auto result =
        ir::MakeNode<ir::Program>(program->name, program->dynamic_dims, std::move(functions));
    result->set_span(program->span());
    return result;
  }

 private:
  // A statement replaced by `count` statements starting at `seq->stmts[first]`,
  // written by FillPending.
  struct Pending {
    const ir::Stmt* stmt = nullptr;  // the original (owned by the input program)
    ir::SeqStmts* seq = nullptr;
    size_t first = 0;
    size_t count = 0;
  };

  // ---- names -------------------------------------------------------------

  void Note(const ir::Var* v) {
    if (v) Note(v->name_hint);
  }
  void Note(const std::string& n) {
    if (n.size() >= kReservedPrefix.size() &&
        std::string_view(n).substr(0, kReservedPrefix.size()) == kReservedPrefix) {
      used_.insert(n);
    }
  }

  // The Vars a statement defines.
  void NoteDefs(const ir::Stmt& s) {
    switch (s.kind()) {
      case NodeKind::kAssignStmt:
        Note(static_cast<const ir::AssignStmt&>(s).var.get());
        break;
      case NodeKind::kUnpackAssignStmt:
        for (const auto& v : static_cast<const ir::UnpackAssignStmt&>(s).vars) Note(v.get());
        break;
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ir::ForStmt&>(s);
        Note(f.loop_var.get());
        for (const auto& v : f.iter_args) Note(v.get());
        for (const auto& v : f.return_vars) Note(v.get());
        break;
      }
      case NodeKind::kScopeStmt:
        Note(static_cast<const ir::ScopeStmt&>(s).as_var.get());
        break;
      default:
        break;
    }
  }

  // Names below `e`; with `check`, an allreduce anywhere at or below `e` is an
  // error (found in the same pre-order as before, so the same one is reported).
  void Expr(const ir::Expr* e, bool check) {
    if (!e) return;
    const NodeKind k = e->kind();
    if (k == NodeKind::kVar || k == NodeKind::kIterArg) {
      Note(static_cast<const ir::Var&>(*e).name_hint);
      return;
    }
    if (k == NodeKind::kCall) {
      const auto& c = static_cast<const Call&>(*e);
      const std::string& op = c.OpName();
      if (check && op == ir::ops::kAllReduce) ThrowNested(e->span());
      if (op == ir::ops::kAllocWindowBuffer) {
        const ir::AttrValue* name = ir::FindKwarg(c.kwargs, "name");
        if (name && std::holds_alternative<std::string>(*name)) Note(std::get<std::string>(*name));
      }
    }
    detail::ForEachSubExpr(*e, [this, check](const ExprPtr& x) { Expr(x.get(), check); });
  }

  void StmtExprs(const ir::Stmt& s, bool check) {
    detail::ForEachStmtExpr(s, [this, check](const ExprPtr& x) { Expr(x.get(), check); });
  }

  // Functions other than host orchestrators: names only.
  void NoteBody(const ir::Stmt* s) {
    if (!s) return;
    NoteDefs(*s);
    StmtExprs(*s, false);
    detail::ForEachSubBody(*s, [this](const StmtPtr& c) { NoteBody(c.get()); });
  }

  // ---- the walk over host bodies ------------------------------------------

  // Returns `body` itself when nothing in it changed.
  StmtPtr RewriteBody(const StmtPtr& body, int depth) {
    if (!body) return body;
    if (body->kind() != NodeKind::kSeqStmts) {
      size_t slots = 0;
      StmtPtr single = RewriteStmt(body, depth, slots);
      if (slots == 0) return single ? single : body;
      // A site always becomes two statements or more: it needs a SeqStmts.
      std::vector<StmtPtr> out(slots);
      auto seq = ir::MakeNode<ir::SeqStmts>(std::move(out));
      seq->set_span(body->span());
      pending_.back().seq = seq.get();
      pending_.back().first = 0;
      return seq;
    }
    const auto& stmts = static_cast<const ir::SeqStmts&>(*body).stmts;
    const size_t n = stmts.size();
    std::vector<StmtPtr> out;  // filled from the first change on
    size_t first_pending = pending_.size();
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      detail::PrefetchAhead(stmts, i);
      const StmtPtr& s = stmts[i];
      size_t slots = 0;
      StmtPtr single = RewriteStmt(s, depth, slots);
      if (!single && slots == 0) {
        if (changed) out.push_back(s);
        continue;
      }
      if (!changed) {
        changed = true;
        out.reserve(n + 8);
        out.assign(stmts.begin(), stmts.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (single) {
        out.push_back(std::move(single));
      } else {
        pending_.back().first = out.size();
        out.resize(out.size() + slots);
      }
    }
    if (!changed) return body;
    auto seq = ir::MakeNode<ir::SeqStmts>(std::move(out));
    seq->set_span(body->span());
    // The pendings of this level (nested levels set their own first).
    for (size_t p = first_pending; p < pending_.size(); ++p) {
      if (pending_[p].seq == nullptr) pending_[p].seq = seq.get();
    }
    return seq;
  }

  template <typename T>
  static ir::NodeRef<T> CopyOf(const T& n) {
    return ir::MakeNode<T>(n);
  }

  // Checks `s` and returns its replacement when one compound statement replaces it,
  // or sets `slots` (and adds a Pending) when it is a site; null and 0 when unchanged.
  StmtPtr RewriteStmt(const StmtPtr& s, int depth, size_t& slots) {
    NoteDefs(*s);
    switch (s->kind()) {
      case NodeKind::kSeqStmts: {
        StmtPtr body = RewriteBody(s, depth);
        return body == s ? nullptr : body;
      }
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ir::ForStmt&>(*s);
        StmtExprs(f, true);
        StmtPtr body = RewriteBody(f.body, depth + 1);
        if (body == f.body) return nullptr;
        auto copy = CopyOf(f);
        copy->body = body;
        return copy;
      }
      case NodeKind::kWhileStmt: {
        const auto& w = static_cast<const ir::WhileStmt&>(*s);
        StmtExprs(w, true);
        StmtPtr body = RewriteBody(w.body, depth + 1);
        if (body == w.body) return nullptr;
        auto copy = CopyOf(w);
        copy->body = body;
        return copy;
      }
      case NodeKind::kIfStmt: {
        const auto& i = static_cast<const ir::IfStmt&>(*s);
        StmtExprs(i, true);
        StmtPtr then_body = RewriteBody(i.then_body, depth);
        StmtPtr else_body = RewriteBody(i.else_body, depth);
        if (then_body == i.then_body && else_body == i.else_body) return nullptr;
        auto copy = CopyOf(i);
        copy->then_body = then_body;
        copy->else_body = else_body;
        return copy;
      }
      case NodeKind::kScopeStmt: {
        const auto& sc = static_cast<const ir::ScopeStmt&>(*s);
        StmtExprs(sc, true);
        StmtPtr body = RewriteBody(sc.body, depth);
        if (body == sc.body) return nullptr;
        auto copy = CopyOf(sc);
        copy->body = body;
        return copy;
      }
      case NodeKind::kCommDomainScopeStmt: {
        const auto& sc = static_cast<const ir::CommDomainScopeStmt&>(*s);
        StmtPtr body = RewriteBody(sc.body, depth);
        if (body == sc.body) return nullptr;
        auto copy = CopyOf(sc);
        copy->body = body;
        return copy;
      }
      case NodeKind::kAssignStmt:
      case NodeKind::kEvalStmt: {
        const ir::Expr* value = s->kind() == NodeKind::kAssignStmt
                                    ? static_cast<const ir::AssignStmt&>(*s).value.get()
                                    : static_cast<const ir::EvalStmt&>(*s).expr.get();
        if (!IsAllReduce(value)) {
          Expr(value, true);
          return nullptr;
        }
        // An allreduce that already has its signal stays as it is.
        if (!CheckAllReduce(static_cast<const Call&>(*value), depth)) return nullptr;
        slots = 4;  // world size, buffer, signal, the statement
        break;
      }
      case NodeKind::kReturnStmt: {
        size_t count = 0;
        for (const auto& v : static_cast<const ir::ReturnStmt&>(*s).values) {
          if (!IsAllReduce(v.get())) {
            Expr(v.get(), true);
            continue;
          }
          // Lifted to `__allreduce_result_K = ...` even when it has its signal.
          count += CheckAllReduce(static_cast<const Call&>(*v), depth) ? 4 : 1;
        }
        if (count == 0) return nullptr;
        slots = count + 1;
        break;
      }
      default:
        StmtExprs(*s, true);
        return nullptr;
    }
    pending_.push_back(Pending{s.get(), nullptr, 0, slots});
    return nullptr;
  }

  // The checks of a direct allreduce, in their order: nesting in its arguments and
  // kwargs, arity, loop, core_num. True when it needs a signal.
  bool CheckAllReduce(const Call& call, int depth) {
    for (const auto& a : call.args) Expr(a.get(), true);
    detail::ForEachKwargExpr(call.kwargs, [this](const ExprPtr& x) { Expr(x.get(), true); });
    for (const auto& kv : call.attrs) Expr(kv.second.get(), false);  // names only
    const size_t arity = call.args.size();
    if (arity < 1 || arity > 2) {
      throw ValueError(
          fmt::format(
              "pld.tensor.allreduce takes 1 or 2 positional arguments (data, signal), got {}",
              arity),
          call.span());
    }
    if (arity == 2) return false;
    if (depth > 0) {
      throw ValueError(
          "a signal-less pld.tensor.allreduce is not supported inside a for/while loop; pass an "
          "explicit signal",
          call.span());
    }
    (void)CoreNum(call);
    return true;
  }

  // ---- fill-in, in source order ------------------------------------------

  void FillPending() {
    std::vector<StmtPtr> out;
    for (const Pending& p : pending_) {
      out.clear();
      Emit(*p.stmt, out);
      CDS_CHECK(out.size() == p.count && p.seq != nullptr, "allreduce site slot count mismatch");
      for (size_t j = 0; j < out.size(); ++j) p.seq->stmts[p.first + j] = std::move(out[j]);
    }
  }

  // Appends the statements replacing the site `s` (inserted ones first).
  void Emit(const ir::Stmt& s, std::vector<StmtPtr>& out) {
    switch (s.kind()) {
      case NodeKind::kAssignStmt: {
        const auto& a = static_cast<const ir::AssignStmt&>(s);
        ExprPtr call = Synthesize(ir::As<Call>(a.value), out);
        out.push_back(ir::Assign(a.var, call, a.span()));
        return;
      }
      case NodeKind::kEvalStmt: {
        const auto& e = static_cast<const ir::EvalStmt&>(s);
        ExprPtr call = Synthesize(ir::As<Call>(e.expr), out);
        out.push_back(ir::Eval(call, e.span()));
        return;
      }
      case NodeKind::kReturnStmt: {
        const auto& r = static_cast<const ir::ReturnStmt&>(s);
        std::vector<ExprPtr> values = r.values.ToVector();
        for (auto& v : values) {
          if (!IsAllReduce(v.get())) continue;
          ExprPtr call = Synthesize(ir::As<Call>(v), out);
          // Host lowering needs every allreduce bound to a Var, so even a call that
          // already has its signal is lifted out of the return.
          VarPtr result = ir::MakeVar(NextResultName(), call->type, call->span());
          out.push_back(ir::Assign(result, call, call->span()));
          v = result;
        }
        out.push_back(ir::Return(std::move(values), r.span()));
        return;
      }
      default:
        CDS_CHECK(false, "not an allreduce site");
    }
  }

  // Gives a signal-less call its signal (inserting the three defining statements
  // into `out`); returns the call itself when it already has one. The walk has
  // checked the call.
  ExprPtr Synthesize(const CallPtr& call, std::vector<StmtPtr>& out) {
    if (call->args.size() == 2) return call;
#if CDS_INJECT_BUG == 15
    // Injected: the signal is sized for one core whatever core_num= says.
    (void)CoreNum(*call);
    const int64_t core_num = 1;
#else
    const int64_t core_num = CoreNum(*call);
#endif
    const Span& sp = call->span();
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
      auto with_attrs = ir::MakeNode<Call>(*rebuilt);
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
          call.span());
    }
    return std::get<int64_t>(*v);
  }

  bool Used(const std::string& n) const { return used_.count(n) != 0; }

  // One counter for the whole program: a signal takes the first value whose three
  // names are all free.
  //
  // Only the program's own names can collide: every candidate is >= the counter,
  // which has moved past every name this pass took. So the names taken are not
  // recorded, and a program without `__allreduce_` names (the usual case) needs
  // no lookup at all.
  int64_t NextSignalIndex() {
    int64_t k = counter_;
    if (used_.empty()) {
      counter_ = k + 1;
      return k;
    }
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
    counter_ = k + 1;
    return name;
  }

  const SynthesizeOptions& options_;
  std::unordered_set<std::string> used_;  // the program's names starting with kReservedPrefix
  std::vector<Pending> pending_;
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
  Synthesizer synth(options);
  return synth.Run(program);
}

}  // namespace cds::pass
