#include "ir/diagnostics.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace cds::ir {

namespace {

inline constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
inline constexpr std::string_view kCut = "...";

// One character of echoed text: `len` bytes of the source, shown as themselves
// (one column) or, when not printable, as `\xNN` per byte.
struct Unit {
  size_t len = 1;
  bool escaped = false;
  size_t Columns() const { return escaped ? 4 * len : 1; }
};

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

Unit UnitAt(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return Unit{1, !((b0 >= 0x20 && b0 < 0x7F) || b0 == '\t')};
  const size_t len = Utf8CharLength(s, i);
  if (len == 0) return Unit{1, true};
  // C1 controls (U+0080..U+009F) and the byte-order mark are invisible.
  const bool c1_control = b0 == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F;
  const bool bom = s.substr(i, len) == kByteOrderMark;
  return Unit{len, c1_control || bom};
}

void AppendUnit(std::string* out, std::string_view s, size_t i, const Unit& u) {
  if (!u.escaped) {
    out->append(s.substr(i, u.len));
    return;
  }
  for (size_t k = 0; k < u.len; ++k) {
    fmt::format_to(std::back_inserter(*out), "\\x{:02X}", static_cast<unsigned char>(s[i + k]));
  }
}

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
  // The parser skips a byte-order mark at the start of the input.
  if (begin == 0 && text.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    text.remove_prefix(kByteOrderMark.size());
  }
  return text;
}

// A line cut to kMaxEchoColumns around byte `caret`, and the caret's column in it.
struct Excerpt {
  std::string text;
  std::string caret_line;  // blanks (tabs kept) up to the caret, then '^'
};

Excerpt ExcerptAround(std::string_view line, size_t caret) {
  caret = std::min(caret, line.size());
  // A unit takes at most 4 bytes, and at least one column: looking further than
  // this from the caret cannot change the excerpt.
  const size_t reach = 4 * kMaxEchoColumns;
  size_t begin = caret > reach ? caret - reach : 0;
  while (begin > 0 && begin < caret && IsContinuation(static_cast<unsigned char>(line[begin]))) {
    ++begin;
  }
  const size_t end = std::min(line.size(), caret + reach);
  struct Placed {
    size_t at;
    Unit unit;
  };
  std::vector<Placed> units;
  size_t caret_unit = 0;
  for (size_t i = begin; i < end;) {
    if (i <= caret) caret_unit = units.size();
    Unit u = UnitAt(line, i);
    units.push_back({i, u});
    i += u.len;
  }
  if (caret >= end) caret_unit = units.size();
  size_t total = 0;
  for (const auto& p : units) total += p.unit.Columns();
  size_t first = 0, last = units.size();  // the units shown: [first, last)
  if (begin > 0 || end < line.size() || total > kMaxEchoColumns) {
    // Half the room before the caret, the rest after it; room one side does not
    // use goes to the other, and so does the room of a "..." that is not needed.
    size_t room = kMaxEchoColumns - 2 * kCut.size();
    size_t left = 0, right = 0;
    first = caret_unit;
    last = caret_unit;
    auto grow_left = [&](size_t limit) {
      while (first > 0 && left + units[first - 1].unit.Columns() <= limit) {
        left += units[--first].unit.Columns();
      }
    };
    auto grow_right = [&](size_t limit) {
      while (last < units.size() && right + units[last].unit.Columns() <= limit) {
        right += units[last++].unit.Columns();
      }
    };
    grow_left(room / 2);
    grow_right(room - left);
    grow_left(room - right);
    if (first == 0 && begin == 0) room += kCut.size();
    if (last == units.size() && end == line.size()) room += kCut.size();
    grow_left(room - right);
    grow_right(room - left);
  }
  Excerpt e;
  const bool cut_before = first > 0 || begin > 0;
  const bool cut_after = last < units.size() || end < line.size();
  if (cut_before) {
    e.text += kCut;
    e.caret_line.append(kCut.size(), ' ');
  }
  for (size_t k = first; k < last; ++k) {
    AppendUnit(&e.text, line, units[k].at, units[k].unit);
    if (k < caret_unit) {
      const bool tab = !units[k].unit.escaped && line[units[k].at] == '\t';
      e.caret_line.append(tab ? 1 : units[k].unit.Columns(), tab ? '\t' : ' ');
    }
  }
  if (cut_after) e.text += kCut;
  e.caret_line += '^';
  return e;
}

}  // namespace

size_t Utf8CharLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  // The length from the lead byte, and the range of the second byte that
  // excludes overlong forms, surrogates and code points above U+10FFFF.
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (!IsContinuation(static_cast<unsigned char>(s[i + k]))) return 0;
  }
  return len;
}

std::string EchoText(std::string_view text, size_t max_columns) {
  std::string out;
  size_t columns = 0;
  // Where the text would be cut if it turns out longer than max_columns.
  size_t cut_at = 0;
  bool cut_found = false;
  for (size_t i = 0; i < text.size();) {
    const Unit u = UnitAt(text, i);
    if (!cut_found && columns + u.Columns() + kCut.size() > max_columns) {
      cut_at = out.size();
      cut_found = true;
    }
    if (columns + u.Columns() > max_columns) {
      out.resize(cut_at);
      out += kCut;
      return out;
    }
    AppendUnit(&out, text, i, u);
    columns += u.Columns();
    i += u.len;
  }
  return out;
}

std::string FormatDiagnostic(std::string_view severity, const Span& span, std::string_view message,
                             std::string_view source) {
  std::string out =
      fmt::format("{}: {}: {}\n", span.ToString(), severity, EchoText(message, kMaxMessageColumns));
  std::string_view text = LineOf(source, span.line);
  if (text.empty()) return out;
  const size_t col = span.column > 0 ? static_cast<size_t>(span.column - 1) : 0;
  const Excerpt e = ExcerptAround(text, col);
  out += e.text;
  out += '\n';
  out += e.caret_line;
  out += '\n';
  return out;
}

std::string FormatDiagnostic(const ValueError& error, std::string_view source) {
  return FormatDiagnostic("error", error.span(), error.message(), source);
}

}  // namespace cds::ir
