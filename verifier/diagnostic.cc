#include "verifier/diagnostic.h"

#include <fmt/format.h>

namespace cds::verify {

namespace {

std::vector<CheckInfo> BuildTable() {
  // Order must follow CheckId; GetCheckInfo relies on it (checked at first use).
  return {
      {CheckId::kViewMissingWindowBuffer, "CDS-V001", "view-missing-window-buffer",
       "window_buffer_sharing",
       "a Var that resolves to a window view (view, alias, in-place collective result) has no "
       "window_buffer"},
      {CheckId::kWindowBufferBaseMismatch, "CDS-V002", "window-buffer-base-mismatch",
       "window_buffer_sharing",
       "a WindowBuffer's base is not (pointer-equal to) the LHS Var of the alloc its views come "
       "from"},
      {CheckId::kWindowBufferNotShared, "CDS-V003", "window-buffer-not-shared",
       "window_buffer_sharing",
       "views of one alloc, or a view and its scope slot, hold different WindowBuffer objects"},
      {CheckId::kWindowBufferSizeMismatch, "CDS-V004", "window-buffer-size-mismatch",
       "window_buffer_sharing", "a WindowBuffer's size is not the byte size its alloc asks for"},
      {CheckId::kWindowBufferFlagSet, "CDS-V005", "window-buffer-flag-set", "window_buffer_sharing",
       "a WindowBuffer has load_from_host or store_to_host set (the pass always clears both)"},
      {CheckId::kAssignTypeAsymmetry, "CDS-V006", "assign-type-asymmetry", "type_symmetry",
       "an assignment's LHS Var type differs from its RHS Call/Var type (back-reference pointer "
       "included)"},
      {CheckId::kParamHasWindowBuffer, "CDS-V007", "param-has-window-buffer", "param_types",
       "a chip-orchestrator or InCore parameter type carries a window_buffer"},
      {CheckId::kWindowBufferNotInScope, "CDS-V008", "window-buffer-not-in-scope",
       "scope_structure", "an alloc's WindowBuffer is not a slot of any comm-domain scope"},
      {CheckId::kWindowBufferInManyScopes, "CDS-V009", "window-buffer-in-multiple-scopes",
       "scope_structure",
       "an alloc's WindowBuffer is a slot more than once (in two scopes or twice in one)"},
      {CheckId::kDuplicateSlotName, "CDS-V010", "duplicate-slot-name", "scope_structure",
       "two slots of one scope belong to allocs with the same name"},
      {CheckId::kEmptyScope, "CDS-V011", "empty-scope", "scope_structure",
       "a comm-domain scope has no slots"},
      {CheckId::kScopeChainMalformed, "CDS-V012", "scope-chain-malformed", "scope_structure",
       "the scopes do not form one chain SeqStmts[scope[SeqStmts[scope ...]]] wrapping the whole "
       "host body"},
      {CheckId::kScopeNameMismatch, "CDS-V013", "scope-name-mismatch", "scope_structure",
       "scope names are not comm_d0, comm_d1, ... in chain order"},
      {CheckId::kScopeOrderMismatch, "CDS-V014", "scope-order-mismatch", "scope_structure",
       "scopes are not ordered by the source order of their first alloc"},
      {CheckId::kSlotOrderMismatch, "CDS-V015", "slot-order-mismatch", "scope_structure",
       "a scope's slots are not in alloc source order"},
      {CheckId::kSlotWithoutAlloc, "CDS-V016", "slot-without-alloc", "scope_structure",
       "a slot's WindowBuffer belongs to no alloc of the function"},
      {CheckId::kScopeAttrsNotEmpty, "CDS-V017", "scope-attrs-not-empty", "scope_structure",
       "a comm-domain scope carries attrs (the pass creates them empty)"},
      {CheckId::kScopeDevicesMismatch, "CDS-V018", "scope-devices-mismatch", "coverage",
       "a scope's devices differ from the coverage re-derived for one of its allocs"},
      {CheckId::kDuplicateScopeDevices, "CDS-V019", "duplicate-scope-devices", "coverage",
       "two scopes of one function have equal devices"},
      {CheckId::kAllocWithoutCoverage, "CDS-V020", "alloc-without-coverage", "coverage",
       "an alloc gets no devices from any dispatch or collective (the pass must reject it)"},
      {CheckId::kDispatchDeviceUnresolvable, "CDS-V021", "dispatch-device-unresolvable", "coverage",
       "a dispatch that consumes a view has a device= the pass must reject"},
      {CheckId::kAllReduceMissingSignal, "CDS-V022", "allreduce-missing-signal",
       "allreduce_signals", "a host allreduce does not have exactly two arguments"},
      {CheckId::kAllReduceSignalNotWindow, "CDS-V023", "allreduce-signal-not-window",
       "allreduce_signals", "a host allreduce's second argument does not resolve to a window view"},
      {CheckId::kRoundTripParseError, "CDS-V024", "round-trip-parse-error", "round_trip",
       "the printed program does not parse back (or printing failed)"},
      {CheckId::kRoundTripMismatch, "CDS-V025", "round-trip-mismatch", "round_trip",
       "parse(print(P)) is not structurally equal to P, or its structural hash differs"},
      {CheckId::kProgramStructureChanged, "CDS-V026", "program-structure-changed", "relational",
       "the output's function set, program name or dynamic dims differ from the input's"},
      {CheckId::kFunctionChanged, "CDS-V027", "function-changed", "relational",
       "a function that is not a host orchestrator differs from its input"},
      {CheckId::kHostBodyChanged, "CDS-V028", "host-body-changed", "relational",
       "a host orchestrator differs from its input once scopes, back-references and synthesized "
       "signals are accounted for"},
      {CheckId::kMalformedIR, "CDS-V029", "malformed-ir", "verifier",
       "the output holds a null or ill-kinded node where the IR requires one"},
      {CheckId::kInputNotMaterialized, "CDS-V030", "input-not-materialized", "verifier",
       "a note: the program has allocs but no scope and no WindowBuffer, so it looks like a "
       "program the pass has not run on"},
      {CheckId::kSignalNumberMismatch, "CDS-V031", "signal-number-mismatch", "signal_numbering",
       "a synthesized allreduce signal or result name does not take the number the input's "
       "reserved names and the program order give"},
  };
}

}  // namespace

const std::vector<CheckInfo>& AllChecks() {
  static const std::vector<CheckInfo> table = [] {
    auto t = BuildTable();
    for (size_t i = 0; i < t.size(); ++i) {
      if (static_cast<size_t>(t[i].id) != i) std::abort();  // table out of order: a bug here
    }
    if (t.size() != static_cast<size_t>(CheckId::kCount)) std::abort();
    return t;
  }();
  return table;
}

const CheckInfo& GetCheckInfo(CheckId id) { return AllChecks()[static_cast<size_t>(id)]; }

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

Diagnostic MakeDiagnostic(CheckId id, std::string message, ir::Span span, Severity severity) {
  const CheckInfo& info = GetCheckInfo(id);
  return Diagnostic{std::string(info.code), std::string(info.name), std::move(message),
                    std::move(span), severity};
}

std::string FormatDiagnostic(const Diagnostic& d) {
  return fmt::format("{}: {}: [{} {}] {}", d.span.ToString(), SeverityName(d.severity), d.code,
                     d.name, d.message);
}

std::string FormatDiagnostics(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const auto& d : diags) {
    out += FormatDiagnostic(d);
    out += '\n';
  }
  return out;
}

bool HasCode(const std::vector<Diagnostic>& diags, std::string_view code) {
  return CountCode(diags, code) > 0;
}

size_t CountCode(const std::vector<Diagnostic>& diags, std::string_view code) {
  size_t n = 0;
  for (const auto& d : diags) n += (d.code == code || d.name == code) ? 1 : 0;
  return n;
}

bool HasErrors(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags) {
    if (d.severity == Severity::kError) return true;
  }
  return false;
}

void DiagnosticSink::Report(CheckId id, std::string message, const ir::Span& span,
                            Severity severity) {
  if (limit_ != 0 && diags_.size() >= limit_) {
    ++dropped_;
    return;
  }
  diags_.push_back(MakeDiagnostic(id, std::move(message), span, severity));
}

}  // namespace cds::verify
