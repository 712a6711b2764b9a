#include "tests/gen/wellformed.h"

#include <set>

#include <fmt/format.h>

#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/structural_equal.h"

namespace cds::fuzz::testing {

namespace {

using namespace cds::ir;

class Checker {
 public:
  std::vector<std::string> problems;

  void Function(const ir::Function& f) {
    fn_ = f.name;
    scopes_.assign(1, {});
    for (const auto& p : f.params) Define(p);
    Stmt(f.body);
  }

 private:
  void Define(const VarPtr& v) { scopes_.back().insert(v.get()); }
  bool Defined(const Node* v) const {
    for (const auto& s : scopes_) {
      if (s.count(v)) return true;
    }
    return false;
  }

  void Expr(const ExprPtr& e) {
    if (!e) return;
    switch (e->kind()) {
      case NodeKind::kVar:
      case NodeKind::kIterArg:
        if (!Defined(e.get())) {
          problems.push_back(fmt::format("{}: '{}' used outside its definition's scope", fn_,
                                         static_cast<const Var&>(*e).name_hint));
        }
        break;
      case NodeKind::kBinaryExpr: {
        const auto& b = static_cast<const BinaryExpr&>(*e);
        Expr(b.lhs);
        Expr(b.rhs);
        break;
      }
      case NodeKind::kUnaryExpr: Expr(static_cast<const UnaryExpr&>(*e).operand); break;
      case NodeKind::kSubscript: {
        const auto& x = static_cast<const Subscript&>(*e);
        Expr(x.value);
        for (const auto& i : x.indices) Expr(i);
        break;
      }
      case NodeKind::kSlice: {
        const auto& x = static_cast<const Slice&>(*e);
        Expr(x.start);
        Expr(x.stop);
        Expr(x.step);
        break;
      }
      case NodeKind::kMakeTuple:
        for (const auto& x : static_cast<const MakeTuple&>(*e).elements) Expr(x);
        break;
      case NodeKind::kCall: {
        const auto& c = static_cast<const Call&>(*e);
        for (const auto& a : c.args) Expr(a);
        for (const auto& [k, v] : c.attrs) Expr(v);
        for (const auto& [k, v] : c.kwargs) {
          if (const auto* x = std::get_if<ExprPtr>(&v)) Expr(*x);
        }
        if (!c.OpName().empty()) {
          try {
            TypePtr t = DeduceCallType(c);
            if (t && !StructuralEqual(t, c.type)) {
              problems.push_back(fmt::format("{}: {} recorded type differs from its deduction", fn_, c.OpName()));
            }
          } catch (const ValueError& err) {
            problems.push_back(fmt::format("{}: {} does not type-check: {}", fn_, c.OpName(), err.what()));
          }
        }
        break;
      }
      default: break;
    }
  }

  void Block(const StmtPtr& s) {
    scopes_.emplace_back();
    Stmt(s);
    scopes_.pop_back();
  }

  void Stmt(const StmtPtr& s) {
    if (!s) return;
    switch (s->kind()) {
      case NodeKind::kSeqStmts:
        for (const auto& x : static_cast<const SeqStmts&>(*s).stmts) Stmt(x);
        break;
      case NodeKind::kAssignStmt: {
        const auto& a = static_cast<const AssignStmt&>(*s);
        Expr(a.value);
        Define(a.var);
        break;
      }
      case NodeKind::kEvalStmt: Expr(static_cast<const EvalStmt&>(*s).expr); break;
      case NodeKind::kUnpackAssignStmt: {
        const auto& u = static_cast<const UnpackAssignStmt&>(*s);
        Expr(u.value);
        for (const auto& v : u.vars) Define(v);
        break;
      }
      case NodeKind::kSubscriptAssignStmt: {
        const auto& a = static_cast<const SubscriptAssignStmt&>(*s);
        Expr(a.target);
        Expr(a.value);
        break;
      }
      case NodeKind::kYieldStmt:
        for (const auto& v : static_cast<const YieldStmt&>(*s).values) Expr(v);
        break;
      case NodeKind::kReturnStmt:
        for (const auto& v : static_cast<const ReturnStmt&>(*s).values) Expr(v);
        break;
      case NodeKind::kForStmt: {
        const auto& f = static_cast<const ForStmt&>(*s);
        Expr(f.start);
        Expr(f.stop);
        Expr(f.step);
        for (const auto& ia : f.iter_args) Expr(ia->init_value);
        scopes_.emplace_back();
        Define(f.loop_var);
        for (const auto& ia : f.iter_args) Define(ia);
        Stmt(f.body);
        scopes_.pop_back();
        // A loop with init_values binds the yield's targets after the loop.
        for (const auto& r : f.return_vars) Define(r);
        break;
      }
      case NodeKind::kWhileStmt: {
        const auto& w = static_cast<const WhileStmt&>(*s);
        Expr(w.cond);
        Block(w.body);
        break;
      }
      case NodeKind::kIfStmt: {
        const auto& i = static_cast<const IfStmt&>(*s);
        Expr(i.cond);
        Block(i.then_body);
        Block(i.else_body);
        break;
      }
      case NodeKind::kScopeStmt: {
        // A generic `with pl.manual_scope():` (feature whole_program): a block with no definitions.
        const auto& sc = static_cast<const ScopeStmt&>(*s);
        for (const auto& a : sc.args) Expr(a);
        for (const auto& [k, v] : sc.kwargs) {
          if (const auto* x = std::get_if<ExprPtr>(&v)) Expr(*x);
        }
        Block(sc.body);
        break;
      }
      default: problems.push_back(fmt::format("{}: unexpected statement {}", fn_, NodeKindName(s->kind())));
    }
  }

  std::string fn_;
  std::vector<std::set<const Node*>> scopes_;
};

}  // namespace

std::vector<std::string> WellFormedProblems(const ir::ProgramPtr& program) {
  Checker c;
  for (const auto& f : program->functions) c.Function(*f);
  return c.problems;
}

}  // namespace cds::fuzz::testing
