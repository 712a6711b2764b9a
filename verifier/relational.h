#pragma once

#include "ir/function.h"
#include "verifier/diagnostic.h"

namespace cds::verify {

// A host orchestrator with its scope chain unwrapped, back-references erased and
// synthesized allreduce signals taken out (see relational.cc). Exposed for tests
// and for tools that want to diff an input against an output by hand.
ir::FunctionPtr NormalizeHostOrchestrator(const ir::FunctionPtr& fn);

// CDS-V026..V028.
void CheckRelational(const ir::ProgramPtr& before, const ir::ProgramPtr& after,
                     DiagnosticSink& sink);

}  // namespace cds::verify
