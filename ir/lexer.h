#pragma once

// The hand-written lexer of the text format: Python's token structure (NEWLINE,
// INDENT, DEDENT, implicit line joining inside brackets) for the DSL subset.
//
// Tokens are string_views into the source: lexing allocates nothing per token.
// The lexer is a plain value: copying it is a checkpoint the parser can resume
// from later (function bodies parsed out of order, window sizes parsed when
// their base is bound).

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include <absl/container/inlined_vector.h>

#include "ir/span.h"

namespace cds::ir {

enum class Tok : uint8_t {
  kEof,
  kNewline,
  kIndent,
  kDedent,
  kName,
  kInt,
  kFloat,
  kString,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kComma,
  kColon,
  kDot,
  kAssign,
  kArrow,
  kAt,
  kSemicolon,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kSlashSlash,
  kPercent,
  kLt,
  kLe,
  kEqEq,
  kNe,
  kGt,
  kGe,
};

std::string_view TokName(Tok t);  // for messages: "end of line", "'('"

struct Token {
  Tok kind = Tok::kEof;
  std::string_view text;  // raw spelling (strings keep their quotes)
  int32_t line = 0;
  int32_t col = 0;
};

struct LexerLimits {
  int max_nesting_depth = 200;
};

class Lexer {
 public:
  Lexer(std::string_view source, FileId file, int line_offset, LexerLimits limits);

  // k < kLookahead tokens of lookahead.
  static constexpr int kLookahead = 8;  // a power of two
  static_assert((kLookahead & (kLookahead - 1)) == 0);
  const Token& Peek(int k = 0) {
    while (count_ <= k) Fill();
    return buf_[(head_ + k) & (kLookahead - 1)];
  }
  Token Next() {
    if (count_ == 0) Fill();
    Token t = buf_[head_];
    head_ = (head_ + 1) & (kLookahead - 1);
    --count_;
    return t;
  }

  // Consumes the rest of `depth` nested indented blocks whose INDENTs were
  // consumed, up to and including the outermost one's DEDENT. Same tokens and
  // errors as calling Next() that long; `eof` receives the end-of-input token if
  // the input ends first.
  bool SkipBlock(Token* eof, int depth = 1);

  // The indented block whose INDENT was just returned after `newline` (the end of
  // its header line), untokenized: a
  // host SubWorker's body, plain Python the format does not take (f-strings,
  // `raise`, operators it lacks). Python's line structure still decides where the
  // block ends (brackets and strings may span lines). `text` runs from the block's
  // first line of code, or a comment before it, to the end of its last line of code
  // or of a comment after it, counting only comments indented as deep as the block;
  // the next token is the DEDENT that closes the block.
  struct RawBlock {
    std::string_view text;
    int32_t line = 0;    // of the first line of `text`
    int32_t indent = 0;  // columns of the block's indentation
  };
  RawBlock TakeRawBlock(const Token& newline);

  Span SpanOf(const Token& t) const { return Span{file_, t.line, t.col}; }

  // A string token's text between its quotes, escapes as written.
  static std::string_view StringBody(std::string_view raw);
  // Decodes a string token's escapes (the token as returned, quotes included).
  static std::string DecodeString(std::string_view raw);

 private:
  void Fill() {
    Lex(buf_[(head_ + count_) & (kLookahead - 1)]);
    ++count_;
  }
  // Writes the next token in place, into the lookahead buffer (a Token returned
  // by value and copied there stalls on store forwarding).
  void Lex(Token& out);
  bool LexCommon(Token& out, size_t p);
  void LexRest(Token& out);
  void Set(Token& out, Tok k, size_t begin, size_t end) const {
    out.kind = k;
    out.text = std::string_view(src_.data() + begin, end - begin);
    out.line = line_;
    out.col = ColOf(begin);
  }
  [[noreturn]] void Fail(size_t at, const std::string& msg) const;
  [[noreturn]] void FailAt(int32_t line, size_t line_start, size_t at,
                           const std::string& msg) const;
  [[noreturn]] void BadChar(size_t at) const;
  void RejectCrLineEndings() const;
  // The length of the UTF-8 character at `at`, on line `line` (starting at
  // `line_start`); a byte that starts none is an error ("... in <where>" unless
  // `where` is empty).
  size_t Utf8Length(size_t at, int32_t line, size_t line_start, std::string_view where) const;
  // Rejects bytes of [begin, end) that are not UTF-8, as Utf8Length does.
  void CheckUtf8(size_t begin, size_t end, int32_t line, size_t line_start,
                 std::string_view where) const;
  // The position of the next '\n' from `p` on, or the end of the source.
  size_t LineEnd(size_t p) const;
  // Past the string literal whose opening quote is at `p`; `line` and `line_start`
  // follow the line breaks inside it. Shared by the tokens and TakeRawBlock.
  size_t ScanString(size_t p, int32_t& line, size_t& line_start, std::string_view where) const;
  int32_t ColOf(size_t at) const { return static_cast<int32_t>(at - line_start_) + 1; }
  bool LexIndentation(Token& out);  // true when it produced a token
  void LexString(Token& out, size_t begin);
  void LexNumber(Token& out, size_t begin);

  std::string_view src_;
  FileId file_;
  LexerLimits limits_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int32_t line_ = 1;
  int paren_depth_ = 0;
  int pending_dedents_ = 0;
  bool at_line_start_ = true;
  bool line_has_token_ = false;                 // a NEWLINE is due before the next line / EOF
  absl::InlinedVector<int32_t, 8> indents_{0};  // in place: parsers copy lexers to re-read

  std::array<Token, kLookahead> buf_{};
  int head_ = 0;
  int count_ = 0;
};

// A string against a literal: the length is a constant, so the comparison is a
// few inlined loads. A loop, not memcmp: sanitizer builds keep memcmp as a call
// into their interceptor (and libFuzzer's comparison hook).
template <size_t N>
inline bool TextIs(std::string_view s, const char (&lit)[N]) {
  if (s.size() != N - 1) return false;
  for (size_t i = 0; i + 1 < N; ++i)
    if (s[i] != lit[i]) return false;
  return true;
}

// Python's keywords (the 35 of Python 3.11's keyword.kwlist): the parser rejects
// them as names, the printer never gives one as a name. The PyPTO bridge's exporter
// avoids the same names (bridge/pypto/cds_pypto/export.py; tests/pypto compares).
inline constexpr std::string_view kPythonKeywords[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

inline bool IsKeyword(std::string_view s) {
  return std::find(std::begin(kPythonKeywords), std::end(kPythonKeywords), s) !=
         std::end(kPythonKeywords);
}

}  // namespace cds::ir
