// Chip-orchestrator and InCore parameter types are never touched by the pass: the
// back-reference lives on the host side only (codegen hands chip code the comm
// context explicitly).

#include <fmt/format.h>

#include "verifier/checks.h"
#include "verifier/orchestrators.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

void CheckParamTypes(const Function& fn, DiagnosticSink& sink) {
  const bool chip = IsChipOrchestrator(fn);
  if (!chip && fn.func_type != FunctionType::kInCore) return;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const VarPtr& p = fn.params[i];
    if (!p) {
      sink.Report(CheckId::kMalformedIR, fmt::format("parameter {} of '{}' is null", i, fn.name),
                  fn.span());
      continue;
    }
    if (!ContainsWindowBuffer(p->type)) continue;
    sink.Report(
        CheckId::kParamHasWindowBuffer,
        fmt::format("parameter '{}' of {} function '{}' has type {}; chip-orchestrator and InCore "
                    "parameter types must not carry a window_buffer",
                    p->name_hint, chip ? "chip-orchestrator" : "InCore", fn.name,
                    TypeText(p->type)),
        p->span().IsKnown() ? p->span() : fn.span());
  }
}

}  // namespace cds::verify
