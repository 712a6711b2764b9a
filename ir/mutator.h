#pragma once

// A rewriting walk derived from the field tables. Each Mutate<Kind> hook returns
// the (possibly new) node; the default rebuilds a node only when one of its
// fields changed, so untouched subtrees come back pointer-identical.
// Definitions go through MutateDef (default: kept). WindowBuffers are memoised:
// one old WindowBuffer maps to one new one, so sharing between views survives.

#include <unordered_map>

#include "ir/dispatch.h"
#include "ir/field_values.h"

namespace cds::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  NodePtr MutateNode(const NodePtr& n);
  ExprPtr MutateExpr(const ExprPtr& e);
  StmtPtr MutateStmt(const StmtPtr& s);
  TypePtr MutateType(const TypePtr& t);
  // Typed entry point for any node: MutateAs(program), MutateAs(function).
  template <typename T>
  NodeRef<const T> MutateAs(const NodeRef<const T>& n) {
    return PtrCast<const T>(MutateNode(n));
  }

  virtual VarPtr MutateDef(const VarPtr& v) { return v; }

#define CDS_MUTATE_DECL(N) virtual NodePtr Mutate##N(const NodeRef<const N>& n);
  CDS_ALL_NODES(CDS_MUTATE_DECL)
#undef CDS_MUTATE_DECL

 protected:
  template <typename T>
  NodeRef<const T> MutateChildren(const NodeRef<const T>& node) {
    T copy(*node);
    bool changed = false;
    ForEachField(copy, [&](std::string_view, auto& value, FieldRole role) {
      if (role == FieldRole::kIgnored) return;
      detail::ForEachNodeRef(value, [&](auto& ref) { changed |= Rewrite(ref, role); });
    });
    if (!changed) return node;
    return MakeNode<const T>(std::move(copy));
  }

 private:
  // Rewrites one reference of a field in place; returns whether it changed.
  template <typename E>
  bool Rewrite(NodeRef<const E>& v, FieldRole role) {
    if (!v) return false;
    NodePtr nv;
    if constexpr (std::is_base_of_v<Var, E>) {
      nv = role == FieldRole::kDef ? NodePtr(MutateDef(v)) : MutateNode(v);
    } else {
      nv = MutateNode(v);
    }
    if (nv == v) return false;
    CDS_CHECK(nv != nullptr, "mutator returned null for a present field");
    if constexpr (std::is_same_v<E, Var>) {
      CDS_CHECK(IsVarLikeKind(nv->kind()), "mutator replaced a Var field with a non-Var");
    } else if constexpr (std::is_same_v<E, Expr>) {
      CDS_CHECK(IsExprKind(nv->kind()), "mutator replaced an expression with a non-expression");
    } else if constexpr (std::is_same_v<E, Stmt>) {
      CDS_CHECK(IsStmtKind(nv->kind()), "mutator replaced a statement with a non-statement");
    } else if constexpr (std::is_same_v<E, Type>) {
      CDS_CHECK(IsTypeKind(nv->kind()), "mutator replaced a type with a non-type");
    } else if constexpr (!std::is_same_v<E, Node>) {
      CDS_CHECK(nv->kind() == v->kind(), "mutator changed the kind of a typed field");
    }
    v = PtrCast<const E>(nv);
    return true;
  }

  std::unordered_map<const WindowBuffer*, NodePtr> window_memo_;
};

// Replaces uses of the mapped Vars (never their definitions). Returns the input
// pointer when nothing was replaced.
using VarMap = std::unordered_map<const Var*, ExprPtr>;
StmtPtr Substitute(const StmtPtr& stmt, const VarMap& var_map);
ExprPtr Substitute(const ExprPtr& expr, const VarMap& var_map);
TypePtr Substitute(const TypePtr& type, const VarMap& var_map);

}  // namespace cds::ir
