#include "ir/visitor.h"

namespace cds::ir {

void IRVisitor::VisitNode(const NodePtr& n) {
  if (!n) return;
  switch (n->kind()) {
#define CDS_VISIT_CASE(N)          \
  case NodeKind::k##N:             \
    Visit##N(PtrCast<const N>(n)); \
    return;
    CDS_ALL_NODES(CDS_VISIT_CASE)
#undef CDS_VISIT_CASE
  }
}

// A definition: walk the defined Var's own fields (its type, an IterArg's init).
void IRVisitor::VisitDef(const VarPtr& v) {
  if (v->kind() == NodeKind::kIterArg) {
    VisitChildren(static_cast<const IterArg&>(*v));
  } else {
    VisitChildren(*v);
  }
}

// Uses of plain Vars stop here; WindowBuffers (which appear in types) are walked.
void IRVisitor::VisitVar(const NodeRef<const Var>&) {}
void IRVisitor::VisitIterArg(const NodeRef<const IterArg>&) {}

#define CDS_VISIT_DEFAULT(N) \
  void IRVisitor::Visit##N(const NodeRef<const N>& n) { VisitChildren(*n); }
CDS_TYPE_NODES(CDS_VISIT_DEFAULT)
CDS_STMT_NODES(CDS_VISIT_DEFAULT)
CDS_OTHER_NODES(CDS_VISIT_DEFAULT)
CDS_VALUE_NODES(CDS_VISIT_DEFAULT)
CDS_VISIT_DEFAULT(WindowBuffer)
#undef CDS_VISIT_DEFAULT

}  // namespace cds::ir
