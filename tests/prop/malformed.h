#pragma once

// Malformed and reshaped variants of generated programs for the robustness
// properties (tests/prop/robustness_prop_test.cc): each mutator breaks one thing
// the verifier must report (with its code), each reshaping keeps the meaning of a
// pipeline input. Written against the IR only; nothing here calls pass or
// verifier code.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/function.h"
#include "ir/stmt.h"

namespace cds::prop {

// Rewrites, in every host orchestrator, the first statement (pre-order, through
// every statement body) for which `edit` returns non-null. nullopt if none did.
std::optional<ir::ProgramPtr> EditFirstHostStmt(
    const ir::ProgramPtr& program, const std::function<ir::StmtPtr(const ir::StmtPtr&)>& edit);

// Replaces function `fn` of `program` (pointer identity) by `replacement`.
ir::ProgramPtr ReplaceFunction(const ir::ProgramPtr& program, const ir::FunctionPtr& fn,
                               ir::FunctionPtr replacement);

struct MalformedMutator {
  std::string name;
  std::string code;  // the verifier must report this code for the mutant
  // Whether the round trip must stay off (a mutant the printer cannot express).
  bool structural = true;
  std::function<std::optional<ir::ProgramPtr>(const ir::ProgramPtr&)> apply;
};

// Mutators of materialized outputs that the tests/verifier registry does not
// have: malformed scope chains, null nodes, mismatched non-view types, duplicate
// scope devices, non-window allreduce signals, slots of no alloc, and program-level
// (relational) changes.
const std::vector<MalformedMutator>& MalformedMutators();

// Meaning-preserving reshapes of a pipeline input: runs of statements wrapped in
// nested SeqStmts and an attribute on every signal-less allreduce (the synthesis pass must carry it
// over).
ir::ProgramPtr ReshapeInput(const ir::ProgramPtr& program, uint64_t seed);

// Removes the CommDomainScopeStmt chain of every host orchestrator (the inverse of
// step 7 of the pass, back-references left in place).
ir::ProgramPtr StripScopes(const ir::ProgramPtr& program);

}  // namespace cds::prop
