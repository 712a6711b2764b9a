#pragma once

// Entry points of the invariant families, one source file each (the file name is
// the family: window_buffer_sharing.cc holds the pointer-equality checks, ...).
// Order matters: sharing resolves slot owners that scope_structure and coverage use.

#include "ir/function.h"
#include "verifier/contract.h"
#include "verifier/diagnostic.h"
#include "verifier/host_analysis.h"

namespace cds::verify {

// window_buffer_sharing.cc: CDS-V001..V005.
void CheckWindowBufferSharing(HostAnalysis& a, DiagnosticSink& sink, Contract contract);
// scope_structure.cc: CDS-V008..V017.
void CheckScopeStructure(HostAnalysis& a, DiagnosticSink& sink);
// coverage.cc: CDS-V018..V020 (V021 comes from the walk).
void CheckCoverage(HostAnalysis& a, DiagnosticSink& sink);
// type_symmetry.cc: CDS-V006.
void CheckTypeSymmetry(const HostAnalysis& a, DiagnosticSink& sink, Contract contract);
// allreduce_signals.cc: CDS-V022, V023.
void CheckAllReduceSignals(const HostAnalysis& a, DiagnosticSink& sink);
// param_types.cc: CDS-V007, for chip orchestrators and InCore functions.
void CheckParamTypes(const ir::Function& fn, DiagnosticSink& sink);
// round_trip.cc: CDS-V024, V025.
void CheckRoundTrip(const ir::ProgramPtr& program, DiagnosticSink& sink);
// signal_numbering.cc: CDS-V031. Relational: the numbers come from the input's names.
void CheckSignalNumbering(const ir::Program& before, const ir::Program& after,
                          DiagnosticSink& sink);

}  // namespace cds::verify
