// Any byte string gets an IR or a ValueError: never a crash, a hang or another
// exception. Inputs: mutations of printed programs (near-valid text reaches deep
// into the parser) and plain random bytes.

#include <random>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/text/random_program.h"

namespace cds::ir {
namespace {

// Returns "" on success or ValueError, the exception text otherwise.
std::string ParseOutcome(const std::string& text) {
  try {
    ParseOptions opt;
    opt.max_nesting_depth = 64;
    ParseProgram(text, opt);
    (void)PrintProgram;
  } catch (const ValueError&) {
  } catch (const std::exception& e) {
    return std::string("non-ValueError exception: ") + e.what();
  }
  return {};
}

std::string Mutate(std::string s, std::mt19937_64& rng) {
  static constexpr std::string_view kTokens[] = {"(",
                                                 ")",
                                                 "[",
                                                 "]",
                                                 "\n",
                                                 "    ",
                                                 ":",
                                                 "\"",
                                                 "'''",
                                                 "-",
                                                 "pl.",
                                                 "=",
                                                 "pl._dump.window_ref(\"x\")",
                                                 "#",
                                                 "\t",
                                                 "99999999999999999999",
                                                 ",",
                                                 "\\",
                                                 "not ",
                                                 "self.",
                                                 "\xe2\x82\xac",
                                                 std::string_view("\0", 1)};
  int n = std::uniform_int_distribution<int>(1, 6)(rng);
  for (int k = 0; k < n && !s.empty(); ++k) {
    size_t pos = std::uniform_int_distribution<size_t>(0, s.size() - 1)(rng);
    switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
      case 0:
        s.erase(pos, std::uniform_int_distribution<size_t>(1, 8)(rng));
        break;
      case 1:
        s.insert(pos,
                 kTokens[std::uniform_int_distribution<size_t>(0, std::size(kTokens) - 1)(rng)]);
        break;
      case 2:
        s[pos] = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
        break;
      case 3: {
        size_t len = std::uniform_int_distribution<size_t>(1, 40)(rng);
        s.insert(pos, s.substr(pos, len));
        break;
      }
      default:
        s.resize(pos);
        break;
    }
  }
  return s;
}

TEST(TextRobustness, MutatedProgramsNeverCrash) {
  std::mt19937_64 rng(12345);
  int parsed_ok = 0;
  for (int i = 0; i < 400; ++i) {
    std::string base = PrintProgram(testing::RandomProgram(static_cast<uint64_t>(i)));
    std::string m = Mutate(base, rng);
    std::string r = ParseOutcome(m);
    ASSERT_EQ(r, "") << m;
    try {
      ParseProgram(m);
      ++parsed_ok;
    } catch (const ValueError&) {
    }
  }
  // Some mutations (inside comments or strings, or benign) still parse.
  EXPECT_GT(parsed_ok, 0);
}

TEST(TextRobustness, RandomBytesNeverCrash) {
  std::mt19937_64 rng(999);
  for (int i = 0; i < 2000; ++i) {
    size_t len = std::uniform_int_distribution<size_t>(0, 200)(rng);
    std::string s(len, '\0');
    for (auto& c : s) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    ASSERT_EQ(ParseOutcome(s), "");
  }
}

TEST(TextRobustness, DeepNestingIsADiagnostic) {
  const std::string prefix =
      "@pl.program\nclass P:\n    @pl.function\n    def f(self):\n        x = ";
  for (const std::string& open :
       {std::string("("), std::string("["), std::string("-"), std::string("not ")}) {
    std::string s = prefix;
    for (int i = 0; i < 100000; ++i) s += open;
    s += "1\n";
    try {
      ParseProgram(s);
      FAIL() << "expected a nesting diagnostic for " << open;
    } catch (const ValueError& e) {
      EXPECT_NE(e.message().find("max_nesting_depth"), std::string::npos) << e.message();
    }
  }
  // Deep indentation.
  std::string s = "@pl.program\nclass P:\n    @pl.function\n    def f(self):\n";
  std::string ind = "        ";
  for (int i = 0; i < 500; ++i) {
    s += ind + "if True:\n";
    ind += " ";
  }
  s += ind + "pass\n";
  try {
    ParseProgram(s);
    FAIL() << "expected a nesting diagnostic";
  } catch (const ValueError& e) {
    EXPECT_NE(e.message().find("max_nesting_depth"), std::string::npos) << e.message();
  }
}

TEST(TextRobustness, IntegerLimits) {
  auto body = [](const std::string& v) {
    return "@pl.program\nclass P:\n    @pl.function\n    def f(self):\n        x = " + v + "\n";
  };
  EXPECT_NO_THROW(ParseProgram(body("9223372036854775807")));
  EXPECT_NO_THROW(ParseProgram(body("-9223372036854775808")));
  EXPECT_THROW(ParseProgram(body("9223372036854775808")), ValueError);
  EXPECT_THROW(ParseProgram(body("-9223372036854775809")), ValueError);
  EXPECT_THROW(ParseProgram(body(std::string(5000, '9'))), ValueError);
  // Literals of up to 18 digits skip the overflow checks: the values on either side
  // of that length must come out exact.
  for (const std::string v : {"999999999999999999", "-999999999999999999", "1000000000000000000",
                              "-1000000000000000000", "0", "-0", "007"}) {
    const std::string text = PrintProgram(ParseProgram(body(v)));
    const std::string want = v == "-0" ? "= 0\n" : v == "007" ? "= 7\n" : "= " + v + "\n";
    EXPECT_NE(text.find(want), std::string::npos) << v << " printed as:\n" << text;
  }
}

}  // namespace
}  // namespace cds::ir
