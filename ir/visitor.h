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
      if (role == FieldRole::kIgnored) return;
      detail::ForEachNodeRef(value, [&](const auto& ref) {
        using N = typename std::decay_t<decltype(ref)>::element_type;
        if (!ref) return;
        if (role != FieldRole::kDef) {
          VisitNode(ref);
        } else if constexpr (std::is_base_of_v<Var, N>) {
          VisitDef(ref);
        }
      });
    });
  }
};

}  // namespace cds::ir
