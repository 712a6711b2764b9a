#include "verifier/verifier.h"

#include <fmt/format.h>

#include "verifier/checks.h"
#include "verifier/host_analysis.h"
#include "verifier/relational.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

void SelfCheck(const ProgramPtr& program, const VerifyOptions& options, DiagnosticSink& sink) {
  if (!program) {
    sink.Report(CheckId::kMalformedIR, "the program is null", Span{});
    return;
  }
  for (const auto& fn : program->functions) {
    if (!fn) {
      sink.Report(CheckId::kMalformedIR,
                  fmt::format("program '{}' holds a null function", program->name), program->span());
      continue;
    }
    if (fn->IsHostOrchestrator()) {
      HostAnalysis a = AnalyzeHostOrchestrator(*program, *fn, sink);
      CheckWindowBufferSharing(a, sink);
      CheckScopeStructure(a, sink);
      CheckCoverage(a, sink);
      CheckTypeSymmetry(a, sink);
      CheckAllReduceSignals(a, sink);
    } else {
      CheckParamTypes(*fn, sink);
    }
  }
  if (options.round_trip) CheckRoundTrip(program, sink);
}

void SignalCheck(const ProgramPtr& program, DiagnosticSink& sink) {
  if (!program) return;
  for (const auto& fn : program->functions) {
    if (!fn || !fn->IsHostOrchestrator()) continue;
    // The walk also reports unresolvable dispatch devices; after signal synthesis
    // those are still the later pass's to reject, so keep only the signal checks.
    DiagnosticSink scratch;
    HostAnalysis a = AnalyzeHostOrchestrator(*program, *fn, scratch);
    CheckAllReduceSignals(a, sink);
  }
}

bool IsPass(std::string_view name, std::string_view kebab, std::string_view camel) {
  return name == kebab || name == camel;
}

}  // namespace

std::vector<Diagnostic> VerifyProgram(const ProgramPtr& after, const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  SelfCheck(after, options, sink);
  return sink.Take();
}

std::vector<Diagnostic> VerifyRelational(const ProgramPtr& before, const ProgramPtr& after,
                                         const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  CheckRelational(before, after, sink);
  return sink.Take();
}

std::vector<Diagnostic> VerifyAll(const ProgramPtr& before, const ProgramPtr& after,
                                  const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  SelfCheck(after, options, sink);
  CheckRelational(before, after, sink);
  return sink.Take();
}

std::vector<Diagnostic> VerifyAfterPass(std::string_view pass_name, const ProgramPtr& before,
                                        const ProgramPtr& after, const VerifyOptions& options) {
  if (IsPass(pass_name, "materialize-comm-domain-scopes", "MaterializeCommDomainScopes")) {
    return VerifyAll(before, after, options);
  }
  DiagnosticSink sink(options.max_diagnostics);
  if (IsPass(pass_name, "synthesize-allreduce-signals", "SynthesizeAllReduceSignals"))
    SignalCheck(after, sink);
  if (options.round_trip) CheckRoundTrip(after, sink);
  return sink.Take();
}

}  // namespace cds::verify
