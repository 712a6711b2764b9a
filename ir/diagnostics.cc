#include "ir/diagnostics.h"

#include <fmt/format.h>

namespace cds::ir {

namespace {

// The text of 1-based line `line` of `source`, without its line break; empty
// when the line does not exist (a span from another file or built in code).
std::string_view LineOf(std::string_view source, int32_t line) {
  if (line <= 0) return {};
  size_t begin = 0;
  for (int32_t l = 1; l < line; ++l) {
    size_t nl = source.find('\n', begin);
    if (nl == std::string_view::npos) return {};
    begin = nl + 1;
  }
  size_t end = source.find('\n', begin);
  if (end == std::string_view::npos) end = source.size();
  std::string_view text = source.substr(begin, end - begin);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

}  // namespace

std::string FormatDiagnostic(std::string_view severity, const Span& span, std::string_view message,
                             std::string_view source) {
  std::string out = fmt::format("{}: {}: {}\n", span.ToString(), severity, message);
  std::string_view text = LineOf(source, span.line);
  if (text.empty()) return out;
  out.append(text);
  out += '\n';
  // The caret keeps tabs so it lines up under the same column in a terminal.
  size_t col = span.column > 0 ? static_cast<size_t>(span.column - 1) : 0;
  for (size_t i = 0; i < col && i < text.size(); ++i) out += text[i] == '\t' ? '\t' : ' ';
  out += "^\n";
  return out;
}

std::string FormatDiagnostic(const ValueError& error, std::string_view source) {
  return FormatDiagnostic("error", error.span(), error.message(), source);
}

}  // namespace cds::ir
