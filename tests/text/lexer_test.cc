// The lexer (ir/lexer.h) on its own: token kinds, spellings and positions for
// the inputs where its fast path (names and one-character tokens after blanks)
// hands over to the general one: a '.' that starts a number, '=' against '==',
// brackets at the nesting limit, implicit line joining, line starts, and the
// end of input with and without a final newline.

#include "ir/lexer.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "ir/error.h"

namespace cds::ir {
namespace {

struct Tk {
  Tok kind;
  std::string text;
  int32_t line;
  int32_t col;
  bool operator==(const Tk&) const = default;
};

void PrintTo(const Tk& t, std::ostream* os) {
  *os << TokName(t.kind) << " '" << t.text << "' " << t.line << ":" << t.col;
}

std::vector<Tk> LexAll(std::string_view src, int max_depth = 200) {
  Lexer lexer(src, InternFileName("lex.pyir"), 0, LexerLimits{max_depth});
  std::vector<Tk> out;
  while (true) {
    Token t = lexer.Next();
    out.push_back(Tk{t.kind, std::string(t.text), t.line, t.col});
    if (t.kind == Tok::kEof) return out;
  }
}

std::vector<Tok> Kinds(const std::vector<Tk>& tokens) {
  std::vector<Tok> kinds;
  for (const Tk& t : tokens) kinds.push_back(t.kind);
  return kinds;
}

TEST(LexerTest, NamesDotsAndNumbersWithPositions) {
  std::vector<Tk> want = {
      {Tok::kName, "x", 1, 1},         {Tok::kAssign, "=", 1, 3},    {Tok::kName, "pl", 1, 5},
      {Tok::kDot, ".", 1, 7},          {Tok::kName, "FP32", 1, 8},   {Tok::kDot, ".", 1, 12},
      {Tok::kName, "get_byte", 1, 13}, {Tok::kLParen, "(", 1, 21},   {Tok::kRParen, ")", 1, 22},
      {Tok::kStar, "*", 1, 24},        {Tok::kFloat, ".5", 1, 26},   {Tok::kPlus, "+", 1, 29},
      {Tok::kInt, "12", 1, 31},        {Tok::kNewline, "\n", 1, 33}, {Tok::kEof, "", 2, 1},
  };
  EXPECT_EQ(LexAll("x = pl.FP32.get_byte() * .5 + 12\n"), want);
}

TEST(LexerTest, AssignAgainstEqualAndTwoCharacterOperators) {
  EXPECT_EQ(Kinds(LexAll("a == b = c != d <= e >= f // g -> h < i > j\n")),
            (std::vector<Tok>{Tok::kName, Tok::kEqEq,       Tok::kName, Tok::kAssign, Tok::kName,
                              Tok::kNe,   Tok::kName,       Tok::kLe,   Tok::kName,   Tok::kGe,
                              Tok::kName, Tok::kSlashSlash, Tok::kName, Tok::kArrow,  Tok::kName,
                              Tok::kLt,   Tok::kName,       Tok::kGt,   Tok::kName,   Tok::kNewline,
                              Tok::kEof}));
  // '=' as the last byte of the input must not read past it.
  EXPECT_EQ(Kinds(LexAll("a =")),
            (std::vector<Tok>{Tok::kName, Tok::kAssign, Tok::kNewline, Tok::kEof}));
}

TEST(LexerTest, StringsOfBothQuotes) {
  std::vector<Tk> got = LexAll("f(\"a b\", 'c')\n");
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got[2], (Tk{Tok::kString, "\"a b\"", 1, 3}));
  EXPECT_EQ(got[4], (Tk{Tok::kString, "'c'", 1, 10}));
}

TEST(LexerTest, BracketsJoinLinesAndIndentationFollowsBlocks) {
  // The newline inside the call is no token; the closing bracket must bring the
  // depth back to zero for the next line's NEWLINE and INDENT.
  std::vector<Tk> got = LexAll("if a:\n    f(b,\n  c)\n    g\n");
  EXPECT_EQ(Kinds(got), (std::vector<Tok>{Tok::kName, Tok::kName, Tok::kColon, Tok::kNewline,
                                          Tok::kIndent, Tok::kName, Tok::kLParen, Tok::kName,
                                          Tok::kComma, Tok::kName, Tok::kRParen, Tok::kNewline,
                                          Tok::kName, Tok::kNewline, Tok::kDedent, Tok::kEof}));
  EXPECT_EQ(got[9], (Tk{Tok::kName, "c", 3, 3}));
  EXPECT_EQ(got[12], (Tk{Tok::kName, "g", 4, 5}));
}

TEST(LexerTest, BracketDepthLimitIsExact) {
  EXPECT_NO_THROW(LexAll("x = [[[1]]]\n", 3));
  try {
    LexAll("x = [[[[1]]]]\n", 3);
    FAIL() << "four nested brackets passed a limit of three";
  } catch (const ValueError& e) {
    EXPECT_EQ(e.span().line, 1);
    EXPECT_EQ(e.span().column, 8);
    EXPECT_NE(std::string(e.what()).find("nested deeper than 3 levels"), std::string::npos);
  }
}

TEST(LexerTest, EndOfInputWithoutNewline) {
  EXPECT_EQ(LexAll("abc"),
            (std::vector<Tk>{
                {Tok::kName, "abc", 1, 1}, {Tok::kNewline, "", 1, 4}, {Tok::kEof, "", 1, 4}}));
  EXPECT_EQ(Kinds(LexAll("f(x)   ")), (std::vector<Tok>{Tok::kName, Tok::kLParen, Tok::kName,
                                                        Tok::kRParen, Tok::kNewline, Tok::kEof}));
  EXPECT_EQ(Kinds(LexAll("if a:\n    b.c")),
            (std::vector<Tok>{Tok::kName, Tok::kName, Tok::kColon, Tok::kNewline, Tok::kIndent,
                              Tok::kName, Tok::kDot, Tok::kName, Tok::kNewline, Tok::kDedent,
                              Tok::kEof}));
}

// Indentation is measured eight spaces at a time, then one at a time: widths on
// either side of each multiple of eight must still open, keep and close blocks.
TEST(LexerTest, IndentationWidthsAcrossEightSpaceSteps) {
  std::string src;
  for (int width : {0, 7, 8, 9, 16, 17, 24}) src += std::string(width, ' ') + "a:\n";
  src += std::string(24, ' ') + "b\n" + std::string(17, ' ') + "c\n";
  std::vector<Tok> kinds = Kinds(LexAll(src));
  std::vector<Tok> want;
  for (int i = 0; i < 7; ++i) {
    if (i > 0) want.push_back(Tok::kIndent);
    want.insert(want.end(), {Tok::kName, Tok::kColon, Tok::kNewline});
  }
  // b at 24 keeps the last block; c at 17 closes one; the end closes the rest.
  want.insert(want.end(), {Tok::kName, Tok::kNewline, Tok::kDedent, Tok::kName, Tok::kNewline});
  for (int i = 0; i < 5; ++i) want.push_back(Tok::kDedent);
  want.push_back(Tok::kEof);
  EXPECT_EQ(kinds, want);
  // The column of a token after 17 spaces, and an unindent between two levels.
  EXPECT_EQ(LexAll(std::string(17, ' ') + "x\n")[1].col, 18);
  try {
    LexAll("a:\n" + std::string(16, ' ') + "b\n" + std::string(9, ' ') + "c\n");
    FAIL() << "no error for an unindent to 9 between 0 and 16";
  } catch (const ValueError& e) {
    EXPECT_EQ(e.span().column, 10);
  }
}

TEST(LexerTest, BadCharactersAreErrorsWithTheirColumn) {
  for (auto [src, col] : {std::pair{"a = $b\n", 5}, std::pair{"a!b\n", 2}, std::pair{"1x\n", 2}}) {
    try {
      LexAll(src);
      FAIL() << "no error for " << src;
    } catch (const ValueError& e) {
      EXPECT_EQ(e.span().column, col) << src;
    }
  }
}

}  // namespace
}  // namespace cds::ir
