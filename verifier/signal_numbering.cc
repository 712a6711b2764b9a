// The numbers SynthesizeAllReduceSignals gives its names, re-derived from the input
// (the rule of docs/pass.md, "Numbering", in the verifier's own words):
//   - the input's reserved names are every name starting with `__allreduce_` that
//     it holds: a Var's, wherever the Var is defined or used, and an alloc's name=;
//   - one counter for the whole program, from 0; host orchestrators in program
//     order, their allreduces in source order;
//   - an allreduce the input wrote without a signal gets signal number K: the
//     first K from the counter on for which none of `__allreduce_signal_world_size_K`,
//     `__allreduce_signal_buf_K` and `__allreduce_signal_K` is reserved;
//   - then, when the input returned that allreduce, its result is named
//     `__allreduce_result_K` with the first such K whose name is not reserved;
//   - each number taken moves the counter to one past it.
// The allreduces of a host are paired with the input's by source order; when their
// counts differ the body changed, which CDS-V028 reports, and the host is skipped.
// Only the first wrong number is reported: every number after it depends on it.

#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "ir/op_registry.h"
#include "ir/walk.h"
#include "verifier/checks.h"
#include "verifier/orchestrators.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

constexpr std::string_view kPrefix = "__allreduce_";
constexpr std::string_view kSignal = "__allreduce_signal_";
constexpr std::string_view kResult = "__allreduce_result_";

using NameSet = absl::flat_hash_set<std::string>;

void NoteName(std::string_view name, NameSet& reserved) {
  if (name.substr(0, kPrefix.size()) == kPrefix) reserved.emplace(name);
}

void NoteExpr(const Expr& e, NameSet& reserved) {
  if (IsVarLikeKind(e.kind())) NoteName(static_cast<const Var&>(e).name_hint, reserved);
  if (e.kind() == NodeKind::kCall) {
    const auto& c = static_cast<const Call&>(e);
    if (c.OpName() == ops::kAllocWindowBuffer) {
      const AttrValue* name = FindKwarg(c.kwargs, "name");
      if (const auto* s = name ? std::get_if<std::string>(name) : nullptr) NoteName(*s, reserved);
    }
  }
  ForEachOperand(e, [&](const ExprPtr& x) {
    if (x) NoteExpr(*x, reserved);
  });
}

void NoteStmt(const Stmt& s, NameSet& reserved) {
  ForEachDefinedVar(s, [&](const Var& v) { NoteName(v.name_hint, reserved); });
  ForEachStmtOperand(s, [&](const ExprPtr& e) {
    if (e) NoteExpr(*e, reserved);
  });
  ForEachSubStmt(s, [&](const StmtPtr& sub) {
    if (sub) NoteStmt(*sub, reserved);
  });
}

NameSet ReservedNames(const Program& input) {
  NameSet reserved;
  for (const auto& d : input.dynamic_dims) {
    if (d) NoteName(d->name_hint, reserved);
  }
  for (const auto& fn : input.functions) {
    if (!fn) continue;
    for (const auto& p : fn->params) {
      if (p) NoteName(p->name_hint, reserved);
    }
    if (fn->body) NoteStmt(*fn->body, reserved);
  }
  return reserved;
}

// An allreduce written directly as a statement: `x = allreduce(...)`, a bare
// `allreduce(...)`, or one value of a `return`.
struct Site {
  const Call* call = nullptr;
  const Var* assigned = nullptr;  // the Var an assignment binds it to
  bool returned = false;
};

const Call* AllReduceOf(const ExprPtr& e) {
  if (!e || e->kind() != NodeKind::kCall) return nullptr;
  const auto* c = static_cast<const Call*>(e.get());
  return c->OpName() == ops::kAllReduce ? c : nullptr;
}

void CollectSites(const Stmt& s, std::vector<Site>& out) {
  switch (s.kind()) {
    case NodeKind::kAssignStmt: {
      const auto& a = static_cast<const AssignStmt&>(s);
      if (const Call* c = AllReduceOf(a.value)) out.push_back({c, a.var.get(), false});
      return;
    }
    case NodeKind::kEvalStmt:
      if (const Call* c = AllReduceOf(static_cast<const EvalStmt&>(s).expr)) out.push_back({c});
      return;
    case NodeKind::kReturnStmt:
      for (const auto& v : static_cast<const ReturnStmt&>(s).values) {
        if (const Call* c = AllReduceOf(v)) out.push_back({c, nullptr, true});
      }
      return;
    default:
      ForEachSubStmt(s, [&](const StmtPtr& sub) {
        if (sub) CollectSites(*sub, out);
      });
  }
}

std::vector<Site> SitesOf(const Function& fn) {
  std::vector<Site> sites;
  if (fn.body) CollectSites(*fn.body, sites);
  return sites;
}

// K of `<prefix>K`, K a decimal number without leading zeros.
std::optional<int64_t> NumberAfter(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int64_t k = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return k;
}

class Numbering {
 public:
  Numbering(const Program& input, DiagnosticSink& sink) : input_(input), sink_(sink) {}

  void SetHost(const Function& host) { host_ = &host; }

  // The output's signal for an allreduce the input wrote without one; false once a
  // number was wrong.
  bool Signal(const Site& out) {
    const Call& c = *out.call;
    // Without a second argument CDS-V022 reports it.
    if (c.args.size() != 2 || !c.args[1] || !IsVarLikeKind(c.args[1]->kind())) return true;
    const std::string& name = static_cast<const Var&>(*c.args[1]).name_hint;
    int64_t want = counter_;
    while (Reserved(fmt::format("{}world_size_{}", kSignal, want)) ||
           Reserved(fmt::format("{}buf_{}", kSignal, want)) ||
           Reserved(fmt::format("{}{}", kSignal, want))) {
      ++want;
    }
    return Check("signal", NumberAfter(name, kSignal), name, want, c);
  }

  // The Var the output binds a returned allreduce to, before its return.
  bool Result(const Site& out) {
    const Call& c = *out.call;
    const std::string name = out.assigned ? out.assigned->name_hint : std::string("<none>");
    int64_t want = counter_;
    while (Reserved(fmt::format("{}{}", kResult, want))) ++want;
    return Check("result", out.assigned ? NumberAfter(name, kResult) : std::nullopt, name, want, c);
  }

 private:
  // Read from the input at the first number to check: most programs have none.
  bool Reserved(const std::string& name) {
    if (!reserved_) reserved_ = ReservedNames(input_);
    return reserved_->contains(name);
  }

  bool Check(std::string_view what, std::optional<int64_t> got, const std::string& name,
             int64_t want, const Call& c) {
    if (got == want) {
      counter_ = want + 1;
      return true;
    }
    const std::string data = c.args.empty() ? std::string("<none>") : ExprText(c.args[0]);
    sink_.Report(CheckId::kSignalNumberMismatch,
                 fmt::format("the synthesized {} of pld.tensor.allreduce of '{}' in '{}' is named "
                             "'{}'; the input asks for number {} (the first from {} on whose "
                             "names the input does not hold)",
                             what, data, host_->name, name, want, counter_),
                 c.span());
    return false;
  }

  const Program& input_;
  std::optional<NameSet> reserved_;
  const Function* host_ = nullptr;
  DiagnosticSink& sink_;
  int64_t counter_ = 0;
};

}  // namespace

void CheckSignalNumbering(const Program& before, const Program& after, DiagnosticSink& sink) {
  Numbering numbering(before, sink);
  for (const auto& out_fn : after.functions) {
    if (!out_fn || !IsHostOrchestrator(*out_fn)) continue;
    const Function* in_fn = nullptr;
    for (const auto& f : before.functions) {
      if (f && f->name == out_fn->name) in_fn = f.get();
    }
    if (!in_fn || !IsHostOrchestrator(*in_fn)) continue;
    const std::vector<Site> in = SitesOf(*in_fn);
    const std::vector<Site> out = SitesOf(*out_fn);
    if (in.size() != out.size()) continue;
    numbering.SetHost(*out_fn);
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].call->args.size() == 1 && !numbering.Signal(out[i])) return;
      if (in[i].returned && !numbering.Result(out[i])) return;
    }
  }
}

}  // namespace cds::verify
