#include "ir/lexer.h"

#include <fmt/format.h>

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

Lexer::Lexer(std::string_view source, std::shared_ptr<const std::string> file, int line_offset,
             LexerLimits limits)
    : src_(source), file_(std::move(file)), limits_(limits), line_(1 + line_offset) {}

void Lexer::Fail(size_t at, const std::string& msg) const {
  throw ValueError(msg, Span{file_, line_, ColOf(at)});
}

Token Lexer::Make(Tok k, size_t begin, size_t end) const {
  return Token{k, src_.substr(begin, end - begin), line_, ColOf(begin)};
}

void Lexer::Fill() {
  int slot = (head_ + count_) % kLookahead;
  buf_[slot] = Lex();
  ++count_;
}

namespace {
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
}  // namespace

// At the start of a logical line: skips blank and comment-only lines, then
// compares the indentation with the stack. Sets *produced when it returns a token.
Token Lexer::LexIndentation(bool* produced) {
  *produced = false;
  while (true) {
    size_t p = pos_;
    while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\r' || src_[p] == '\f')) ++p;
    if (p < src_.size() && src_[p] == '\t') {
      pos_ = p;
      Fail(p, "tab in indentation; indent with spaces");
    }
    if (p >= src_.size()) {
      pos_ = p;
      return {};
    }
    if (src_[p] == '\n' || src_[p] == '#') {
      // Blank or comment-only line: no indentation meaning.
      while (p < src_.size() && src_[p] != '\n') ++p;
      if (p < src_.size()) {
        ++p;
        ++line_;
        line_start_ = p;
      }
      pos_ = p;
      continue;
    }
    int32_t width = static_cast<int32_t>(p - pos_);
    // Count only spaces (a stray '\r' or form feed is whitespace, not indent).
    width = 0;
    for (size_t q = pos_; q < p; ++q) width += src_[q] == ' ' ? 1 : 0;
    pos_ = p;
    at_line_start_ = false;
    if (width > indents_.back()) {
      if (static_cast<int>(indents_.size()) > limits_.max_nesting_depth) {
        Fail(p, fmt::format("indentation nested deeper than {} levels (limit max_nesting_depth)",
                            limits_.max_nesting_depth));
      }
      indents_.push_back(width);
      *produced = true;
      return Token{Tok::kIndent, src_.substr(p, 0), line_, ColOf(p)};
    }
    if (width < indents_.back()) {
      int pops = 0;
      while (width < indents_.back()) {
        indents_.pop_back();
        ++pops;
      }
      if (width != indents_.back()) Fail(p, "unindent does not match any outer indentation level");
      pending_dedents_ = pops - 1;
      *produced = true;
      return Token{Tok::kDedent, src_.substr(p, 0), line_, ColOf(p)};
    }
    return {};
  }
}

Token Lexer::Lex() {
  if (pending_dedents_ > 0) {
    --pending_dedents_;
    return Token{Tok::kDedent, src_.substr(pos_, 0), line_, ColOf(pos_)};
  }
  if (at_line_start_ && paren_depth_ == 0) {
    bool produced = false;
    Token t = LexIndentation(&produced);
    if (produced) return t;
  }
  while (true) {
    if (pos_ >= src_.size()) {
      if (line_has_token_) {
        line_has_token_ = false;
        return Token{Tok::kNewline, src_.substr(pos_, 0), line_, ColOf(pos_)};
      }
      if (indents_.size() > 1) {
        indents_.pop_back();
        return Token{Tok::kDedent, src_.substr(pos_, 0), line_, ColOf(pos_)};
      }
      return Token{Tok::kEof, src_.substr(pos_, 0), line_, ColOf(pos_)};
    }
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++pos_;
      continue;
    }
    if (c == '#') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      continue;
    }
    if (c == '\\' && pos_ + 1 < src_.size() && (src_[pos_ + 1] == '\n' || src_[pos_ + 1] == '\r')) {
      pos_ += 1;
      if (src_[pos_] == '\r') ++pos_;
      if (pos_ < src_.size() && src_[pos_] == '\n') ++pos_;
      ++line_;
      line_start_ = pos_;
      continue;
    }
    if (c == '\n') {
      Token t{Tok::kNewline, src_.substr(pos_, 1), line_, ColOf(pos_)};
      ++pos_;
      ++line_;
      line_start_ = pos_;
      if (paren_depth_ > 0) continue;
      at_line_start_ = true;
      if (!line_has_token_) {
        bool produced = false;
        Token ind = LexIndentation(&produced);
        if (produced) return ind;
        continue;
      }
      line_has_token_ = false;
      return t;
    }
    line_has_token_ = true;
    size_t b = pos_;
    if (IsIdentStart(c)) {
      while (pos_ < src_.size() && IsIdentChar(src_[pos_])) ++pos_;
      return Make(Tok::kName, b, pos_);
    }
    if (IsDigit(c) || (c == '.' && pos_ + 1 < src_.size() && IsDigit(src_[pos_ + 1])))
      return LexNumber(b);
    if (c == '"' || c == '\'') return LexString(b);
    auto one = [&](Tok k) {
      ++pos_;
      return Make(k, b, pos_);
    };
    auto two = [&](Tok k) {
      pos_ += 2;
      return Make(k, b, pos_);
    };
    char n = pos_ + 1 < src_.size() ? src_[pos_ + 1] : '\0';
    switch (c) {
      case '(':
      case '[':
      case '{':
        if (++paren_depth_ > limits_.max_nesting_depth) {
          Fail(b, fmt::format("brackets nested deeper than {} levels (limit max_nesting_depth)",
                              limits_.max_nesting_depth));
        }
        return one(c == '(' ? Tok::kLParen : c == '[' ? Tok::kLBracket : Tok::kLBrace);
      case ')':
      case ']':
      case '}':
        if (paren_depth_ > 0) --paren_depth_;
        return one(c == ')' ? Tok::kRParen : c == ']' ? Tok::kRBracket : Tok::kRBrace);
      case ',':
        return one(Tok::kComma);
      case ':':
        return one(Tok::kColon);
      case '.':
        return one(Tok::kDot);
      case ';':
        return one(Tok::kSemicolon);
      case '@':
        return one(Tok::kAt);
      case '+':
        return one(Tok::kPlus);
      case '*':
        return one(Tok::kStar);
      case '%':
        return one(Tok::kPercent);
      case '-':
        return n == '>' ? two(Tok::kArrow) : one(Tok::kMinus);
      case '/':
        return n == '/' ? two(Tok::kSlashSlash) : one(Tok::kSlash);
      case '<':
        return n == '=' ? two(Tok::kLe) : one(Tok::kLt);
      case '>':
        return n == '=' ? two(Tok::kGe) : one(Tok::kGt);
      case '=':
        return n == '=' ? two(Tok::kEqEq) : one(Tok::kAssign);
      case '!':
        if (n == '=') return two(Tok::kNe);
        break;
      default:
        break;
    }
    auto uc = static_cast<unsigned char>(c);
    if (uc >= 0x80) {
      Fail(b,
           fmt::format(
               "unexpected byte 0x{:02X} (non-ASCII text is only allowed in strings and comments)",
               uc));
    }
    if (uc < 0x20 || uc == 0x7f) Fail(b, fmt::format("unexpected control character 0x{:02X}", uc));
    Fail(b, fmt::format("unexpected character '{}'", c));
  }
}

Token Lexer::LexNumber(size_t b) {
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
    Fail(pos_, fmt::format("invalid number literal '{}'", src_.substr(b, pos_ + 1 - b)));
  }
  return Make(is_float ? Tok::kFloat : Tok::kInt, b, pos_);
}

Token Lexer::LexString(size_t b) {
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
  return Token{Tok::kString, src_.substr(b, pos_ - b), start_line, start_col};
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
