#include "verifier/verifier.h"

#include <fmt/format.h>

#include "verifier/checks.h"
#include "verifier/host_analysis.h"
#include "verifier/orchestrators.h"
#include "verifier/relational.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

// Whether the self-check adds the unmaterialized-input note: on a program given to
// the verifier by hand, not on a pass output inside a pipeline (where the pass did
// run, and a missing scope is the pass's fault).
enum class Explain { kUnmaterializedInput, kNothing };

// What decides whether the program looks like one the pass has not run on.
struct Materialization {
  size_t allocs = 0;
  bool any_scope = false;
  bool any_window_buffer = false;
  std::string first_host;
  Span first_alloc;

  void Add(const HostAnalysis& a) {
    if (!a.allocs.empty() && allocs == 0) {
      first_host = a.fn->name;
      first_alloc = a.allocs.front().span;
    }
    allocs += a.allocs.size();
    any_scope |= !a.scopes.empty();
    for (const AllocInfo& alloc : a.allocs) any_window_buffer |= alloc.canonical != nullptr;
  }

  void Explain(DiagnosticSink& sink) const {
    if (allocs == 0 || any_scope || any_window_buffer) return;
    sink.Report(CheckId::kInputNotMaterialized,
                fmt::format("the program looks unmaterialized: '{}' has {} alloc(s) but no "
                            "function holds a comm-domain scope or a WindowBuffer; the verifier "
                            "judges the output of the pass pipeline, so run it first (cds-opt "
                            "--default-pipeline) and verify its output",
                            first_host, allocs),
                first_alloc, Severity::kNote);
  }
};

void SelfCheck(const ProgramPtr& program, const VerifyOptions& options, Explain explain,
               DiagnosticSink& sink) {
  if (!program) {
    sink.Report(CheckId::kMalformedIR, "the program is null", Span{});
    return;
  }
  Materialization materialization;
  for (const auto& fn : program->functions) {
    if (!fn) {
      sink.Report(CheckId::kMalformedIR,
                  fmt::format("program '{}' holds a null function", program->name),
                  program->span());
      continue;
    }
    if (IsHostOrchestrator(*fn)) {
      HostAnalysis a = AnalyzeHostOrchestrator(*program, *fn, sink);
      CheckWindowBufferSharing(a, sink, options.contract);
      CheckScopeStructure(a, sink);
      CheckCoverage(a, sink);
      CheckTypeSymmetry(a, sink, options.contract);
      CheckAllReduceSignals(a, sink);
      materialization.Add(a);
    } else {
      CheckParamTypes(*fn, sink);
    }
  }
  if (explain == Explain::kUnmaterializedInput) materialization.Explain(sink);
}

void SignalCheck(const ProgramPtr& program, DiagnosticSink& sink) {
  if (!program) return;
  for (const auto& fn : program->functions) {
    if (!fn || !IsHostOrchestrator(*fn)) continue;
    // The walk also reports unresolvable dispatch devices; after signal synthesis
    // those are still the later pass's to reject, so keep only the signal checks.
    DiagnosticSink scratch;
    HostAnalysis a = AnalyzeHostOrchestrator(*program, *fn, scratch);
    CheckAllReduceSignals(a, sink);
  }
}

// CDS-V026..V028 and V031: the output against its input.
void Relational(const ProgramPtr& before, const ProgramPtr& after, DiagnosticSink& sink) {
  CheckRelational(before, after, sink);
  if (before && after) CheckSignalNumbering(*before, *after, sink);
}

bool IsPass(std::string_view name, std::string_view kebab, std::string_view camel) {
  return name == kebab || name == camel;
}

}  // namespace

std::vector<Diagnostic> VerifyProgram(const ProgramPtr& after, const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  SelfCheck(after, options, Explain::kUnmaterializedInput, sink);
  if (options.round_trip) CheckRoundTrip(after, sink);
  return sink.Take();
}

std::vector<Diagnostic> VerifyRelational(const ProgramPtr& before, const ProgramPtr& after,
                                         const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  Relational(before, after, sink);
  return sink.Take();
}

std::vector<Diagnostic> VerifyAll(const ProgramPtr& before, const ProgramPtr& after,
                                  const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  SelfCheck(after, options, Explain::kUnmaterializedInput, sink);
  if (options.round_trip) CheckRoundTrip(after, sink);
  Relational(before, after, sink);
  return sink.Take();
}

std::vector<Diagnostic> VerifyAfterPass(std::string_view pass_name, const ProgramPtr& before,
                                        const ProgramPtr& after, const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  if (IsPass(pass_name, "materialize-comm-domain-scopes", "MaterializeCommDomainScopes")) {
    SelfCheck(after, options, Explain::kNothing, sink);
    Relational(before, after, sink);
  } else if (IsPass(pass_name, "synthesize-allreduce-signals", "SynthesizeAllReduceSignals")) {
    SignalCheck(after, sink);
    if (before && after) CheckSignalNumbering(*before, *after, sink);
  }
  return sink.Take();
}

std::vector<Diagnostic> VerifyRoundTrip(const ProgramPtr& program, const VerifyOptions& options) {
  DiagnosticSink sink(options.max_diagnostics);
  CheckRoundTrip(program, sink);
  return sink.Take();
}

}  // namespace cds::verify
