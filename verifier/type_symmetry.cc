// AssignTypeSymmetry: the LHS Var of an assignment whose RHS is a Call or a Var
// has exactly the RHS's type. The pass re-mints a view's defining Call so both
// sides carry the back-reference; forgetting it is the classic bug here.

#include <fmt/format.h>

#include "ir/op_registry.h"
#include "ir/structural_equal.h"
#include "verifier/checks.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

// What PyPTO's contract allows right after its pass: an op Call (a window, a
// collective) whose type lacks the back-reference its Var carries and agrees with
// the Var's type otherwise. PyPTO's mutators retype Vars but keep every Call's type
// as parsed (its own opt-in AssignTypeSymmetry check reports the same); a
// collective's result gets its WindowBuffer only in LowerHostTensorCollectives.
bool IsUnretypedOpCall(const AssignStmt& s) {
  if (s.value->kind() != NodeKind::kCall) return false;
  const auto& call = static_cast<const Call&>(*s.value);
  if (!call.op || call.op->kind() != NodeKind::kOp) return false;
  if (!WindowBufferOf(s.var->type) || WindowBufferOf(s.value->type)) return false;
  EqualOptions options;
  options.ignore_window_buffers = true;
  return StructuralEqual(s.var->type, s.value->type, options);
}

}  // namespace

void CheckTypeSymmetry(const HostAnalysis& a, DiagnosticSink& sink, Contract contract) {
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
    const Severity severity = contract == Contract::kPypto && IsUnretypedOpCall(*s)
                                  ? Severity::kWarning
                                  : Severity::kError;
    sink.Report(CheckId::kAssignTypeAsymmetry,
                fmt::format("assignment to '{}' in '{}': LHS type {} differs from RHS type {}{}",
                            s->var->name_hint, a.fn->name, TypeText(lhs), TypeText(rhs), why),
                s->span(), severity);
  }
}

}  // namespace cds::verify
