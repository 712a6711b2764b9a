#include "tools/cds-reduce/reduce.h"

#include <algorithm>
#include <exception>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/builder.h"
#include "ir/error.h"
#include "ir/mutator.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/walk.h"

namespace cds::reduce {
namespace {

using namespace cds::ir;

using Replacements = std::unordered_map<const Node*, NodePtr>;

// The mutator's own traversal, used both to find reduction targets and to replace
// them, so that both always agree on what is reachable. Types are never entered
// and shape/list literals (MakeTuple) are left alone: shrinking a shape would
// leave stale result types behind that only the printer's explicit-type form can
// express, which makes reduced files harder to read, not smaller.
class Walker : public IRMutator {
 public:
#define CDS_REDUCE_SKIP_TYPE(N) \
  NodePtr Mutate##N(const ir::NodeRef<const N>& n) override { return n; }
  CDS_TYPE_NODES(CDS_REDUCE_SKIP_TYPE)
#undef CDS_REDUCE_SKIP_TYPE
  NodePtr MutateMakeTuple(const ir::NodeRef<const MakeTuple>& n) override { return n; }
};

struct Targets {
  std::vector<std::pair<size_t, ir::NodeRef<const SeqStmts>>> seqs;  // (function, list)
  std::vector<std::pair<size_t, CallPtr>> calls;
  std::vector<std::pair<size_t, ir::NodeRef<const ConstInt>>> consts;
};

class Collector final : public Walker {
 public:
  Collector(Targets& t, size_t fn) : t_(t), fn_(fn) {}
  NodePtr MutateSeqStmts(const ir::NodeRef<const SeqStmts>& n) override {
    t_.seqs.emplace_back(fn_, n);  // before the children: pre-order
    return Walker::MutateSeqStmts(n);
  }
  NodePtr MutateCall(const ir::NodeRef<const Call>& n) override {
    t_.calls.emplace_back(fn_, n);
    return Walker::MutateCall(n);
  }
  NodePtr MutateConstInt(const ir::NodeRef<const ConstInt>& n) override {
    t_.consts.emplace_back(fn_, n);
    return n;
  }

 private:
  Targets& t_;
  size_t fn_;
};

Targets Collect(const Program& p) {
  Targets t;
  for (size_t i = 0; i < p.functions.size(); ++i) {
    if (!p.functions[i] || !p.functions[i]->body) continue;
    Collector c(t, i);
    c.MutateStmt(p.functions[i]->body);
  }
  return t;
}

class Replacer final : public Walker {
 public:
  explicit Replacer(const Replacements& r) : r_(r) {}
  NodePtr MutateSeqStmts(const ir::NodeRef<const SeqStmts>& n) override {
    if (auto it = r_.find(n.get()); it != r_.end()) return it->second;
    return Walker::MutateSeqStmts(n);
  }
  NodePtr MutateCall(const ir::NodeRef<const Call>& n) override {
    if (auto it = r_.find(n.get()); it != r_.end()) return it->second;
    return Walker::MutateCall(n);
  }
  NodePtr MutateConstInt(const ir::NodeRef<const ConstInt>& n) override {
    if (auto it = r_.find(n.get()); it != r_.end()) return it->second;
    return n;
  }

 private:
  const Replacements& r_;
};

// Drops argument `index` from every call of function `callee`.
class DropArg final : public Walker {
 public:
  DropArg(std::string callee, size_t index) : callee_(std::move(callee)), index_(index) {}
  NodePtr MutateCall(const ir::NodeRef<const Call>& n) override {
    auto m = ir::PtrCast<const Call>(Walker::MutateCall(n));
    GlobalVarPtr g = m->Callee();
    if (!g || g->name != callee_ || index_ >= m->args.size()) return m;
    auto c = ir::MakeNode<Call>(*m);
    c->args.erase(c->args.begin() + static_cast<ptrdiff_t>(index_));
    return c;
  }

 private:
  std::string callee_;
  size_t index_;
};

ProgramPtr WithBody(const ProgramPtr& p, size_t fi, StmtPtr body) {
  std::vector<FunctionPtr> fns = p->functions;
  auto f = ir::MakeNode<Function>(*fns[fi]);
  f->body = std::move(body);
  fns[fi] = std::move(f);
  auto np = ir::MakeNode<Program>(p->name, p->dynamic_dims, std::move(fns));
  np->set_span(p->span());
  return np;
}

ProgramPtr Replace(const ProgramPtr& p, size_t fi, const NodePtr& from, NodePtr to) {
  Replacements r{{from.get(), std::move(to)}};
  Replacer m(r);
  return WithBody(p, fi, m.MutateStmt(p->functions[fi]->body));
}

StmtPtr MakeSeq(std::vector<StmtPtr> stmts, const Span& span) {
  auto s = ir::MakeNode<SeqStmts>(std::move(stmts));
  s->set_span(span);
  return s;
}

// The statement lists a compound statement can be replaced by: each statement it
// holds directly (a loop's or scope's body, either branch of an if), as its field
// table lists them. A for loop with loop-carried values is kept whole.
std::vector<std::vector<StmtPtr>> Inners(const StmtPtr& s) {
  std::vector<std::vector<StmtPtr>> out;
  if (s->kind() == NodeKind::kSeqStmts) return out;  // a list, reduced as one elsewhere
  if (s->kind() == NodeKind::kForStmt) {
    const auto& f = static_cast<const ForStmt&>(*s);
    if (!f.iter_args.empty() || !f.body) return out;
    // The loop variable becomes its first value, so uses stay defined.
    VarMap m{{f.loop_var.get(), f.start}};
    out.push_back(Flatten(Substitute(f.body, m)));
    return out;
  }
  ForEachSubStmt(*s, [&](const StmtPtr& body) { out.push_back(Flatten(body)); });
  return out;
}

std::vector<std::vector<size_t>> Split(const std::vector<size_t>& items, size_t parts) {
  std::vector<std::vector<size_t>> out;
  size_t start = 0;
  for (size_t i = 0; i < parts; ++i) {
    size_t end = start + (items.size() - start) / (parts - i);
    if (end > start) out.emplace_back(items.begin() + start, items.begin() + end);
    start = end;
  }
  return out;
}

// Zeller's ddmin over indices 0..n-1; `test(keep)` builds and tests a candidate
// that keeps exactly those indices.
bool DDMin(size_t n, const std::function<bool(const std::vector<size_t>&)>& test) {
  if (n == 0) return false;
  if (test({})) return true;
  std::vector<size_t> items(n);
  std::iota(items.begin(), items.end(), 0);
  bool progress = false;
  size_t granularity = 2;
  while (items.size() >= 2) {
    auto chunks = Split(items, std::min(granularity, items.size()));
    bool reduced = false;
    for (const auto& c : chunks) {
      if (c.size() < items.size() && test(c)) {
        items = c;
        granularity = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && chunks.size() > 2) {
      for (const auto& c : chunks) {
        std::vector<size_t> rest;
        std::set_difference(items.begin(), items.end(), c.begin(), c.end(),
                            std::back_inserter(rest));
        if (test(rest)) {
          items = std::move(rest);
          granularity = std::max<size_t>(granularity - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (reduced) {
      progress = true;
      continue;
    }
    if (granularity >= items.size()) break;
    granularity = std::min(items.size(), granularity * 2);
  }
  return progress;
}

template <typename List>
std::vector<typename List::value_type> Pick(const List& v, const std::vector<size_t>& keep) {
  std::vector<typename List::value_type> out;
  out.reserve(keep.size());
  for (size_t i : keep) out.push_back(v[i]);
  return out;
}

class Reducer {
 public:
  Reducer(const Interesting& test, const ReduceOptions& options) : test_(test), options_(options) {}

  ReduceResult Run(const ProgramPtr& program) {
    ReduceResult result;
    best_ = program;
    try {
      best_text_ = PrintProgram(program);
    } catch (const std::exception&) {
      result.text = "";
      return result;
    }
    seen_.insert(best_text_);
    ++tests_;
    result.start_interesting = test_(best_text_);
    Report("start");
    if (result.start_interesting) {
      for (result.rounds = 0; result.rounds < options_.max_rounds; ++result.rounds) {
        bool progress = false;
        progress |= Step("functions", &Reducer::Functions);
        progress |= Step("statements", &Reducer::Statements);
        progress |= Step("loops", &Reducer::Loops);
        progress |= Step("aliases", &Reducer::Aliases);
        progress |= Step("call-args", &Reducer::CallArgs);
        progress |= Step("params", &Reducer::Params);
        progress |= Step("callees", &Reducer::Callees);
        progress |= Step("constants", &Reducer::Constants);
        if (!progress || tests_ >= options_.max_tests) break;
      }
    }
    result.text = best_text_;
    result.tests = tests_;
    return result;
  }

 private:
  bool Step(std::string_view name, bool (Reducer::*step)()) {
    bool p = (this->*step)();
    Report(name);
    return p;
  }

  void Report(std::string_view step) {
    if (options_.progress) options_.progress(step, CountLines(best_text_), tests_);
  }

  // Prints, dedups, reparses and tests a candidate; adopts the reparsed program
  // when it is interesting (fresh spans, and the exact program the text means).
  bool Try(const ProgramPtr& candidate) {
    if (tests_ >= options_.max_tests) return false;
    std::string text;
    try {
      text = PrintProgram(candidate);
    } catch (const std::exception&) {
      return false;
    }
    if (!seen_.insert(text).second) return false;
    ProgramPtr reparsed;
    try {
      reparsed = ParseProgram(text);
    } catch (const std::exception&) {
      return false;
    }
    ++tests_;
    if (!test_(text)) return false;
    best_ = std::move(reparsed);
    best_text_ = std::move(text);
    return true;
  }

  bool Functions() {
    ProgramPtr base = best_;
    return DDMin(base->functions.size(), [&](const std::vector<size_t>& keep) {
      auto p = ir::MakeNode<Program>(base->name, base->dynamic_dims, Pick(base->functions, keep));
      p->set_span(base->span());
      return Try(p);
    });
  }

  // Pre-order index k names the same list before and after that list shrinks:
  // only its own subtree changes, and everything earlier in pre-order is kept.
  bool Statements() {
    bool progress = false;
    for (size_t k = 0;; ++k) {
      Targets t = Collect(*best_);
      if (k >= t.seqs.size()) break;
      const size_t fi = t.seqs[k].first;
      const auto seq = t.seqs[k].second;
      ProgramPtr base = best_;
      progress |= DDMin(seq->stmts.size(), [&](const std::vector<size_t>& keep) {
        return Try(Replace(base, fi, seq, MakeSeq(Pick(seq->stmts, keep), seq->span())));
      });
    }
    return progress;
  }

  // Tries `edit` at every statement of every list, in pre-order, collecting again
  // after each change: edit(function index, list, statement index) says whether it
  // kept a change there; a kept change is followed by another try at the same index.
  template <typename Edit>
  bool EachStatement(Edit edit) {
    bool progress = false;
    for (size_t k = 0;; ++k) {
      for (size_t i = 0;;) {
        Targets t = Collect(*best_);
        if (k >= t.seqs.size()) return progress;
        const size_t fi = t.seqs[k].first;
        const auto seq = t.seqs[k].second;
        if (i >= seq->stmts.size()) break;
        if (edit(fi, seq, i)) {
          progress = true;  // the spliced-in or following statements are tried next
        } else {
          ++i;
        }
      }
    }
  }

  bool Loops() {
    return EachStatement([&](size_t fi, const auto& seq, size_t i) {
      for (auto& inner : Inners(seq->stmts[i])) {
        std::vector<StmtPtr> stmts(seq->stmts.begin(), seq->stmts.begin() + i);
        stmts.insert(stmts.end(), inner.begin(), inner.end());
        stmts.insert(stmts.end(), seq->stmts.begin() + i + 1, seq->stmts.end());
        if (Try(Replace(best_, fi, seq, MakeSeq(std::move(stmts), seq->span())))) return true;
      }
      return false;
    });
  }

  // `w = v` and `n = 4`: drop the definition and use the value directly.
  bool Aliases() {
    return EachStatement([&](size_t fi, const auto& seq, size_t i) {
      const StmtPtr& s = seq->stmts[i];
      if (s->kind() != NodeKind::kAssignStmt) return false;
      const auto& a = static_cast<const AssignStmt&>(*s);
      const NodeKind vk = a.value ? a.value->kind() : NodeKind::kCall;
      if (!a.var ||
          (vk != NodeKind::kVar && vk != NodeKind::kConstInt && vk != NodeKind::kConstBool)) {
        return false;
      }
      std::vector<StmtPtr> stmts = seq->stmts.ToVector();
      stmts.erase(stmts.begin() + static_cast<ptrdiff_t>(i));
      ProgramPtr removed = Replace(best_, fi, seq, MakeSeq(std::move(stmts), seq->span()));
      VarMap m{{a.var.get(), a.value}};
      return Try(WithBody(removed, fi, Substitute(removed->functions[fi]->body, m)));
    });
  }

  bool CallArgs() {
    bool progress = false;
    for (size_t c = 0;; ++c) {
      for (;;) {
        Targets t = Collect(*best_);
        if (c >= t.calls.size()) return progress;
        const size_t fi = t.calls[c].first;
        const CallPtr call = t.calls[c].second;
        bool replaced = false;
        auto attempt = [&](auto&& edit) {
          auto copy = ir::MakeNode<Call>(*call);
          edit(*copy);
          return Try(Replace(best_, fi, call, copy));
        };
        // A cross-function call keeps its arity: Params() drops an argument
        // together with the callee's parameter, which keeps the call printable
        // in the user form.
        for (size_t j = call->Callee() ? 0 : call->args.size(); j-- > 0 && !replaced;) {
          replaced =
              attempt([&](Call& x) { x.args.erase(x.args.begin() + static_cast<ptrdiff_t>(j)); });
        }
        for (size_t j = call->kwargs.size(); j-- > 0 && !replaced;) {
          // An alloc always carries its logical name (docs/ir-conventions.md).
          if (call->kwargs[j].first == "name") continue;
          replaced = attempt(
              [&](Call& x) { x.kwargs.erase(x.kwargs.begin() + static_cast<ptrdiff_t>(j)); });
        }
        for (size_t j = call->attrs.size(); j-- > 0 && !replaced;) {
          replaced =
              attempt([&](Call& x) { x.attrs.erase(x.attrs.begin() + static_cast<ptrdiff_t>(j)); });
        }
        if (!replaced) break;
        progress = true;
      }
    }
  }

  bool Params() {
    bool progress = false;
    for (size_t f = 0; f < best_->functions.size(); ++f) {
      for (size_t i = 0; i < best_->functions[f]->params.size();) {
        const std::string name = best_->functions[f]->name;
        DropArg drop(name, i);
        std::vector<FunctionPtr> fns;
        for (size_t g = 0; g < best_->functions.size(); ++g) {
          auto nf = ir::MakeNode<Function>(*best_->functions[g]);
          if (nf->body) nf->body = drop.MutateStmt(nf->body);
          if (g == f) {
            nf->params.erase(nf->params.begin() + static_cast<ptrdiff_t>(i));
            if (i < nf->param_directions.size()) {
              nf->param_directions.erase(nf->param_directions.begin() + static_cast<ptrdiff_t>(i));
            }
          }
          fns.push_back(std::move(nf));
        }
        auto p = ir::MakeNode<Program>(best_->name, best_->dynamic_dims, std::move(fns));
        p->set_span(best_->span());
        if (Try(p)) {
          progress = true;
        } else {
          ++i;
        }
      }
    }
    return progress;
  }

  // Calls another function with the same signature instead, so that functions
  // that only differ by name can be removed.
  bool Callees() {
    bool progress = false;
    for (size_t c = 0;; ++c) {
      Targets t = Collect(*best_);
      if (c >= t.calls.size()) return progress;
      const size_t fi = t.calls[c].first;
      const CallPtr call = t.calls[c].second;
      GlobalVarPtr callee = call->Callee();
      FunctionPtr from = callee ? best_->FindFunction(callee->name) : nullptr;
      if (!from) continue;
      for (const auto& to : best_->functions) {
        if (to->name >= from->name || to == best_->functions[fi] || !SameSignature(*from, *to)) {
          continue;  // only towards earlier names, so two functions never swap back and forth
        }
        auto copy = ir::MakeNode<Call>(*call);
        auto g = ir::MakeNode<GlobalVar>(to->name);
        g->set_span(callee->span());
        copy->op = g;
        if (Try(Replace(best_, fi, call, copy))) {
          progress = true;
          break;
        }
      }
    }
  }

  static bool SameSignature(const Function& a, const Function& b) {
    if (a.params.size() != b.params.size() || a.return_types.size() != b.return_types.size() ||
        a.func_type != b.func_type || a.level != b.level || a.role != b.role) {
      return false;
    }
    for (size_t i = 0; i < a.params.size(); ++i) {
      if (!StructuralEqual(a.params[i]->type, b.params[i]->type)) return false;
    }
    for (size_t i = 0; i < a.return_types.size(); ++i) {
      if (!StructuralEqual(a.return_types[i], b.return_types[i])) return false;
    }
    return true;
  }

  bool Constants() {
    bool progress = false;
    for (size_t c = 0;; ++c) {
      for (;;) {
        Targets t = Collect(*best_);
        if (c >= t.consts.size()) return progress;
        const size_t fi = t.consts[c].first;
        const auto k = t.consts[c].second;
        const int64_t v = k->value;
        std::vector<int64_t> smaller;
        for (int64_t x : {int64_t{0}, int64_t{1}, v / 2, v > 0 ? v - 1 : v + 1}) {
          const bool shrinks = (x >= 0 ? x : -x) < (v >= 0 ? v : -v);
          if (shrinks && std::find(smaller.begin(), smaller.end(), x) == smaller.end()) {
            smaller.push_back(x);
          }
        }
        bool replaced = false;
        for (int64_t x : smaller) {
          auto nk = ir::MakeNode<ConstInt>(x, k->dtype);
          nk->set_span(k->span());
          if ((replaced = Try(Replace(best_, fi, k, nk)))) break;
        }
        if (!replaced) break;
        progress = true;
      }
    }
  }

  const Interesting& test_;
  const ReduceOptions& options_;
  ProgramPtr best_;
  std::string best_text_;
  std::unordered_set<std::string> seen_;
  size_t tests_ = 0;
};

}  // namespace

size_t CountLines(std::string_view text) {
  size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

ReduceResult Reduce(const ProgramPtr& program, const Interesting& interesting,
                    const ReduceOptions& options) {
  Reducer r(interesting, options);
  return r.Run(program);
}

}  // namespace cds::reduce
