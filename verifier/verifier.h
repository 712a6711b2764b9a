#pragma once

// The independent verifier of MaterializeCommDomainScopes. It depends on ir/ only
// and never on pass code: every expectation is re-derived from the output (and,
// in relational mode, the input). See docs/verifier.md.

#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"
#include "verifier/contract.h"
#include "verifier/diagnostic.h"

namespace cds::verify {

struct VerifyOptions {
  // VerifyProgram and VerifyAll also run the print/parse round trip:
  // ParseProgram(PrintProgram(p)) must be structurally equal to p with an equal
  // hash (CDS-V024, V025).
  bool round_trip = true;
  // What the program promises (contract.h); strict unless judging PyPTO's output.
  Contract contract = Contract::kStrict;
  // Stop collecting after this many diagnostics (0 = no limit).
  size_t max_diagnostics = 0;
};

// Self-check of a materialized program: every check except the relational ones.
// On a program that has allocs but no scope and no WindowBuffer anywhere, a note
// (CDS-V030) says that it looks like a program the pass has not run on.
std::vector<Diagnostic> VerifyProgram(const ir::ProgramPtr& after,
                                      const VerifyOptions& options = {});

// Relational checks only (CDS-V026..V028, V031): `before` is the pipeline input (before
// SynthesizeAllReduceSignals, or the input of MaterializeCommDomainScopes), `after`
// the output. Call VerifyProgram(after) as well for the full verdict, or use
// VerifyAll.
std::vector<Diagnostic> VerifyRelational(const ir::ProgramPtr& before, const ir::ProgramPtr& after,
                                         const VerifyOptions& options = {});

// VerifyProgram(after) followed by VerifyRelational(before, after).
std::vector<Diagnostic> VerifyAll(const ir::ProgramPtr& before, const ir::ProgramPtr& after,
                                  const VerifyOptions& options = {});

// The invariant checks that make sense after the named pass ran on `before`
// giving `after`, for the verify-each instrument. Never the round trip
// (options.round_trip is ignored): a pipeline runs VerifyRoundTrip once, on the
// output of its last pass.
//   materialize-comm-domain-scopes (or MaterializeCommDomainScopes): the self-check
//     and the relational checks;
//   synthesize-allreduce-signals (or SynthesizeAllReduceSignals): every host
//     allreduce has two args whose second is a window view;
//   any other pass: nothing.
std::vector<Diagnostic> VerifyAfterPass(std::string_view pass_name, const ir::ProgramPtr& before,
                                        const ir::ProgramPtr& after,
                                        const VerifyOptions& options = {});

// The print/parse round trip alone (CDS-V024, V025).
std::vector<Diagnostic> VerifyRoundTrip(const ir::ProgramPtr& program,
                                        const VerifyOptions& options = {});

}  // namespace cds::verify
