#include "ir/mutator.h"

namespace cds::ir {

NodePtr IRMutator::MutateNode(const NodePtr& n) {
  if (!n) return n;
  switch (n->kind()) {
#define CDS_MUTATE_CASE(N) \
  case NodeKind::k##N:     \
    return Mutate##N(PtrCast<const N>(n));
    CDS_ALL_NODES(CDS_MUTATE_CASE)
#undef CDS_MUTATE_CASE
  }
  return n;
}

ExprPtr IRMutator::MutateExpr(const ExprPtr& e) { return PtrCast<const Expr>(MutateNode(e)); }
StmtPtr IRMutator::MutateStmt(const StmtPtr& s) { return PtrCast<const Stmt>(MutateNode(s)); }
TypePtr IRMutator::MutateType(const TypePtr& t) { return PtrCast<const Type>(MutateNode(t)); }

// Uses of Vars are leaves: identity is the point, so they are never rebuilt.
NodePtr IRMutator::MutateVar(const NodeRef<const Var>& n) { return n; }
NodePtr IRMutator::MutateIterArg(const NodeRef<const IterArg>& n) { return n; }
NodePtr IRMutator::MutateOp(const NodeRef<const Op>& n) { return n; }

NodePtr IRMutator::MutateWindowBuffer(const NodeRef<const WindowBuffer>& n) {
  auto it = window_memo_.find(n.get());
  if (it != window_memo_.end()) return it->second;
  NodePtr result = MutateChildren(n);
  if (result != n) {
    // The name hint follows the (possibly new) base.
    auto wb = PtrCast<const WindowBuffer>(result);
    if (wb->base && wb->name_hint != wb->base->name_hint) {
      auto fixed = MakeNode<WindowBuffer>(*wb);
      fixed->name_hint = wb->base->name_hint;
      result = fixed;
    }
  }
  window_memo_.emplace(n.get(), result);
  return result;
}

#define CDS_MUTATE_DEFAULT(N) \
  NodePtr IRMutator::Mutate##N(const NodeRef<const N>& n) { return MutateChildren(n); }
CDS_TYPE_NODES(CDS_MUTATE_DEFAULT)
CDS_STMT_NODES(CDS_MUTATE_DEFAULT)
CDS_VALUE_NODES(CDS_MUTATE_DEFAULT)
CDS_MUTATE_DEFAULT(Function)
CDS_MUTATE_DEFAULT(Program)
#undef CDS_MUTATE_DEFAULT

namespace {
class Substituter final : public IRMutator {
 public:
  explicit Substituter(const VarMap& m) : map_(m) {}
  NodePtr MutateVar(const NodeRef<const Var>& n) override { return Lookup(n); }
  NodePtr MutateIterArg(const NodeRef<const IterArg>& n) override { return Lookup(n); }

 private:
  NodePtr Lookup(const VarPtr& v) {
    auto it = map_.find(v.get());
    return it == map_.end() ? NodePtr(v) : NodePtr(it->second);
  }
  const VarMap& map_;
};
}  // namespace

template <typename T>
NodeRef<const T> SubstituteIn(const NodeRef<const T>& node, const VarMap& var_map) {
  if (var_map.empty()) return node;
  return Substituter(var_map).MutateAs(node);
}

StmtPtr Substitute(const StmtPtr& stmt, const VarMap& m) { return SubstituteIn(stmt, m); }
ExprPtr Substitute(const ExprPtr& expr, const VarMap& m) { return SubstituteIn(expr, m); }
TypePtr Substitute(const TypePtr& type, const VarMap& m) { return SubstituteIn(type, m); }

}  // namespace cds::ir
