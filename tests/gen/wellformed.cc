#include "tests/gen/wellformed.h"

#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/structural_equal.h"
#include "ir/visitor.h"

namespace cds::fuzz::testing {

namespace {

using namespace cds::ir;

// Scoping follows the field tables: a definition becomes visible after the
// statement that makes it, except that definitions met before a statement list
// (a loop variable, loop-carried values, an `as` target) belong to that list and
// are visible only inside it. Every statement list opens a block.
class Checker final : public IRVisitor {
 public:
  std::vector<std::string> problems;

  // The module's `pl.dynamic` dims are visible in every function.
  std::vector<const Var*> module_vars;

  void Function(const ir::Function& f) {
    fn_ = f.name;
    blocks_.assign(1, {});
    pending_.clear();
    for (const Var* v : module_vars) blocks_.back().insert(v);
    for (const auto& p : f.params) blocks_.back().insert(p.get());
    VisitNode(f.body);
  }

  void VisitDef(const VarPtr& v) override {
    IRVisitor::VisitDef(v);  // what the definition reads (an IterArg's init) is read here
    pending_.push_back(v.get());
  }

  void VisitVar(const NodeRef<const Var>& v) override { Use(*v); }
  void VisitIterArg(const NodeRef<const IterArg>& v) override { Use(*v); }

  void VisitSeqStmts(const NodeRef<const SeqStmts>& n) override {
    blocks_.emplace_back();
    DefinePending();
    for (const StmtPtr& s : n->stmts) {
      VisitNode(s);
      DefinePending();
    }
    blocks_.pop_back();
  }

  void VisitCall(const NodeRef<const Call>& c) override {
    VisitChildren(*c);
    if (c->OpName().empty()) return;
    try {
      TypePtr t = DeduceCallType(*c);
      if (t && !StructuralEqual(t, c->type)) {
        problems.push_back(
            fmt::format("{}: {} recorded type differs from its deduction", fn_, c->OpName()));
      }
    } catch (const ValueError& err) {
      problems.push_back(
          fmt::format("{}: {} does not type-check: {}", fn_, c->OpName(), err.what()));
    }
  }

 private:
  void Use(const Var& v) {
    for (const auto& block : blocks_) {
      if (block.contains(&v)) return;
    }
    problems.push_back(
        fmt::format("{}: '{}' used outside its definition's scope", fn_, v.name_hint));
  }

  void DefinePending() {
    for (const Node* v : pending_) blocks_.back().insert(v);
    pending_.clear();
  }

  std::string fn_;
  std::vector<absl::flat_hash_set<const Node*>> blocks_;
  std::vector<const Node*> pending_;  // defined by the statement being visited
};

}  // namespace

std::vector<std::string> WellFormedProblems(const ir::ProgramPtr& program) {
  Checker c;
  for (const auto& d : program->dynamic_dims) c.module_vars.push_back(d.get());
  for (const auto& f : program->functions) c.Function(*f);
  return c.problems;
}

}  // namespace cds::fuzz::testing
