// cds-opt's driver: split input, line numbers, and errors thrown by the
// processing hook flowing into the same reporting and --verify-diagnostics.

#include "tools/cds-opt/opt_driver.h"

#include <sstream>

#include <gtest/gtest.h>

namespace cds::tools {
namespace {

const char* kProgram =
    "@pl.program\n"
    "class P:\n"
    "    @pl.function\n"
    "    def f(self):\n"
    "        x = 1\n";

TEST(OptDriver, SplitKeepsWholeFileLineNumbers) {
  std::string text = std::string(kProgram) + "# -----\n" + kProgram;
  auto chunks = SplitInput(text, true);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].line_offset, 0);
  EXPECT_EQ(chunks[1].line_offset, 6);
}

TEST(OptDriver, HookErrorIsReported) {
  OptOptions opt;
  opt.input = "in.pyir";
  auto hook = [](const ir::ProgramPtr& p, const OptOptions&) -> ir::ProgramPtr {
    auto f = p->FindFunction("f");
    throw ValueError("pass rejected this", f->span());
  };
  std::ostringstream out, err;
  EXPECT_EQ(RunOpt(kProgram, opt, hook, out, err), 1);
  EXPECT_EQ(err.str(), "in.pyir:4:5: error: pass rejected this\n    def f(self):\n    ^\n");
}

TEST(OptDriver, HookErrorMatchesExpectation) {
  std::string text = std::string(kProgram, 0, std::string(kProgram).find("    def")) +
                     "    # expected-error@+1 {{pass rejected}}\n"
                     "    def f(self):\n"
                     "        x = 1\n";
  OptOptions opt;
  opt.verify_diagnostics = true;
  auto hook = [](const ir::ProgramPtr& p, const OptOptions&) -> ir::ProgramPtr {
    throw ValueError("pass rejected this", p->FindFunction("f")->span());
  };
  std::ostringstream out, err;
  EXPECT_EQ(RunOpt(text, opt, hook, out, err), 0) << err.str();
  // Without the hook the expectation is unmet.
  std::ostringstream out2, err2;
  EXPECT_EQ(RunOpt(text, opt, ProcessProgram, out2, err2), 1);
  EXPECT_NE(err2.str().find("was not produced"), std::string::npos);
}

}  // namespace
}  // namespace cds::tools
