#pragma once

// Helpers shared by the pipeline properties: running the pipeline the way the
// tools do, reading the materialized scopes back out of the IR (independently
// of the pass and of the verifier), a renaming copy for the equality laws, and
// failure messages that always carry the program text.

#include <string>
#include <vector>

#include "fuzz/gen/generate.h"
#include "ir/function.h"
#include "ir/stmt.h"
#include "ir/walk.h"
#include "verifier/diagnostic.h"

namespace cds::prop {

// f(const ir::StmtPtr&) for `s` and every statement below it, in pre-order.
template <typename F>
void ForEachStmtUnder(const ir::StmtPtr& s, F&& f) {
  if (!s) return;
  f(s);
  ir::ForEachSubStmt(*s, [&](const ir::StmtPtr& sub) { ForEachStmtUnder(sub, f); });
}

// SynthesizeAllReduceSignals + MaterializeCommDomainScopes through the driver.
// verify_each stays off: the properties call the verifier themselves so that a
// pass bug shows up as a failed property with its own message, not as an
// exception from the instrumentation.
ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program);

// One scope as found in the output IR.
struct ObservedScope {
  std::string name;
  ir::DeviceSet devices;
  std::vector<std::string> slots;      // logical alloc names (the alloc's name= kwarg)
  std::vector<std::string> slot_vars;  // the WindowBuffer bases' name hints
  bool operator==(const ObservedScope&) const = default;
};

struct ObservedFunction {
  std::string name;
  std::vector<ObservedScope> scopes;  // pre-order, i.e. outermost first
};

// Every host orchestrator of `program` (name order) with the CommDomainScopeStmts
// found anywhere in its body.
std::vector<ObservedFunction> ObserveScopes(const ir::ProgramPtr& program);

// The model's expectation in the same shape.
std::vector<ObservedFunction> ExpectedScopes(const fuzz::Expectation& expect);

std::string ToString(const std::vector<ObservedFunction>& fns);

// A copy in which every Var-like definition (and its uses, including
// WindowBuffer bases) is a new object whose name hint starts with `prefix`.
// Structural equality and hashing ignore name hints, so the copy must compare
// equal to the original.
ir::ProgramPtr RenamedCopy(const ir::ProgramPtr& program, const std::string& prefix);

// "<what>\n<diagnostics>\n--- program ---\n<text>" for RC_FAIL messages.
std::string FailureMessage(const std::string& what, const fuzz::GeneratedProgram& p,
                           const std::vector<verify::Diagnostic>& diags = {});

// The default pipeline's output for a valid generated program, or a failed
// property (the generator's own expectation problems, or a rejection).
ir::ProgramPtr PipelineOrFail(const fuzz::GeneratedProgram& p);

}  // namespace cds::prop
