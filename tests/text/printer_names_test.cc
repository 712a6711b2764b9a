// How the printer names variables: in the order their definitions appear in the
// text, even where the text mentions a variable before defining it (docs/ir.md,
// "The printer").

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/op_registry.h"
#include "tests/text/roundtrip_util.h"

namespace cds::ir {
namespace {

// A comm domain's slots name windows whose bases the scope's body assigns: the
// header mentions the second `buf` first, but the first definition keeps the
// hint and the second gets `_1`.
TEST(PrinterNames, FollowDefinitionsNotFirstMentions) {
  VarPtr first = MakeVar("buf", PtrType::Get());
  VarPtr second = MakeVar("buf", PtrType::Get());
  auto first_window = MakeNode<WindowBuffer>(first, Int(64), false, false);
  auto second_window = MakeNode<WindowBuffer>(second, Int(32), false, false);
  auto alloc = [](int64_t size) {
    return MakeOpCall(ops::kAllocWindowBuffer, {Int(size)}, {{"name", std::string("buf")}});
  };
  auto scope = MakeNode<CommDomainScopeStmt>(
      "comm_d0", DeviceSet::All(), std::vector<WindowBufferPtr>{second_window, first_window},
      KwargList{}, Seq({Assign(first, alloc(64)), Assign(second, alloc(32))}));
  auto host = MakeNode<Function>("host_orch", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                                 std::vector<TypePtr>{}, Seq({scope}), FunctionType::kOpaque,
                                 Level::kHost, Role::kOrchestrator);
  ProgramPtr p = MakeNode<Program>("P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{host});
  EXPECT_TRUE(testing::RoundTrips(p));
  // Written by hand from the naming rule and the pl._dump forms of docs/text-format.md.
  const std::string expected =
      "@pl.program\n"
      "class P:\n"
      "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
      "    def host_orch(self):\n"
      "        pl._dump.window_buffer(\"buf_1_window\", base=\"buf_1\", size=32, "
      "load_from_host=False, store_to_host=False)\n"
      "        pl._dump.window_buffer(\"buf_window\", base=\"buf\", size=64, "
      "load_from_host=False, store_to_host=False)\n"
      "        with pl._dump.comm_domain(name=\"comm_d0\", devices=\"all\", "
      "slots=[\"buf_1_window\", \"buf_window\"], attrs={}):\n"
      "            buf: pl.Ptr = pld.tensor.alloc_window_buffer(64)\n"
      "            buf_1: pl.Ptr = pl._dump.alloc_window_buffer(32, name=\"buf\")\n";
  EXPECT_EQ(PrintProgram(p), expected);
}

// A hint the text could not read back as a variable gets a trailing `_`: Python's
// keywords (the 35 of Python 3.11's keyword.kwlist) and the names the text format
// reserves for itself. A hint that only starts like one keeps its name.
TEST(PrinterNames, ReservedHintsGetATrailingUnderscore) {
  const std::vector<std::string> reserved = {
      "False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
      "while",   "with",     "yield",    "pl",     "pld",  "self"};
  // None of these is a reserved name plus `_`, which a reserved hint prints as.
  const std::vector<std::string> plain = {"iffy", "classes", "selfish", "pls", "pld2", "Nones"};
  std::vector<StmtPtr> body;
  for (const auto& names : {reserved, plain}) {
    for (const auto& name : names)
      body.push_back(Assign(MakeVar(name, ScalarTy(DataType::kInt64)), Int(1)));
  }
  auto host = MakeNode<Function>("host_orch", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                                 std::vector<TypePtr>{}, Seq(body), FunctionType::kOpaque,
                                 Level::kHost, Role::kOrchestrator);
  ProgramPtr p = MakeNode<Program>("P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{host});
  EXPECT_TRUE(testing::RoundTrips(p));
  const std::string text = PrintProgram(p);
  for (const auto& name : reserved) {
    EXPECT_NE(text.find("\n        " + name + "_: "), std::string::npos) << name << "\n" << text;
    EXPECT_EQ(text.find("\n        " + name + ": "), std::string::npos) << name << "\n" << text;
  }
  for (const auto& name : plain) {
    EXPECT_NE(text.find("\n        " + name + ": "), std::string::npos) << name << "\n" << text;
  }
}

}  // namespace
}  // namespace cds::ir
