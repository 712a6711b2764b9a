#pragma once

// Output mutators: each takes a correct materialized program and returns a copy
// that breaks exactly one verifier invariant (nullopt when the program has nothing
// to break that way). The registry is generic over programs so that generated and
// corpus programs can be run through it as well as the hand-built fixtures.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/function.h"
#include "ir/stmt.h"

namespace cds::verify::testing {

struct Mutator {
  std::string name;  // kebab-case, e.g. "view-window-buffer-copy"
  std::string code;  // the diagnostic the verifier must report, e.g. "CDS-V003"
  std::function<std::optional<ir::ProgramPtr>(const ir::ProgramPtr&)> apply;
};

const std::vector<Mutator>& AllMutators();
// The mutators whose apply() returns a program for `program`.
std::vector<const Mutator*> ApplicableMutators(const ir::ProgramPtr& program);

// Editing helpers, shared with the malformed-output mutators of tests/prop.
// A copy of `fn` with `body`.
ir::FunctionPtr WithBody(const ir::FunctionPtr& fn, ir::StmtPtr body);
// `scopes` (outermost first; copied) nested around `inner`, each body a one-statement SeqStmts.
ir::StmtPtr BuildChain(const std::vector<ir::CommDomainScopeStmtPtr>& scopes, ir::StmtPtr inner);

}  // namespace cds::verify::testing
