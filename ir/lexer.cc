#include "ir/lexer.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "ir/diagnostics.h"
#include "ir/error.h"

namespace cds::ir {

std::string_view TokName(Tok t) {
  switch (t) {
    case Tok::kEof:
      return "end of input";
    case Tok::kNewline:
      return "end of line";
    case Tok::kIndent:
      return "indent";
    case Tok::kDedent:
      return "dedent";
    case Tok::kName:
      return "name";
    case Tok::kInt:
      return "integer";
    case Tok::kFloat:
      return "number";
    case Tok::kString:
      return "string";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kLBracket:
      return "'['";
    case Tok::kRBracket:
      return "']'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kDot:
      return "'.'";
    case Tok::kAssign:
      return "'='";
    case Tok::kArrow:
      return "'->'";
    case Tok::kAt:
      return "'@'";
    case Tok::kSemicolon:
      return "';'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kMinus:
      return "'-'";
    case Tok::kStar:
      return "'*'";
    case Tok::kSlash:
      return "'/'";
    case Tok::kSlashSlash:
      return "'//'";
    case Tok::kPercent:
      return "'%'";
    case Tok::kLt:
      return "'<'";
    case Tok::kLe:
      return "'<='";
    case Tok::kEqEq:
      return "'=='";
    case Tok::kNe:
      return "'!='";
    case Tok::kGt:
      return "'>'";
    case Tok::kGe:
      return "'>='";
  }
  return "?";
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
void Lexer::CheckUtf8(size_t begin, size_t end, std::string_view where) const {
  for (size_t p = begin; p < end;) {
    if (static_cast<unsigned char>(src_[p]) < 0x80) {
      ++p;
      continue;
    }
    const size_t n = Utf8CharLength(src_, p);
    if (n == 0) {
      Fail(p, fmt::format("invalid UTF-8 byte 0x{:02X} in {}", static_cast<unsigned char>(src_[p]),
                          where));
    }
    p += n;
  }
}

void Lexer::Fail(size_t at, const std::string& msg) const {
  throw ValueError(msg, Span{file_, line_, ColOf(at)});
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
inline bool IsOpenBracket(Tok k) { return k == Tok::kLParen || k == Tok::kLBracket || k == Tok::kLBrace; }
inline bool IsCloseBracket(Tok k) { return k == Tok::kRParen || k == Tok::kRBracket || k == Tok::kRBrace; }
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
      const size_t comment = p;
      const void* nl = std::memchr(data + p, '\n', size - p);
      p = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) : size;
      CheckUtf8(comment, p, "a comment");
      if (p < size) {
        ++p;
        ++line_;
        line_start_ = p;
      }
      pos_ = p;
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
    if (p < size && LexCommon(out, p)) [[likely]] return;
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
      const void* nl = std::memchr(data + pos_, '\n', size - pos_);
      const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) : size;
      CheckUtf8(pos_, end, "a comment");
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
    char n = pos_ + 1 < size ? data[pos_ + 1] : '\0';
    Tok k;
    size_t len = 1;
    switch (c) {
      case '-':
        k = n == '>' ? Tok::kArrow : Tok::kMinus;
        len = n == '>' ? 2 : 1;
        break;
      case '/':
        k = n == '/' ? Tok::kSlashSlash : Tok::kSlash;
        len = n == '/' ? 2 : 1;
        break;
      case '<':
        k = n == '=' ? Tok::kLe : Tok::kLt;
        len = n == '=' ? 2 : 1;
        break;
      case '>':
        k = n == '=' ? Tok::kGe : Tok::kGt;
        len = n == '=' ? 2 : 1;
        break;
      case '!':
        if (n != '=') BadChar(b);
        k = Tok::kNe;
        len = 2;
        break;
      default:
        BadChar(b);
    }
    pos_ += len;
    Set(out, k, b, pos_);
    return;
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
  // Drain the lookahead first; then lex straight into one scratch token.
  while (count_ > 0) {
    Token t = Next();
    if (t.kind == Tok::kIndent) ++depth;
    if (t.kind == Tok::kDedent) --depth;
    if (t.kind == Tok::kEof) {
      *eof = t;
      return false;
    }
    if (depth == 0) return true;
  }
  Token t;
  while (true) {
    Lex(t);
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
  char q = src_[pos_];
  bool triple = pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q;
  int32_t start_line = line_;
  int32_t start_col = ColOf(b);
  pos_ += triple ? 3 : 1;
  while (true) {
    if (pos_ >= src_.size()) {
      throw ValueError(triple ? "unterminated triple-quoted string" : "unterminated string literal",
                       Span{file_, start_line, start_col});
    }
    char c = src_[pos_];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const size_t n = Utf8CharLength(src_, pos_);
      if (n == 0) {
        Fail(pos_,
             fmt::format("invalid UTF-8 byte 0x{:02X} in a string", static_cast<unsigned char>(c)));
      }
      pos_ += n;
      continue;
    }
    if (c == '\\') {
      if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '\n') {
        ++line_;
        line_start_ = pos_ + 2;
      }
      pos_ += 2;
      continue;
    }
    if (c == '\n') {
      if (!triple) {
        throw ValueError("unterminated string literal (end of line inside the string)",
                         Span{file_, start_line, start_col});
      }
      ++pos_;
      ++line_;
      line_start_ = pos_;
      continue;
    }
    if (c == q) {
      if (!triple) {
        ++pos_;
        break;
      }
      if (pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q) {
        pos_ += 3;
        break;
      }
    }
    ++pos_;
  }
  if (pos_ > src_.size()) pos_ = src_.size();
  out.kind = Tok::kString;
  out.text = src_.substr(b, pos_ - b);
  out.line = start_line;
  out.col = start_col;
}

std::string Lexer::DecodeString(std::string_view raw) {
  size_t quote = (raw.size() >= 6 && raw[0] == raw[1] && raw[1] == raw[2]) ? 3 : 1;
  if (raw.size() < 2 * quote) return {};
  std::string_view body = raw.substr(quote, raw.size() - 2 * quote);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '0':
        out += '\0';
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case '\n':
        break;
      case 'x': {
        auto hex = [](char h) -> int {
          if (h >= '0' && h <= '9') return h - '0';
          if (h >= 'a' && h <= 'f') return h - 'a' + 10;
          if (h >= 'A' && h <= 'F') return h - 'A' + 10;
          return -1;
        };
        if (i + 2 < body.size() + 0 && hex(body[i + 1]) >= 0 && hex(body[i + 2]) >= 0) {
          out += static_cast<char>(hex(body[i + 1]) * 16 + hex(body[i + 2]));
          i += 2;
        } else {
          out += "\\x";
        }
        break;
      }
      default:
        out += '\\';
        out += e;
    }
  }
  return out;
}

}  // namespace cds::ir
