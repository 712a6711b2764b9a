#pragma once

// The independent verifier of MaterializeCommDomainScopes (DESIGN §5). It depends
// on ir/ only and never on pass code: every expectation is re-derived from the
// output (and, in relational mode, the input). See docs/verifier.md.

#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"
#include "verifier/diagnostic.h"

namespace cds::verify {

struct VerifyOptions {
  // ParseProgram(PrintProgram(p)) must be structurally equal to p with an equal
  // hash (CDS-V024, V025).
  bool round_trip = true;
  // Stop collecting after this many diagnostics (0 = no limit).
  size_t max_diagnostics = 0;
};

// Self-check of a materialized program: every check except the relational ones.
std::vector<Diagnostic> VerifyProgram(const ir::ProgramPtr& after,
                                      const VerifyOptions& options = {});

// Relational checks only (CDS-V026..V028): `before` is the pipeline input (before
// SynthesizeAllReduceSignals, or the input of MaterializeCommDomainScopes), `after`
// the output. Call VerifyProgram(after) as well for the full verdict, or use
// VerifyAll.
std::vector<Diagnostic> VerifyRelational(const ir::ProgramPtr& before, const ir::ProgramPtr& after,
                                         const VerifyOptions& options = {});

// VerifyProgram(after) followed by VerifyRelational(before, after).
std::vector<Diagnostic> VerifyAll(const ir::ProgramPtr& before, const ir::ProgramPtr& after,
                                  const VerifyOptions& options = {});

// The pipeline seam: what makes sense after the named pass ran on `before` giving
// `after`.
//   materialize-comm-domain-scopes (or MaterializeCommDomainScopes): VerifyAll.
//   synthesize-allreduce-signals (or SynthesizeAllReduceSignals): every host
//     allreduce has two args whose second is a window view, plus the round trip.
//   any other pass: the round trip.
std::vector<Diagnostic> VerifyAfterPass(std::string_view pass_name, const ir::ProgramPtr& before,
                                        const ir::ProgramPtr& after,
                                        const VerifyOptions& options = {});

// Always true now that the printer and parser link; kept so callers written
// against the earlier weak-linked version still compile.
bool RoundTripAvailable();

}  // namespace cds::verify
