#include "ir/lexer.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "ir/diagnostics.h"
#include "ir/error.h"

namespace cds::ir {

std::string_view TokName(Tok t) {
  // In the order of Tok.
  static constexpr std::string_view kNames[] = {
      "end of input", "end of line", "indent", "dedent", "name", "integer", "number",
      "string",       "'('",         "')'",    "'['",    "']'",  "'{'",     "'}'",
      "','",          "':'",         "'.'",    "'='",    "'->'", "'@'",     "';'",
      "'+'",          "'-'",         "'*'",    "'/'",    "'//'", "'%'",     "'<'",
      "'<='",         "'=='",        "'!='",   "'>'",    "'>='"};
  static_assert(std::size(kNames) == static_cast<size_t>(Tok::kGe) + 1);
  return kNames[static_cast<size_t>(t)];
}

namespace {
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
}  // namespace

Lexer::Lexer(std::string_view source, FileId file, int line_offset, LexerLimits limits)
    : src_(source), file_(file), limits_(limits), line_(1 + line_offset) {
  // A byte-order mark at the start is skipped, as Python skips it.
  if (src_.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    pos_ = line_start_ = kByteOrderMark.size();
  }
  RejectCrLineEndings();
}

// Python reads a carriage return alone as a line break; the harness only knows LF
// and CRLF, and without this check a file with CR line endings would be read as
// one long line (or one long comment).
void Lexer::RejectCrLineEndings() const {
  for (size_t p = src_.find('\r'); p != std::string_view::npos; p = src_.find('\r', p + 2)) {
    if (p + 1 < src_.size() && src_[p + 1] == '\n') continue;
    const size_t nl = src_.rfind('\n', p);
    const size_t line_begin = nl == std::string_view::npos ? 0 : nl + 1;
    const auto line =
        static_cast<int32_t>(std::count(src_.begin(), src_.begin() + line_begin, '\n'));
    throw ValueError(
        "CR line endings (a carriage return without a line feed) are not supported; use LF or CRLF",
        Span{file_, line_ + line, static_cast<int32_t>(p - line_begin) + 1});
  }
}

// Non-ASCII text is allowed in comments and strings, as long as it is UTF-8.
size_t Lexer::Utf8Length(size_t at, int32_t line, size_t line_start, std::string_view where) const {
  const size_t n = Utf8CharLength(src_, at);
  if (n == 0) {
    FailAt(line, line_start, at,
           fmt::format("invalid UTF-8 byte 0x{:02X}{}{}", static_cast<unsigned char>(src_[at]),
                       where.empty() ? "" : " in ", where));
  }
  return n;
}

void Lexer::CheckUtf8(size_t begin, size_t end, int32_t line, size_t line_start,
                      std::string_view where) const {
  for (size_t p = begin; p < end;) {
    p += static_cast<unsigned char>(src_[p]) < 0x80 ? 1 : Utf8Length(p, line, line_start, where);
  }
}

size_t Lexer::LineEnd(size_t p) const {
  const size_t nl = src_.find('\n', p);
  return nl == std::string_view::npos ? src_.size() : nl;
}

void Lexer::Fail(size_t at, const std::string& msg) const { FailAt(line_, line_start_, at, msg); }

void Lexer::FailAt(int32_t line, size_t line_start, size_t at, const std::string& msg) const {
  throw ValueError(msg, Span{file_, line, static_cast<int32_t>(at - line_start) + 1});
}

namespace {
// Character classes by table: one load per byte in the identifier and
// indentation loops instead of a chain of range compares.
enum : uint8_t { kIdentStart = 1, kDigit = 2 };
constexpr std::array<uint8_t, 256> kCharClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<size_t>(c)] = kIdentStart;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<size_t>(c)] = kIdentStart;
  t['_'] = kIdentStart;
  for (int c = '0'; c <= '9'; ++c) t[static_cast<size_t>(c)] = kDigit;
  return t;
}();
inline uint8_t ClassOf(char c) { return kCharClass[static_cast<unsigned char>(c)]; }
inline bool IsIdentStart(char c) { return ClassOf(c) == kIdentStart; }
inline bool IsDigit(char c) { return ClassOf(c) == kDigit; }
inline bool IsIdentChar(char c) { return ClassOf(c) != 0; }

// Characters that are a token by themselves whatever follows ('.' unless a digit
// follows, which Lex checks); kEof marks the rest.
constexpr std::array<Tok, 256> kOneCharTok = [] {
  std::array<Tok, 256> t{};
  t['('] = Tok::kLParen;
  t[')'] = Tok::kRParen;
  t['['] = Tok::kLBracket;
  t[']'] = Tok::kRBracket;
  t['{'] = Tok::kLBrace;
  t['}'] = Tok::kRBrace;
  t[','] = Tok::kComma;
  t[':'] = Tok::kColon;
  t['.'] = Tok::kDot;
  t[';'] = Tok::kSemicolon;
  t['@'] = Tok::kAt;
  t['+'] = Tok::kPlus;
  t['*'] = Tok::kStar;
  t['%'] = Tok::kPercent;
  return t;
}();
inline bool IsOpenBracket(Tok k) {
  return k == Tok::kLParen || k == Tok::kLBracket || k == Tok::kLBrace;
}
inline bool IsCloseBracket(Tok k) {
  return k == Tok::kRParen || k == Tok::kRBracket || k == Tok::kRBrace;
}
}  // namespace

// At the start of a logical line: skips blank and comment-only lines, then
// compares the indentation with the stack. Returns true when it produced a token.
bool Lexer::LexIndentation(Token& out) {
  const char* data = src_.data();
  const size_t size = src_.size();
  while (true) {
    size_t p = pos_;
    int32_t width = 0;  // only spaces count (a stray '\r' or form feed is whitespace)
    // Eight spaces at a time first: body lines start with 8-16 of them.
    constexpr uint64_t kEightSpaces = 0x2020202020202020ULL;
    while (p + 8 <= size) {
      uint64_t w;
      std::memcpy(&w, data + p, 8);
      if (w != kEightSpaces) break;
      p += 8;
      width += 8;
    }
    while (p < size) {
      char c = data[p];
      if (c == ' ') {
        ++width;
      } else if (c != '\r' && c != '\f') {
        break;
      }
      ++p;
    }
    if (p < size && data[p] == '\t') {
      pos_ = p;
      Fail(p, "tab in indentation; indent with spaces");
    }
    if (p >= size) {
      pos_ = p;
      return false;
    }
    if (data[p] == '\n' || data[p] == '#') {
      // Blank or comment-only line: no indentation meaning.
      pos_ = LineEnd(p);
      CheckUtf8(p, pos_, line_, line_start_, "a comment");
      if (pos_ < size) {
        ++line_;
        line_start_ = ++pos_;
      }
      continue;
    }
    pos_ = p;
    at_line_start_ = false;
    if (width > indents_.back()) {
      if (static_cast<int>(indents_.size()) > limits_.max_nesting_depth) {
        Fail(p, fmt::format("indentation nested deeper than {} levels (limit max_nesting_depth)",
                            limits_.max_nesting_depth));
      }
      indents_.push_back(width);
      Set(out, Tok::kIndent, p, p);
      return true;
    }
    if (width < indents_.back()) {
      int pops = 0;
      while (width < indents_.back()) {
        indents_.pop_back();
        ++pops;
      }
      if (width != indents_.back()) Fail(p, "unindent does not match any outer indentation level");
      pending_dedents_ = pops - 1;
      Set(out, Tok::kDedent, p, p);
      return true;
    }
    return false;
  }
}

// The common tokens, at `p` (not a blank): a name, a one-character token, '=' or
// '==', a number or a string. False for anything else, and for a '.' that starts
// a number or a bracket past the nesting limit, which LexRest reports.
[[gnu::always_inline]] inline bool Lexer::LexCommon(Token& out, size_t p) {
  const char* data = src_.data();
  const size_t size = src_.size();
  const char c = data[p];
  if (IsIdentStart(c)) {
    size_t e = p + 1;
    while (e < size && IsIdentChar(data[e])) ++e;
    pos_ = e;
    line_has_token_ = true;
    Set(out, Tok::kName, p, e);
    return true;
  }
  const Tok k = kOneCharTok[static_cast<unsigned char>(c)];
  if (k != Tok::kEof && !(c == '.' && p + 1 < size && IsDigit(data[p + 1])) &&
      !(IsOpenBracket(k) && paren_depth_ >= limits_.max_nesting_depth)) {
    if (IsOpenBracket(k)) ++paren_depth_;
    if (IsCloseBracket(k) && paren_depth_ > 0) --paren_depth_;
    pos_ = p + 1;
    line_has_token_ = true;
    Set(out, k, p, p + 1);
    return true;
  }
  if (c == '=') {
    const bool eq = p + 1 < size && data[p + 1] == '=';
    pos_ = p + (eq ? 2 : 1);
    line_has_token_ = true;
    Set(out, eq ? Tok::kEqEq : Tok::kAssign, p, pos_);
    return true;
  }
  if (IsDigit(c)) {
    pos_ = p;
    line_has_token_ = true;
    LexNumber(out, p);
    return true;
  }
  if (c == '"' || c == '\'') {
    pos_ = p;
    line_has_token_ = true;
    LexString(out, p);
    return true;
  }
  return false;
}

// Most tokens are LexCommon's, after blanks inside a line: Lex is that and nothing
// else, kept small so that the common path saves few registers. Everything else
// (line starts and indentation, newlines, comments, the other operators, errors,
// the end) is LexRest, which starts over from pos_.
void Lexer::Lex(Token& out) {
  if (!at_line_start_ && pending_dedents_ == 0) [[likely]] {
    const char* data = src_.data();
    const size_t size = src_.size();
    size_t p = pos_;
    while (p < size && data[p] == ' ') ++p;
    pos_ = p;
    if (p < size && LexCommon(out, p)) [[likely]]
      return;
  }
  LexRest(out);
}

void Lexer::LexRest(Token& out) {
  if (pending_dedents_ > 0) {
    --pending_dedents_;
    Set(out, Tok::kDedent, pos_, pos_);
    return;
  }
  if (at_line_start_ && paren_depth_ == 0) {
    if (LexIndentation(out)) return;
  }
  const char* data = src_.data();
  const size_t size = src_.size();
  while (true) {
    if (pos_ >= size) {
      if (line_has_token_) {
        line_has_token_ = false;
        Set(out, Tok::kNewline, pos_, pos_);
        return;
      }
      if (indents_.size() > 1) {
        indents_.pop_back();
        Set(out, Tok::kDedent, pos_, pos_);
        return;
      }
      Set(out, Tok::kEof, pos_, pos_);
      return;
    }
    char c = data[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++pos_;
      continue;
    }
    const size_t b = pos_;
    if (LexCommon(out, b)) return;
    if (c == '#') {
      const size_t end = LineEnd(pos_);
      CheckUtf8(pos_, end, line_, line_start_, "a comment");
      pos_ = end;
      continue;
    }
    if (c == '\\' && pos_ + 1 < size && (data[pos_ + 1] == '\n' || data[pos_ + 1] == '\r')) {
      pos_ += 1;
      if (data[pos_] == '\r') ++pos_;
      if (pos_ < size && data[pos_] == '\n') ++pos_;
      ++line_;
      line_start_ = pos_;
      continue;
    }
    if (c == '\n') {
      Set(out, Tok::kNewline, pos_, pos_ + 1);
      ++pos_;
      ++line_;
      line_start_ = pos_;
      if (paren_depth_ > 0) continue;
      at_line_start_ = true;
      if (!line_has_token_) {
        if (LexIndentation(out)) return;
        continue;
      }
      line_has_token_ = false;
      return;
    }
    line_has_token_ = true;
    if (c == '.' && pos_ + 1 < size && IsDigit(data[pos_ + 1])) {
      LexNumber(out, b);
      return;
    }
    // What LexCommon left: the operators that may take two characters, a bracket
    // past the nesting limit, and bad characters.
    if (kOneCharTok[static_cast<unsigned char>(c)] != Tok::kEof) {
      Fail(b, fmt::format("brackets nested deeper than {} levels (limit max_nesting_depth)",
                          limits_.max_nesting_depth));
    }
    // The rest: `first` alone is `one` (kEof: not a token), followed by `second`
    // it is `two`.
    struct OneOrTwoChars {
      char first, second;
      Tok one, two;
    };
    static constexpr OneOrTwoChars kOps[] = {{'-', '>', Tok::kMinus, Tok::kArrow},
                                             {'/', '/', Tok::kSlash, Tok::kSlashSlash},
                                             {'<', '=', Tok::kLt, Tok::kLe},
                                             {'>', '=', Tok::kGt, Tok::kGe},
                                             {'!', '=', Tok::kEof, Tok::kNe}};
    const bool two_chars_left = pos_ + 1 < size;
    for (const OneOrTwoChars& op : kOps) {
      const bool two = two_chars_left && data[pos_ + 1] == op.second;
      if (op.first != c || (!two && op.one == Tok::kEof)) continue;
      pos_ += two ? 2 : 1;
      Set(out, two ? op.two : op.one, b, pos_);
      return;
    }
    BadChar(b);
  }
}

void Lexer::BadChar(size_t b) const {
  char c = src_[b];
  auto uc = static_cast<unsigned char>(c);
  if (uc >= 0x80) {
    if (src_.substr(b, kByteOrderMark.size()) == kByteOrderMark) {
      Fail(b, "UTF-8 byte-order mark (U+FEFF): only allowed as the first bytes of the file");
    }
    const size_t n = Utf8CharLength(src_, b);
    if (n == 0) Fail(b, fmt::format("invalid UTF-8 byte 0x{:02X}", uc));
    Fail(b, fmt::format("non-ASCII character '{}': only allowed in strings and comments",
                        Echo(src_.substr(b, n))));
  }
  if (uc < 0x20 || uc == 0x7f) Fail(b, fmt::format("unexpected control character 0x{:02X}", uc));
  if (c == '&' || c == '|' || c == '^' || c == '~') {
    Fail(b, fmt::format("the bitwise operator '{}' is not supported", c));
  }
  Fail(b, fmt::format("unexpected character '{}'", c));
}

bool Lexer::SkipBlock(Token* eof, int depth) {
  while (true) {
    const Token t = Next();
    if (t.kind == Tok::kIndent) {
      ++depth;
    } else if (t.kind == Tok::kDedent) {
      if (--depth == 0) return true;
    } else if (t.kind == Tok::kEof) {
      *eof = t;
      return false;
    }
  }
}

Lexer::RawBlock Lexer::TakeRawBlock(const Token& newline) {
  if (count_ != 0 || indents_.size() < 2 || newline.kind != Tok::kNewline ||
      newline.text.size() != 1) {
    throw std::logic_error("TakeRawBlock: not just after a NEWLINE and an INDENT");
  }
  const char* data = src_.data();
  const size_t size = src_.size();
  const int32_t indent = indents_.back();
  RawBlock block;
  block.indent = indent;
  // From the line after the header: comments before the first statement belong to
  // the block too.
  size_t p = static_cast<size_t>(newline.text.data() - data) + 1;
  size_t line_start = p;
  int32_t line = newline.line + 1;
  size_t text_begin = std::string_view::npos;  // the first line that belongs to the text
  size_t kept_end = p;                         // after the last one
  int depth = 0;
  size_t outer_bracket = 0;
  int32_t outer_bracket_line = 0;
  size_t outer_bracket_line_start = 0;
  bool at_logical_start = true;
  auto new_line = [&](size_t next) {
    p = line_start = next;
    ++line;
  };
  auto keep_from = [&](size_t from, int32_t at_line) {
    if (text_begin != std::string_view::npos) return;
    text_begin = from;
    block.line = at_line;
  };
  while (true) {
    if (at_logical_start) {
      size_t q = p;
      int32_t width = 0;
      while (q < size && (data[q] == ' ' || data[q] == '\f')) {
        width += data[q] == ' ' ? 1 : 0;
        ++q;
      }
      if (q < size && data[q] == '\t')
        FailAt(line, line_start, q, "tab in indentation; indent with spaces");
      if (q >= size) break;
      const bool crlf = data[q] == '\r' && q + 1 < size && data[q + 1] == '\n';
      if (data[q] == '\n' || crlf || data[q] == '#') {
        // A blank line, or a comment alone: part of the text when code follows, or
        // when the comment is indented as the block is.
        const size_t end = std::min(LineEnd(q) + 1, size);
        CheckUtf8(q, end, line, line_start, {});
        if (data[q] == '#' && width >= indent) {
          keep_from(p, line);
          kept_end = end;
        }
        if (end >= size) break;
        new_line(end);
        continue;
      }
      if (width < indent) break;
      keep_from(p, line);
      at_logical_start = false;
      p = q;
    }
    if (p >= size) {
      kept_end = size;
      break;
    }
    const char c = data[p];
    const auto uc = static_cast<unsigned char>(c);
    if (c == '\n') {
      new_line(p + 1);
      kept_end = p;
      at_logical_start = depth == 0;
    } else if (c == '#') {
      const size_t end = LineEnd(p);
      CheckUtf8(p, end, line, line_start, {});
      p = end;
    } else if (c == '\\' && p + 1 < size && (data[p + 1] == '\n' || data[p + 1] == '\r')) {
      new_line(p + (data[p + 1] == '\r' ? 3 : 2));
    } else if (c == '"' || c == '\'') {
      p = ScanString(p, line, line_start, {});
    } else if (c == '(' || c == '[' || c == '{') {
      if (depth++ == 0) {
        outer_bracket = p;
        outer_bracket_line = line;
        outer_bracket_line_start = line_start;
      }
      ++p;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth > 0) --depth;
      ++p;
    } else if (uc >= 0x80) {
      p += Utf8Length(p, line, line_start, {});
    } else if ((uc < 0x20 && c != '\r' && c != '\t' && c != '\f') || uc == 0x7f) {
      FailAt(line, line_start, p, fmt::format("unexpected control character 0x{:02X}", uc));
    } else {
      ++p;
    }
  }
  if (depth > 0) {
    FailAt(outer_bracket_line, outer_bracket_line_start, outer_bracket,
           fmt::format("'{}' is never closed", data[outer_bracket]));
  }
  if (text_begin == std::string_view::npos)
    throw std::logic_error("TakeRawBlock: a block without a statement");
  block.text = src_.substr(text_begin, kept_end - text_begin);
  // Resume at the first line after the block: the indentation there closes it.
  pos_ = line_start_ = p < size ? line_start : size;
  line_ = line;
  at_line_start_ = true;
  line_has_token_ = false;
  paren_depth_ = 0;
  return block;
}

void Lexer::LexNumber(Token& out, size_t b) {
  bool is_float = false;
  while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
  if (pos_ < src_.size() && src_[pos_] == '.') {
    is_float = true;
    ++pos_;
    while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
  }
  if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    size_t p = pos_ + 1;
    if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
    if (p < src_.size() && IsDigit(src_[p])) {
      is_float = true;
      pos_ = p;
      while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    }
  }
  if (pos_ < src_.size() && IsIdentStart(src_[pos_])) {
    Fail(pos_, fmt::format("invalid number literal '{}'", Echo(src_.substr(b, pos_ + 1 - b))));
  }
  Set(out, is_float ? Tok::kFloat : Tok::kInt, b, pos_);
}

void Lexer::LexString(Token& out, size_t b) {
  const int32_t line = line_;
  const int32_t col = ColOf(b);
  pos_ = ScanString(b, line_, line_start_, "a string");
  Set(out, Tok::kString, b, pos_);
  out.line = line;
  out.col = col;
}

size_t Lexer::ScanString(size_t p, int32_t& line, size_t& line_start,
                         std::string_view where) const {
  const char* data = src_.data();
  const size_t size = src_.size();
  const char q = data[p];
  const bool triple = p + 2 < size && data[p + 1] == q && data[p + 2] == q;
  const Span start{file_, line, static_cast<int32_t>(p - line_start) + 1};
  p += triple ? 3 : 1;
  while (true) {
    if (p >= size) {
      throw ValueError(triple ? "unterminated triple-quoted string" : "unterminated string literal",
                       start);
    }
    const char c = data[p];
    if (c == '\\') {
      if (p + 1 < size && data[p + 1] == '\n') {
        ++line;
        line_start = p + 2;
      }
      p += 2;
    } else if (c == '\n') {
      if (!triple) {
        throw ValueError("unterminated string literal (end of line inside the string)", start);
      }
      ++line;
      line_start = ++p;
    } else if (c == q && (!triple || (p + 2 < size && data[p + 1] == q && data[p + 2] == q))) {
      return p + (triple ? 3 : 1);
    } else {
      p += static_cast<unsigned char>(c) < 0x80 ? 1 : Utf8Length(p, line, line_start, where);
    }
  }
}

std::string_view Lexer::StringBody(std::string_view raw) {
  const size_t quote = (raw.size() >= 6 && raw[0] == raw[1] && raw[1] == raw[2]) ? 3 : 1;
  if (raw.size() < 2 * quote) return {};
  return raw.substr(quote, raw.size() - 2 * quote);
}

std::string Lexer::DecodeString(std::string_view raw) {
  const std::string_view body = StringBody(raw);
  // The escapes `\<escaped[k]>` that stand for meaning[k].
  static constexpr std::string_view kEscaped = "ntr0\\'\"";
  static constexpr std::string_view kMeaning("\n\t\r\0\\'\"", kEscaped.size());
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    const char e = body[++i];
    if (e == '\n') continue;  // a line continuation
    if (const size_t k = kEscaped.find(e); k != std::string_view::npos) {
      out += kMeaning[k];
      continue;
    }
    unsigned byte = 0;
    const char* hex = body.data() + i + 1;
    if (e == 'x' && i + 2 < body.size() && std::from_chars(hex, hex + 2, byte, 16).ptr == hex + 2) {
      out += static_cast<char>(byte);
      i += 2;
      continue;
    }
    out += '\\';
    out += e;
  }
  return out;
}

}  // namespace cds::ir
