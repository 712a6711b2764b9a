#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ir/error.h"

namespace cds::ir {

// User text quoted in a message (a token, a name, a source line) takes at most
// this many columns: a 50 MB line or string must not make a 50 MB diagnostic.
inline constexpr size_t kMaxEchoColumns = 120;
// A whole message, which may quote several such pieces.
inline constexpr size_t kMaxMessageColumns = 1000;

// `text` as it may appear in a diagnostic: bytes that are not printable (control
// characters, bytes that are not valid UTF-8, the byte-order mark) written as
// `\xEF`, and cut to `max_columns` with "..." when longer. Valid UTF-8 counts one
// column per character.
std::string EchoText(std::string_view text, size_t max_columns = kMaxEchoColumns);

// The length of the UTF-8 character starting at `s[i]` (1 for ASCII), or 0 when
// the bytes there are not valid UTF-8 (overlong forms, surrogates and code points
// above U+10FFFF included).
size_t Utf8CharLength(std::string_view s, size_t i);

// EchoText as a format argument: fmt::format("undefined variable '{}'", Echo(name)).
struct Echo {
  explicit Echo(std::string_view t) : text(t) {}
  std::string_view text;
};

// "FILE:LINE:COL: error: MESSAGE" followed by the offending source line and a
// caret under the column. `source` is the whole text the span's line refers to
// (for split-input-file chunks, the whole file). The line is cut to
// kMaxEchoColumns around the caret ("..." where it is cut) and escaped as
// EchoText does; the message is escaped and cut to kMaxMessageColumns.
std::string FormatDiagnostic(const ValueError& error, std::string_view source);
std::string FormatDiagnostic(std::string_view severity, const Span& span, std::string_view message,
                             std::string_view source);

}  // namespace cds::ir

template <>
struct fmt::formatter<cds::ir::Echo> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const cds::ir::Echo& e, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cds::ir::EchoText(e.text), ctx);
  }
};
