// fuzz_text_mutate: .pyir text -> parse -> SynthesizeAllReduceSignals +
// MaterializeCommDomainScopes. Every input must end in either an output the
// verifier accepts (and that the pipeline leaves alone when run again) or a clean
// ValueError with a location; a crash, an internal CDS_CHECK failure or a
// verifier violation is a finding.
//
// The custom mutator works one level above bytes: it parses the input, applies
// one IR edit of the kind that moves coverage around (a dispatch into or out of a
// loop, another device=, a dropped or duplicated statement, an alias, swapped
// allocs, another loop bound, an extra collective, a retyped function, ...) and
// prints the program back. Inputs that do not parse get libFuzzer's byte
// mutations, so the parser's error paths stay reachable too.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/targets/asan_defaults.h"
#include "fuzz/targets/pipeline_check.h"
#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/mutator.h"
#include "ir/op_registry.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/walk.h"

extern "C" __attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t* data, size_t size,
                                                         size_t max_size);

namespace cds::fuzz {
namespace {

constexpr std::string_view kTarget = "fuzz_text_mutate";

using ir::NodeKind;
using ir::StmtPtr;

// ---------------------------------------------------------------------------
// The target.

// Every statement under `s`, in pre-order.
template <typename F>
void ForEachStmtUnder(const StmtPtr& s, F&& f) {
  if (!s) return;
  f(s);
  ir::ForEachSubStmt(*s, [&](const StmtPtr& sub) { ForEachStmtUnder(sub, f); });
}

// Input in the pl._dump form that already carries comm-domain scopes.
bool AlreadyMaterialized(const ir::Program& p) {
  bool found = false;
  for (const auto& f : p.functions) {
    ForEachStmtUnder(f->body, [&](const StmtPtr& s) {
      found = found || s->kind() == NodeKind::kCommDomainScopeStmt;
    });
  }
  return found;
}

void CheckText(std::string_view text) {
  ir::ParseOptions options;
  options.filename = "<fuzz>";
  ir::ProgramPtr input;
  try {
    input = ir::ParseProgram(text, options);
  } catch (const ValueError&) {
    return;  // the parser's answer to bad text
  }
  check::PipelineRun run = check::RunPipeline(input);
  if (run.error) {
    // Input-caused errors must point somewhere: a span-less ValueError from a
    // pass means it lost track of the construct it rejects.
    if (run.error->span().line <= 0) {
      check::Finding(kTarget, "a pass reported an error without a location",
                     run.stage + ": " + run.error->Format(), text);
    }
    return;
  }
  // Printed only for a finding's report: the verifier prints the output itself.
  const auto printed = [&run] { return ir::PrintProgram(run.output); };
  if (AlreadyMaterialized(*input)) {
    // The pass leaves a body that starts with a scope alone, so a pl._dump input
    // that is already inconsistent stays inconsistent (and statements after its
    // scopes stay outside them): only a consistent materialized input must come
    // out verified.
    verify::VerifyOptions fast;
    fast.round_trip = false;
    fast.max_diagnostics = 1;
    if (!verify::VerifyProgram(input, fast).empty()) return;
  }
  auto diags = verify::VerifyAll(input, run.output);
  const auto is_v006 = [](const auto& d) { return d.code == "CDS-V006"; };
  if (std::any_of(diags.begin(), diags.end(), is_v006)) {
    // The parser accepts some annotations that differ from the value's type (an
    // unknown type on either side, a scalar conversion, another window reference,
    // a pl._dump.call's recorded type; docs/text-format.md), and by design
    // (docs/pass.md, step 5) the pass re-mints a view's Call type only when the
    // annotation agrees with it. Such an input has its CDS-V006 already; only more
    // of them in the output are the pipeline's doing.
    verify::VerifyOptions fast;
    fast.round_trip = false;
    const auto before = verify::VerifyProgram(input, fast);
    if (std::count_if(before.begin(), before.end(), is_v006) >=
        std::count_if(diags.begin(), diags.end(), is_v006)) {
      std::erase_if(diags, is_v006);
    }
  }
  if (!diags.empty()) {
    check::Finding(kTarget, "the verifier rejected the pipeline output",
                   verify::FormatDiagnostics(diags),
                   std::string(text) + "\n--- output ---\n" + printed());
  }
  if (auto i = check::IdempotenceProblem(run.output); !i.empty()) {
    check::Finding(kTarget, "the pipeline is not idempotent", i, printed());
  }
}

// ---------------------------------------------------------------------------
// The IR mutator.

using Rng = std::mt19937;

size_t Below(Rng& rng, size_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

ir::CallPtr StmtCall(const StmtPtr& s) {
  if (s->kind() == NodeKind::kEvalStmt) {
    return ir::TryAs<ir::Call>(static_cast<const ir::EvalStmt&>(*s).expr, NodeKind::kCall);
  }
  if (s->kind() == NodeKind::kAssignStmt) {
    return ir::TryAs<ir::Call>(static_cast<const ir::AssignStmt&>(*s).value, NodeKind::kCall);
  }
  return nullptr;
}

StmtPtr WithCall(const StmtPtr& s, ir::CallPtr call) {
  if (s->kind() == NodeKind::kEvalStmt) return ir::Eval(std::move(call), s->span());
  const auto& a = static_cast<const ir::AssignStmt&>(*s);
  return ir::Assign(a.var, std::move(call), s->span());
}

// What a mutation may refer to: the function's view Vars, its loop vars (with
// the innermost ones last at the edit site) and the chip orchestrators.
struct Context {
  std::vector<ir::VarPtr> views;
  std::vector<ir::VarPtr> loop_vars;  // enclosing the edited statement list
  std::vector<ir::FunctionPtr> chip_orchs;
  int fresh = 0;
};

ir::ExprPtr WorldSize() { return ir::MakeOpCall(ir::ops::kWorldSize, {}); }

ir::ExprPtr DeviceChoice(Rng& rng, const Context& ctx) {
  switch (Below(rng, 6)) {
    case 0:
      return ir::Int(static_cast<int64_t>(Below(rng, 8)));
    case 1:
      return ir::Int(-1);
    case 2:
      return ir::Int(static_cast<int64_t>(Below(rng, 3)));
    default:
      if (ctx.loop_vars.empty()) return ir::Int(static_cast<int64_t>(Below(rng, 4)));
      {
        ir::VarPtr r = ctx.loop_vars[Below(rng, ctx.loop_vars.size())];
        if (Below(rng, 3) == 0) return ir::Add(r, ir::Int(1));
        return r;
      }
  }
}

ir::CallPtr WithDevice(const ir::Call& c, ir::ExprPtr device) {
  auto copy = ir::MakeNode<ir::Call>(c);
  copy->attrs.erase(std::remove_if(copy->attrs.begin(), copy->attrs.end(),
                                   [](const auto& kv) { return kv.first == "device"; }),
                    copy->attrs.end());
  if (device) copy->attrs.emplace_back("device", std::move(device));
  return copy;
}

ir::VarPtr FreshLoopVar(Context& ctx) {
  return ir::MakeVar("r_m" + std::to_string(ctx.fresh++), ir::ScalarTy(ir::DataType::kIndex));
}

// A loop bound the pass classifies one way or another (or rejects).
void RandomBounds(Rng& rng, ir::ExprPtr& start, ir::ExprPtr& stop, ir::ExprPtr& step) {
  start = ir::Int(0);
  step = ir::Int(1);
  switch (Below(rng, 6)) {
    case 0:
      stop = WorldSize();
      break;
    case 1:
      stop = ir::Int(0);
      break;
    case 2:
      start = ir::Int(static_cast<int64_t>(Below(rng, 3)));
      stop = ir::Int(static_cast<int64_t>(Below(rng, 6)));
      break;
    case 3:
      stop = ir::Int(static_cast<int64_t>(2 + Below(rng, 6)));
      step = ir::Int(static_cast<int64_t>(1 + Below(rng, 3)));
      break;
    case 4:
      start = ir::Int(1);
      stop = WorldSize();
      break;
    default:
      stop = ir::Int(static_cast<int64_t>(1 + Below(rng, 8)));
      break;
  }
}

// One edit of a statement list. Returns false when it did not apply.
using Edit = std::function<bool(std::vector<StmtPtr>&, Rng&, Context&)>;

bool DropStmt(std::vector<StmtPtr>& s, Rng& rng, Context&) {
  if (s.empty()) return false;
  s.erase(s.begin() + static_cast<long>(Below(rng, s.size())));
  return true;
}

bool DuplicateStmt(std::vector<StmtPtr>& s, Rng& rng, Context&) {
  if (s.empty()) return false;
  size_t i = Below(rng, s.size());
  s.insert(s.begin() + static_cast<long>(i + 1), s[i]);
  return true;
}

bool SwapStmts(std::vector<StmtPtr>& s, Rng& rng, Context&) {
  // Prefer swapping two allocs: their order decides scope and slot order.
  std::vector<size_t> allocs;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = StmtCall(s[i]);
    if (c && c->OpName() == ir::ops::kAllocWindowBuffer) allocs.push_back(i);
  }
  if (allocs.size() >= 2 && Below(rng, 2) == 0) {
    size_t a = Below(rng, allocs.size()), b = Below(rng, allocs.size());
    if (a == b) b = (a + 1) % allocs.size();
    std::swap(s[allocs[a]], s[allocs[b]]);
    return true;
  }
  if (s.size() < 2) return false;
  size_t i = Below(rng, s.size() - 1);
  std::swap(s[i], s[i + 1]);
  return true;
}

bool MoveIntoLoop(std::vector<StmtPtr>& s, Rng& rng, Context&) {
  std::vector<size_t> loops;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i]->kind() == NodeKind::kForStmt) loops.push_back(i);
  }
  if (loops.empty() || s.size() < 2) return false;
  size_t l = loops[Below(rng, loops.size())];
  size_t i = Below(rng, s.size());
  if (i == l) return false;
  StmtPtr moved = s[i];
  auto loop = ir::MakeNode<ir::ForStmt>(static_cast<const ir::ForStmt&>(*s[l]));
  std::vector<StmtPtr> body = ir::Flatten(loop->body);
  body.insert(Below(rng, 2) ? body.end() : body.begin(), moved);
  loop->body = ir::Seq(std::move(body), loop->body ? loop->body->span() : ir::Span{});
  s[l] = loop;
  s.erase(s.begin() + static_cast<long>(i));
  return true;
}

// Takes a random statement out of the body of the loop in `slot` (a ForStmt or a
// WhileStmt, rebuilt without it); null when that body is empty.
template <typename Loop>
StmtPtr TakeFromBody(StmtPtr& slot, Rng& rng) {
  auto loop = ir::MakeNode<Loop>(static_cast<const Loop&>(*slot));
  std::vector<StmtPtr> body = ir::Flatten(loop->body);
  if (body.empty()) return nullptr;
  size_t j = Below(rng, body.size());
  StmtPtr moved = body[j];
  body.erase(body.begin() + static_cast<long>(j));
  loop->body = ir::Seq(std::move(body), loop->body->span());
  slot = loop;
  return moved;
}

bool MoveOutOfLoop(std::vector<StmtPtr>& s, Rng& rng, Context&) {
  std::vector<size_t> loops;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i]->kind() == NodeKind::kForStmt || s[i]->kind() == NodeKind::kWhileStmt)
      loops.push_back(i);
  }
  if (loops.empty()) return false;
  size_t l = loops[Below(rng, loops.size())];
  StmtPtr moved = s[l]->kind() == NodeKind::kForStmt ? TakeFromBody<ir::ForStmt>(s[l], rng)
                                                     : TakeFromBody<ir::WhileStmt>(s[l], rng);
  if (!moved) return false;
  s.insert(s.begin() + static_cast<long>(Below(rng, 2) ? l + 1 : l), moved);
  return true;
}

bool WrapInLoop(std::vector<StmtPtr>& s, Rng& rng, Context& ctx) {
  if (s.empty()) return false;
  size_t i = Below(rng, s.size());
  StmtPtr inner = s[i];
  ir::VarPtr r = FreshLoopVar(ctx);
  if (auto c = StmtCall(inner); c && c->Callee()) inner = WithCall(inner, WithDevice(*c, r));
  ir::ExprPtr start, stop, step;
  RandomBounds(rng, start, stop, step);
  s[i] = ir::For(r, start, stop, step, ir::Seq({inner}));
  return true;
}

bool ChangeDevice(std::vector<StmtPtr>& s, Rng& rng, Context& ctx) {
  std::vector<size_t> dispatches;
  for (size_t i = 0; i < s.size(); ++i) {
    if (auto c = StmtCall(s[i]); c && c->Callee()) dispatches.push_back(i);
  }
  if (dispatches.empty()) return false;
  size_t i = dispatches[Below(rng, dispatches.size())];
  auto c = StmtCall(s[i]);
  s[i] = WithCall(s[i], WithDevice(*c, Below(rng, 12) == 0 ? nullptr : DeviceChoice(rng, ctx)));
  return true;
}

bool ChangeLoopBound(std::vector<StmtPtr>& s, Rng& rng, Context&) {
  std::vector<size_t> loops;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i]->kind() == NodeKind::kForStmt) loops.push_back(i);
  }
  if (loops.empty()) return false;
  size_t l = loops[Below(rng, loops.size())];
  auto loop = ir::MakeNode<ir::ForStmt>(static_cast<const ir::ForStmt&>(*s[l]));
  if (!loop->iter_args.empty()) return false;  // keep loop-carried forms intact
  ir::ExprPtr start, stop, step;
  RandomBounds(rng, start, stop, step);
  switch (Below(rng, 4)) {
    case 0:
      loop->stop = stop;
      break;
    case 1:
      loop->start = start;
      break;
    case 2:
      loop->step = step;
      break;
    default:
      loop->start = start;
      loop->stop = stop;
      loop->step = step;
  }
  s[l] = loop;
  return true;
}

// Replaces one Var argument of a call statement by another view in the function.
bool RetargetArg(std::vector<StmtPtr>& s, Rng& rng, Context& ctx) {
  if (ctx.views.empty()) return false;
  std::vector<size_t> calls;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = StmtCall(s[i]);
    if (c && !c->args.empty() && c->OpName() != ir::ops::kAllocWindowBuffer) calls.push_back(i);
  }
  if (calls.empty()) return false;
  size_t i = calls[Below(rng, calls.size())];
  auto copy = ir::MakeNode<ir::Call>(*StmtCall(s[i]));
  size_t a = Below(rng, copy->args.size());
  if (!copy->args[a] || !ir::IsVarLikeKind(copy->args[a]->kind())) return false;
  copy->args[a] = ctx.views[Below(rng, ctx.views.size())];
  if (!copy->Callee()) {
    // Keep the op call well typed: a stale recorded type would print as a
    // pl._dump.call whose type contradicts the op's rule, which tests the
    // verifier's tolerance of ill-typed input rather than the pass.
    ir::TypePtr t = ir::DeduceCallType(*copy);  // throws ValueError when ill-typed
    if (t) copy->type = t;
  }
  s[i] = WithCall(s[i], copy);
  return true;
}

bool AliasView(std::vector<StmtPtr>& s, Rng& rng, Context& ctx) {
  std::vector<size_t> defs;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i]->kind() != NodeKind::kAssignStmt) continue;
    const auto& a = static_cast<const ir::AssignStmt&>(*s[i]);
    if (a.var->type && a.var->type->kind() == NodeKind::kDistributedTensorType) defs.push_back(i);
  }
  if (defs.empty()) return false;
  size_t i = defs[Below(rng, defs.size())];
  ir::VarPtr v = static_cast<const ir::AssignStmt&>(*s[i]).var;
  ir::VarPtr w = ir::MakeVar(v->name_hint + "_al" + std::to_string(ctx.fresh++), v->type);
  s.insert(s.begin() + static_cast<long>(i + 1), ir::Assign(w, v));
  // Route later uses through the alias so that resolving it is what counts.
  for (size_t j = i + 2; j < s.size(); ++j) {
    auto c = StmtCall(s[j]);
    if (!c) continue;
    auto copy = ir::MakeNode<ir::Call>(*c);
    bool changed = false;
    for (auto& arg : copy->args) {
      if (arg == v) {
        arg = w;
        changed = true;
      }
    }
    if (changed) s[j] = WithCall(s[j], copy);
  }
  return true;
}

bool AddCollective(std::vector<StmtPtr>& s, Rng& rng, Context& ctx) {
  if (ctx.views.empty()) return false;
  auto pick = [&] { return ir::ExprPtr(ctx.views[Below(rng, ctx.views.size())]); };
  const ir::KwargList sum = {{"op", ir::EnumAttr{"pld.ReduceOp.Sum"}}};
  ir::CallPtr call;
  try {
    switch (Below(rng, 7)) {
      case 0:
        call = ir::MakeOpCall(ir::ops::kBarrier, {pick()});
        break;
      case 1:
        call = ir::MakeOpCall(ir::ops::kAllReduce, {pick()}, sum);
        break;
      case 2:
        call = ir::MakeOpCall(ir::ops::kAllReduce, {pick(), pick()}, sum);
        break;
      case 3:
        call = ir::MakeOpCall(ir::ops::kBroadcast, {pick(), pick()}, {{"root", int64_t{0}}});
        break;
      case 4:
        call = ir::MakeOpCall(ir::ops::kAllGather, {pick(), pick(), pick()});
        break;
      case 5:
        call = ir::MakeOpCall(ir::ops::kAllToAll, {pick(), pick(), pick()});
        break;
      default:
        call = ir::MakeOpCall(ir::ops::kAllToAllV, {pick(), pick(), pick(), pick(), pick()});
    }
  } catch (const ValueError&) {
    return false;  // ill-typed: the registry refused it
  }
  s.insert(s.begin() + static_cast<long>(Below(rng, s.size() + 1)), ir::Eval(call));
  return true;
}

bool AddDispatch(std::vector<StmtPtr>& s, Rng& rng, Context& ctx) {
  if (ctx.chip_orchs.empty()) return false;
  const ir::FunctionPtr& f = ctx.chip_orchs[Below(rng, ctx.chip_orchs.size())];
  std::vector<ir::ExprPtr> args;
  for (const auto& p : f->params) {
    ir::VarPtr match;
    for (const auto& v : ctx.views) {
      if (ir::StructuralEqual(v->type, p->type) || Below(rng, 4) == 0) match = v;
    }
    if (!match) return false;
    args.push_back(match);
  }
  ir::TypePtr result = f->return_types.size() == 1 ? f->return_types.front() : nullptr;
  auto call = ir::MakeFunctionCall(f->name, std::move(args), DeviceChoice(rng, ctx), result);
  s.insert(s.begin() + static_cast<long>(Below(rng, s.size() + 1)), ir::Eval(call));
  return true;
}

const std::vector<Edit>& Edits() {
  static const std::vector<Edit> edits = {
      DropStmt,   DuplicateStmt, SwapStmts,    MoveIntoLoop,    MoveOutOfLoop,
      WrapInLoop, ChangeDevice,  ChangeDevice, ChangeLoopBound, RetargetArg,
      AliasView,  AddCollective, AddDispatch};
  return edits;
}

// Rebuilds a body with the `target`-th statement list (pre-order) edited, keeping
// the loop vars of the for loops around that list in the context.
class ListEditor final : public ir::IRMutator {
 public:
  ListEditor(size_t target, const Edit& edit, Rng& rng, Context& ctx)
      : target_(target), edit_(edit), rng_(rng), ctx_(ctx) {}

  bool done() const { return done_; }

  ir::NodePtr MutateSeqStmts(const ir::NodeRef<const ir::SeqStmts>& n) override {
    if (done_) return n;
    if (counter_++ == target_) {
      std::vector<StmtPtr> stmts = n->stmts.ToVector();
      done_ = edit_(stmts, rng_, ctx_);
      return done_ ? ir::Seq(std::move(stmts), n->span()) : n;
    }
    return IRMutator::MutateSeqStmts(n);
  }

  ir::NodePtr MutateForStmt(const ir::NodeRef<const ir::ForStmt>& n) override {
    ctx_.loop_vars.push_back(n->loop_var);
    ir::NodePtr out = IRMutator::MutateForStmt(n);
    ctx_.loop_vars.pop_back();
    return out;
  }

  // Edits only rearrange statements: expressions and types are never entered.
#define CDS_KEEP_AS_IS(N) \
  ir::NodePtr Mutate##N(const ir::NodeRef<const ir::N>& n) override { return n; }
  CDS_EXPR_NODES(CDS_KEEP_AS_IS)
  CDS_TYPE_NODES(CDS_KEEP_AS_IS)
#undef CDS_KEEP_AS_IS

 private:
  size_t target_;
  size_t counter_ = 0;
  const Edit& edit_;
  Rng& rng_;
  Context& ctx_;
  bool done_ = false;
};

size_t CountLists(const StmtPtr& body) {
  size_t n = 0;
  ForEachStmtUnder(body, [&](const StmtPtr& s) { n += s->kind() == NodeKind::kSeqStmts; });
  return n;
}

// Flips how a function is declared, which decides whether its calls are
// dispatches and whether it is a host orchestrator at all.
ir::FunctionPtr Redeclare(const ir::Function& f, Rng& rng) {
  auto copy = ir::MakeNode<ir::Function>(f);
  switch (Below(rng, 5)) {
    case 0:
      copy->func_type = ir::FunctionType::kGraph;
      break;
    case 1:
      copy->func_type = ir::FunctionType::kInCore;
      copy->level.reset();
      copy->role.reset();
      break;
    case 2:
      copy->func_type = ir::FunctionType::kOpaque;
      copy->level = ir::Level::kChip;
      copy->role = ir::Role::kOrchestrator;
      break;
    case 3:
      copy->func_type = ir::FunctionType::kOrchestration;
      copy->level.reset();
      copy->role.reset();
      break;
    default:
      copy->level = ir::Level::kHost;
      copy->role = ir::Role::kOrchestrator;
      break;
  }
  return copy;
}

// Where the mutator edits and whom new dispatches call, read from the declaration
// as written. It only steers the edits: the oracle is the verifier.
bool DeclaredHost(const ir::Function& f) { return f.level == ir::Level::kHost; }
bool DeclaredChip(const ir::Function& f) {
  if (f.func_type == ir::FunctionType::kGraph || f.level == ir::Level::kHost) return false;
  return f.func_type == ir::FunctionType::kOrchestration ||
         (f.level == ir::Level::kChip && f.role == ir::Role::kOrchestrator);
}

std::string MutateProgram(const ir::ProgramPtr& program, Rng& rng) {
  std::vector<ir::FunctionPtr> functions = program->functions;
  Context ctx;
  std::vector<size_t> hosts;
  for (size_t i = 0; i < functions.size(); ++i) {
    if (DeclaredHost(*functions[i]) && functions[i]->body) hosts.push_back(i);
    if (DeclaredChip(*functions[i])) ctx.chip_orchs.push_back(functions[i]);
  }
  if (hosts.empty() || Below(rng, 16) == 0) {
    if (functions.empty()) return {};
    size_t i = Below(rng, functions.size());
    functions[i] = Redeclare(*functions[i], rng);
  } else {
    size_t h = hosts[Below(rng, hosts.size())];
    const ir::Function& f = *functions[h];
    ForEachStmtUnder(f.body, [&](const StmtPtr& s) {
      if (s->kind() != NodeKind::kAssignStmt) return;
      const auto& a = static_cast<const ir::AssignStmt&>(*s);
      if (a.var->type && a.var->type->kind() == NodeKind::kDistributedTensorType)
        ctx.views.push_back(a.var);
    });
    const size_t lists = CountLists(f.body);
    // A few attempts: an edit may not apply to the list drawn.
    for (int attempt = 0; attempt < 8; ++attempt) {
      const Edit& edit = Edits()[Below(rng, Edits().size())];
      ListEditor editor(Below(rng, lists), edit, rng, ctx);
      StmtPtr body = editor.MutateStmt(f.body);
      if (!editor.done()) continue;
      auto copy = ir::MakeNode<ir::Function>(f);
      copy->body = body;
      functions[h] = copy;
      break;
    }
  }
  auto mutated =
      ir::MakeNode<ir::Program>(program->name, program->dynamic_dims, std::move(functions));
  return ir::PrintProgram(mutated);
}

}  // namespace
}  // namespace cds::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 16)) return -1;
  cds::fuzz::CheckText(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  cds::fuzz::Rng rng(seed);
  // Now and then mutate bytes anyway, so parse errors and odd spellings get explored.
  if (LLVMFuzzerMutate && cds::fuzz::Below(rng, 10) == 0)
    return LLVMFuzzerMutate(data, size, max_size);
  cds::ir::ProgramPtr program;
  try {
    cds::ir::ParseOptions options;
    options.filename = "<mutate>";
    program =
        cds::ir::ParseProgram(std::string_view(reinterpret_cast<const char*>(data), size), options);
  } catch (const cds::ValueError&) {
    return LLVMFuzzerMutate ? LLVMFuzzerMutate(data, size, max_size) : size;
  }
  std::string text;
  try {
    text = cds::fuzz::MutateProgram(program, rng);
  } catch (const cds::ValueError&) {
    text.clear();  // a builder refused the edit (e.g. a scalar op on a non-scalar)
  }
  if (text.empty() || text.size() > max_size) {
    return LLVMFuzzerMutate ? LLVMFuzzerMutate(data, size, max_size) : size;
  }
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
