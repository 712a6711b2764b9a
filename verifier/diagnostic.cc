#include "verifier/diagnostic.h"

#include <cstddef>
#include <iterator>

#include <fmt/format.h>

namespace cds::verify {

namespace {

// A check's code is its position in checks.def, so appending is the only way to add
// one: a row out of place fails to compile.
constexpr std::string_view kCodes[] = {
#define CDS_VERIFIER_CHECK(id, code, name, family, description) code,
#include "verifier/checks.def"
#undef CDS_VERIFIER_CHECK
};

constexpr bool CodesFollowTheirPositions() {
  for (size_t i = 0; i < std::size(kCodes); ++i) {
    const std::string_view c = kCodes[i];
    if (c.size() != 8 || c.substr(0, 5) != "CDS-V") return false;
    const size_t n = (c[5] - '0') * 100 + (c[6] - '0') * 10 + (c[7] - '0');
    if (n != i + 1) return false;
  }
  return std::size(kCodes) == static_cast<size_t>(CheckId::kCount);
}
static_assert(CodesFollowTheirPositions(),
              "verifier/checks.def: the codes must be CDS-V001, CDS-V002, ... in row order");

}  // namespace

const std::vector<CheckInfo>& AllChecks() {
  static const std::vector<CheckInfo> table = {
#define CDS_VERIFIER_CHECK(id, code, name, family, description) \
  {CheckId::id, code, name, family, description},
#include "verifier/checks.def"
#undef CDS_VERIFIER_CHECK
  };
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
