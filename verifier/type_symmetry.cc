// AssignTypeSymmetry: the LHS Var of an assignment whose RHS is a Call or a Var
// has exactly the RHS's type. The pass re-mints a view's defining Call so both
// sides carry the back-reference; forgetting it is the classic bug here.

#include <fmt/format.h>

#include "verifier/checks.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

void CheckTypeSymmetry(const HostAnalysis& a, DiagnosticSink& sink) {
  // The walk already kept only the assignments whose types disagree.
  for (const AssignStmt* s : a.asymmetric_assigns) {
    const TypePtr& lhs = s->var->type;
    const TypePtr& rhs = s->value->type;
    const WindowBuffer* lw = WindowBufferOf(lhs);
    const WindowBuffer* rw = WindowBufferOf(rhs);
    std::string why;
    if (lw && rw && lw != rw) {
      why = " (different WindowBuffer objects)";
    } else if (lw && !rw) {
      why = " (the RHS lacks the back-reference)";
    } else if (!lw && rw) {
      why = " (the LHS lacks the back-reference)";
    }
    sink.Report(
        CheckId::kAssignTypeAsymmetry,
        fmt::format("assignment to '{}' in '{}': LHS type {} differs from RHS type {}{}",
                    s->var->name_hint, a.fn->name, DescribeType(lhs), DescribeType(rhs), why),
        s->span());
  }
}

}  // namespace cds::verify
