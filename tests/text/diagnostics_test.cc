// How diagnostics quote user text: source lines cut to kMaxEchoColumns around the
// caret, tokens cut at kMaxEchoColumns, non-printable bytes escaped, a leading
// byte-order mark dropped, and the caret under the character it points at.

#include "ir/diagnostics.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace cds::ir {
namespace {

// The two lines FormatDiagnostic writes after the message line.
struct Shown {
  std::string line;
  std::string caret;
};

Shown Show(std::string_view source, int32_t line, int32_t column) {
  const std::string out =
      FormatDiagnostic("error", Span{InternFileName("d.pyir"), line, column}, "m", source);
  const size_t a = out.find('\n');
  const size_t b = out.find('\n', a + 1);
  const size_t c = out.find('\n', b + 1);
  EXPECT_NE(c, std::string::npos) << out;
  EXPECT_EQ(c + 1, out.size()) << out;
  return Shown{out.substr(a + 1, b - a - 1), out.substr(b + 1, c - b - 1)};
}

size_t CaretColumn(const Shown& s) {
  EXPECT_EQ(s.caret.back(), '^');
  return s.caret.size() - 1;
}

TEST(Diagnostics, ShortLineIsShownWhole) {
  const Shown s = Show("x = 1\n    y = nope\n", 2, 9);
  EXPECT_EQ(s.line, "    y = nope");
  EXPECT_EQ(s.caret, "        ^");
}

TEST(Diagnostics, LongLineIsCutAroundTheCaret) {
  std::string line(100000, 'a');
  line[50000] = 'Q';
  const Shown s = Show(line, 1, 50001);
  EXPECT_EQ(s.line.size(), kMaxEchoColumns);
  EXPECT_EQ(s.line.substr(0, 3), "...");
  EXPECT_EQ(s.line.substr(s.line.size() - 3), "...");
  ASSERT_LT(CaretColumn(s), s.line.size());
  EXPECT_EQ(s.line[CaretColumn(s)], 'Q');
  // Centred: as much before the caret as after it, give or take one.
  const size_t before = CaretColumn(s) - 3, after = s.line.size() - 3 - CaretColumn(s) - 1;
  EXPECT_LE(before > after ? before - after : after - before, 1u);
}

TEST(Diagnostics, CaretNearTheStartKeepsTheStart) {
  std::string line(5000, 'b');
  line[2] = 'Q';
  const Shown s = Show(line, 1, 3);
  EXPECT_EQ(s.line.size(), kMaxEchoColumns);
  EXPECT_EQ(s.line.substr(0, 3), "bbQ");
  EXPECT_EQ(s.line.substr(s.line.size() - 3), "...");
  EXPECT_EQ(CaretColumn(s), 2u);
}

TEST(Diagnostics, CaretAtTheEndKeepsTheEnd) {
  std::string line(5000, 'c');
  line.back() = 'Q';
  const Shown s = Show(line + "\nnext line\n", 1, 5000);
  EXPECT_EQ(s.line.size(), kMaxEchoColumns);
  EXPECT_EQ(s.line.substr(0, 3), "...");
  EXPECT_EQ(s.line.back(), 'Q');
  EXPECT_EQ(CaretColumn(s), s.line.size() - 1);
}

TEST(Diagnostics, CaretPastTheEndOfTheLine) {
  const Shown s = Show("abc\n", 1, 10);
  EXPECT_EQ(s.line, "abc");
  EXPECT_EQ(s.caret, "   ^");
}

TEST(Diagnostics, NonPrintableBytesAreEscapedAndTheCaretFollows) {
  const Shown s = Show(std::string_view("a\x01\x7fQ", 4), 1, 4);
  EXPECT_EQ(s.line, "a\\x01\\x7FQ");
  EXPECT_EQ(s.line[CaretColumn(s)], 'Q');
}

TEST(Diagnostics, Utf8IsKeptAndInvalidBytesAreEscaped) {
  // Two characters of valid UTF-8 (e-acute, a CJK ideograph), then a lone
  // continuation byte, a truncated sequence, an overlong form and a surrogate.
  const Shown s = Show("\xC3\xA9\xE4\xB8\xAD\x80\xE4\xB8 \xC0\xAF\xED\xA0\x80Q", 1, 15);
  EXPECT_EQ(s.line, "\xC3\xA9\xE4\xB8\xAD\\x80\\xE4\\xB8 \\xC0\\xAF\\xED\\xA0\\x80Q");
  // One column per valid character, four per escaped byte.
  EXPECT_EQ(CaretColumn(s), 2u + 4 * 3 + 1 + 4 * 5);
}

TEST(Diagnostics, TabsStayInTheCaretLine) {
  const Shown s = Show("\tx = \tq\n", 1, 7);
  EXPECT_EQ(s.line, "\tx = \tq");
  EXPECT_EQ(s.caret, "\t    \t^");
}

TEST(Diagnostics, EscapedBytesCountFourColumnsWhenCutting) {
  std::string line(3000, '\x01');
  line[1500] = 'Q';
  const Shown s = Show(line, 1, 1501);
  EXPECT_LE(s.line.size(), kMaxEchoColumns);
  EXPECT_GE(s.line.size(), kMaxEchoColumns - 3);
  EXPECT_EQ(s.line[CaretColumn(s)], 'Q');
}

TEST(Diagnostics, ByteOrderMarkOnTheFirstLineIsNotShown) {
  const Shown s = Show("\xEF\xBB\xBFx = q\n", 1, 5);
  EXPECT_EQ(s.line, "x = q");
  EXPECT_EQ(s.caret, "    ^");
}

TEST(Diagnostics, EchoTextCutsAndEscapes) {
  EXPECT_EQ(EchoText("name"), "name");
  EXPECT_EQ(EchoText(std::string_view("a\0b\n", 4)), "a\\x00b\\x0A");
  EXPECT_EQ(EchoText("\xEF\xBB\xBF"), "\\xEF\\xBB\\xBF");
  const std::string long_name(100000, 'n');
  const std::string echoed = EchoText(long_name);
  EXPECT_EQ(echoed, std::string(kMaxEchoColumns - 3, 'n') + "...");
  EXPECT_EQ(EchoText(std::string(kMaxEchoColumns, 'n')), std::string(kMaxEchoColumns, 'n'));
  // An escape is never split by the cut.
  const std::string bytes(1000, '\x02');
  const std::string e = EchoText(bytes);
  EXPECT_LE(e.size(), kMaxEchoColumns);
  EXPECT_EQ(e.substr(e.size() - 7), "\\x02...");
}

TEST(Diagnostics, MessagesAreBounded) {
  const std::string message = "bad '" + std::string(50000, 'z') + "'\n";
  const std::string out = FormatDiagnostic("error", Span{}, message, "");
  EXPECT_LE(out.size(), kMaxMessageColumns + 40);
  EXPECT_EQ(FormatDiagnostic("error", Span{}, "two\nlines", ""),
            "<unknown>:0:0: error: two\\x0Alines\n");
  const ValueError error(message, Span{});
  EXPECT_LE(error.Format().size(), kMaxMessageColumns + 40);
}

TEST(Diagnostics, Utf8CharLength) {
  EXPECT_EQ(Utf8CharLength("a", 0), 1u);
  EXPECT_EQ(Utf8CharLength("\xC3\xA9", 0), 2u);
  EXPECT_EQ(Utf8CharLength("\xE2\x82\xAC", 0), 3u);
  EXPECT_EQ(Utf8CharLength("\xF0\x9F\x98\x80", 0), 4u);
  EXPECT_EQ(Utf8CharLength("\xC1\xBF", 0), 0u);          // overlong
  EXPECT_EQ(Utf8CharLength("\xE0\x9F\xBF", 0), 0u);      // overlong
  EXPECT_EQ(Utf8CharLength("\xED\xA0\x80", 0), 0u);      // surrogate
  EXPECT_EQ(Utf8CharLength("\xF4\x90\x80\x80", 0), 0u);  // above U+10FFFF
  EXPECT_EQ(Utf8CharLength("\xE2\x82", 0), 0u);          // truncated
  EXPECT_EQ(Utf8CharLength("\x80", 0), 0u);              // continuation byte
  EXPECT_EQ(Utf8CharLength("\xFF", 0), 0u);
}

}  // namespace
}  // namespace cds::ir
