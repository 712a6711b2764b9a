#pragma once

// The verifier's findings. Every check is one row of verifier/checks.def, which
// gives its code, name, family and description.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ir/span.h"

namespace cds::verify {

enum class CheckId : unsigned {
#define CDS_VERIFIER_CHECK(id, code, name, family, description) id,
#include "verifier/checks.def"
#undef CDS_VERIFIER_CHECK
  kCount,
};

struct CheckInfo {
  CheckId id;
  std::string_view code;         // "CDS-V003"
  std::string_view name;         // "window-buffer-not-shared"
  std::string_view family;       // the source file that implements it, without ".cc"
  std::string_view description;  // one line
};

// Every check, in code order.
const std::vector<CheckInfo>& AllChecks();
const CheckInfo& GetCheckInfo(CheckId id);

// An error is a violation; a warning is a violation the chosen contract tolerates;
// a note explains the others and is never a violation itself.
enum class Severity { kError, kWarning, kNote };
std::string_view SeverityName(Severity severity);  // "error", "warning", "note"

struct Diagnostic {
  std::string code;     // "CDS-V003"
  std::string name;     // "window-buffer-not-shared"
  std::string message;  // names the objects involved (allocs, scopes, functions)
  ir::Span span;        // the offending object's span
  Severity severity = Severity::kError;
};

Diagnostic MakeDiagnostic(CheckId id, std::string message, ir::Span span,
                          Severity severity = Severity::kError);

// One line per diagnostic: "FILE:LINE:COL: error: [CDS-V003 window-buffer-not-shared] message"
// ("warning:" and "note:" for the other severities).
std::string FormatDiagnostic(const Diagnostic& d);
std::string FormatDiagnostics(const std::vector<Diagnostic>& diags);

bool HasCode(const std::vector<Diagnostic>& diags, std::string_view code);
size_t CountCode(const std::vector<Diagnostic>& diags, std::string_view code);
// Whether any diagnostic is an error: a program the verifier accepts may still
// get warnings and notes.
bool HasErrors(const std::vector<Diagnostic>& diags);

// Collects diagnostics; a cap keeps a pathological output from producing millions
// of lines (the first `limit` are kept, later ones only counted).
class DiagnosticSink {
 public:
  explicit DiagnosticSink(size_t limit = 0) : limit_(limit) {}
  void Report(CheckId id, std::string message, const ir::Span& span,
              Severity severity = Severity::kError);
  std::vector<Diagnostic> Take() { return std::move(diags_); }
  size_t dropped() const { return dropped_; }
  size_t size() const { return diags_.size(); }

 private:
  size_t limit_;
  size_t dropped_ = 0;
  std::vector<Diagnostic> diags_;
};

}  // namespace cds::verify
