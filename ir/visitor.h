#pragma once

// A read-only walk over the IR derived from the field tables. Override the
// Visit<Kind> hook of the nodes you care about and call VisitChildren(*n) to keep
// walking. Definitions (fields with role kDef: assign LHS, params, loop vars,
// iter args, `as` targets) go through VisitDef; Var uses through VisitVar, which
// does not walk the Var's type (types are walked once, at the definition).

#include "ir/dispatch.h"
#include "ir/field_values.h"

namespace cds::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  void VisitNode(const NodePtr& n);
  virtual void VisitDef(const VarPtr& v);

#define CDS_VISIT_DECL(N) virtual void Visit##N(const NodeRef<const N>& n);
  CDS_ALL_NODES(CDS_VISIT_DECL)
#undef CDS_VISIT_DECL

 protected:
  template <typename T>
  void VisitChildren(const T& node) {
    ForEachField(node, [&](std::string_view, const auto& value, FieldRole role) {
      if (role != FieldRole::kIgnored) Value(value, role);
    });
  }

 private:
  template <typename T>
  void Value(const T& v, FieldRole role) {
    if constexpr (detail::IsNodePtr<T>::value) {
      if (!v) return;
      if (role == FieldRole::kDef) {
        if constexpr (std::is_base_of_v<Var, typename T::element_type>) VisitDef(v);
      } else {
        VisitNode(v);
      }
    } else if constexpr (detail::IsVector<T>::value) {
      for (const auto& e : v) Value(e, role);
    } else if constexpr (detail::IsOptional<T>::value) {
      if (v) Value(*v, role);
    } else if constexpr (detail::IsPair<T>::value) {
      Value(v.second, role);
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      if (const auto* e = std::get_if<ExprPtr>(&v)) Value(*e, role);
    }
  }
};

}  // namespace cds::ir
