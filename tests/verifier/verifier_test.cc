#include "verifier/verifier.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/structural_equal.h"
#include "tests/verifier/fixtures.h"
#include "tests/verifier/mutators.h"
#include "verifier/host_analysis.h"
#include "verifier/ir_rewrite.h"
#include "verifier/relational.h"

namespace cds::verify::testing {
namespace {

using namespace cds::ir;

VerifyOptions NoRoundTrip() {
  VerifyOptions o;
  o.round_trip = false;
  return o;
}

std::string Codes(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const auto& d : diags) s += d.code + " ";
  return s;
}

TEST(VerifierChecks, CodesAreUniqueSequentialAndKebab) {
  const auto& checks = AllChecks();
  ASSERT_EQ(checks.size(), static_cast<size_t>(CheckId::kCount));
  std::set<std::string_view> names;
  for (size_t i = 0; i < checks.size(); ++i) {
    EXPECT_EQ(checks[i].code, fmt::format("CDS-V{:03}", i + 1));
    EXPECT_TRUE(names.insert(checks[i].name).second) << checks[i].name;
    for (char c : checks[i].name) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '-') << checks[i].name;
    EXPECT_FALSE(checks[i].description.empty());
  }
}

// docs/verifier.md's table of checks names every check of checks.def, in code
// order, with its name: a check added without a row, or a row left for a check
// that changed its name, fails here.
TEST(VerifierChecks, DocsListEveryCheckInOrder) {
  const std::string path = std::string(CDS_SOURCE_DIR) + "/docs/verifier.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::vector<std::string> rows;
  const std::regex row(R"(^\| (CDS-V[0-9]+) \| ([a-z-]+)( \(note\))? \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows.push_back(m[1].str() + " " + m[2].str());
  }
  std::vector<std::string> checks;
  for (const auto& c : AllChecks()) checks.push_back(fmt::format("{} {}", c.code, c.name));
  EXPECT_EQ(rows, checks) << path;
}

TEST(VerifierChecks, FormatIsFileLineColErrorCodeName) {
  auto file = InternFileName("f.pyir");
  Diagnostic d =
      MakeDiagnostic(CheckId::kWindowBufferNotShared, "view 'v2' of alloc 'buf'", Span{file, 3, 5});
  EXPECT_EQ(FormatDiagnostics({d}),
            "f.pyir:3:5: error: [CDS-V003 window-buffer-not-shared] view 'v2' of alloc 'buf'\n");
}

TEST(VerifierFixtures, CorrectOutputsAreClean) {
  for (const auto& f : AllFixtures()) {
    ASSERT_TRUE(f.after) << f.name;
    auto diags = VerifyProgram(f.after, NoRoundTrip());
    EXPECT_TRUE(diags.empty()) << f.name << ":\n" << FormatDiagnostics(diags);
  }
}

TEST(VerifierFixtures, RelationalAcceptsInputOutputPairs) {
  for (const auto& f : AllFixtures()) {
    auto diags = VerifyAll(f.before, f.after, NoRoundTrip());
    EXPECT_TRUE(diags.empty()) << f.name << ":\n" << FormatDiagnostics(diags);
    // Materializing again leaves an already wrapped body alone: output against itself.
    EXPECT_TRUE(VerifyRelational(f.after, f.after).empty()) << f.name;
  }
}

TEST(VerifierFixtures, UnmaterializedInputIsRejected) {
  for (const auto& f : AllFixtures()) {
    auto diags = VerifyProgram(f.before, NoRoundTrip());
    EXPECT_TRUE(HasCode(diags, "CDS-V008")) << f.name << ": " << Codes(diags);
    EXPECT_TRUE(HasCode(diags, "CDS-V001")) << f.name << ": " << Codes(diags);
  }
}

TEST(VerifierMutations, RegistryIsLargeEnoughAndUsesKnownCodes) {
  EXPECT_GE(AllMutators().size(), 15u);
  std::set<std::string> codes;
  for (const auto& c : AllChecks()) codes.insert(std::string(c.code));
  for (const auto& m : AllMutators()) EXPECT_TRUE(codes.count(m.code)) << m.name;
}

TEST(VerifierMutations, EveryMutationIsReportedWithItsCode) {
  std::map<std::string, int> applied;
  for (const auto& f : AllFixtures()) {
    for (const Mutator* m : ApplicableMutators(f.after)) {
      auto mutated = m->apply(f.after);
      ASSERT_TRUE(mutated.has_value());
      ASSERT_NE(mutated->get(), f.after.get());
      // Default options: the round trip runs too and must not mask the mutation.
      auto diags = VerifyProgram(*mutated);
      EXPECT_TRUE(HasCode(diags, m->code))
          << f.name << " / " << m->name << ": expected " << m->code << ", got:\n"
          << FormatDiagnostics(diags);
      ++applied[m->name];
    }
  }
  for (const auto& m : AllMutators()) EXPECT_GT(applied[m.name], 0) << m.name << " never applied";
}

TEST(VerifierMutations, EveryViolationIsReportedNotJustTheFirst) {
  auto fixtures = AllFixtures();
  const auto& f = fixtures[1];  // subsets: three scopes
  const Mutator* rename = nullptr;
  const Mutator* flags = nullptr;
  const Mutator* param = nullptr;
  for (const auto& m : AllMutators()) {
    if (m.name == "rename-scope") rename = &m;
    if (m.name == "load-from-host") flags = &m;
    if (m.name == "chip-param-back-reference") param = &m;
  }
  ProgramPtr p = *rename->apply(f.after);
  p = *flags->apply(p);
  p = *param->apply(p);
  auto diags = VerifyProgram(p, NoRoundTrip());
  EXPECT_TRUE(HasCode(diags, "CDS-V013")) << Codes(diags);
  EXPECT_TRUE(HasCode(diags, "CDS-V005")) << Codes(diags);
  EXPECT_TRUE(HasCode(diags, "CDS-V007")) << Codes(diags);
}

TEST(VerifierMutations, DiagnosticsCarrySpansAndNames) {
  auto fixtures = AllFixtures();
  for (const auto& m : AllMutators()) {
    if (m.name != "duplicate-slot") continue;
    auto p = m.apply(fixtures[1].after);
    ASSERT_TRUE(p);
    auto diags = VerifyProgram(*p, NoRoundTrip());
    bool found = false;
    for (const auto& d : diags) {
      if (d.code != "CDS-V009") continue;
      found = true;
      EXPECT_TRUE(d.span.IsKnown());
      EXPECT_EQ(d.span.FileName(), "subsets.pyir");
      EXPECT_NE(d.message.find("'a'"), std::string::npos) << d.message;
      EXPECT_NE(d.message.find("comm_d1"), std::string::npos) << d.message;
    }
    EXPECT_TRUE(found) << Codes(diags);
  }
}

// ---------------------------------------------------------------------------
// Relational mode.

ProgramPtr ReplaceFn(const ProgramPtr& p, const std::string& name, FunctionPtr fn) {
  auto fns = p->functions;
  for (auto& f : fns) {
    if (f->name == name) f = fn;
  }
  return ir::MakeNode<Program>(p->name, p->dynamic_dims, std::move(fns));
}

TEST(VerifierRelational, ChangedChipFunctionIsReportedWithPath) {
  auto f = AllFixtures()[0];
  auto chip = f.after->FindFunction("chip_orch");
  auto changed = ir::MakeNode<Function>(*chip);
  changed->body = Seq({Return({Int(7)})});
  auto diags = VerifyRelational(f.before, ReplaceFn(f.after, "chip_orch", changed));
  ASSERT_TRUE(HasCode(diags, "CDS-V027")) << Codes(diags);
  EXPECT_NE(diags[0].message.find("body.stmts[0]"), std::string::npos) << diags[0].message;
}

TEST(VerifierRelational, ChangedHostStatementIsReported) {
  auto f = AllFixtures()[0];
  auto host = f.after->FindFunction("host_orch");
  // Replace the final `return 0` inside the scope chain with `return 1`.
  const auto& scope =
      static_cast<const CommDomainScopeStmt&>(*static_cast<const SeqStmts&>(*host->body).stmts[0]);
  auto inner = static_cast<const SeqStmts&>(*scope.body).stmts;
  inner.back() = Return({Int(1)});
  auto new_scope = ir::MakeNode<CommDomainScopeStmt>(scope);
  new_scope->body = Seq(inner);
  auto new_host = ir::MakeNode<Function>(*host);
  new_host->body = Seq({new_scope});
  auto diags = VerifyRelational(f.before, ReplaceFn(f.after, "host_orch", new_host));
  ASSERT_TRUE(HasCode(diags, "CDS-V028")) << Codes(diags);
  EXPECT_NE(diags[0].message.find("host_orch"), std::string::npos);
}

TEST(VerifierRelational, MissingOrExtraFunctionIsReported) {
  auto f = AllFixtures()[0];
  std::vector<FunctionPtr> fns;
  for (const auto& fn : f.after->functions) {
    if (fn->name != "chip_orch") fns.push_back(fn);
  }
  auto after = ir::MakeNode<Program>(f.after->name, f.after->dynamic_dims, fns);
  EXPECT_TRUE(HasCode(VerifyRelational(f.before, after), "CDS-V026"));
  EXPECT_TRUE(HasCode(VerifyRelational(after, f.after), "CDS-V026"));
}

TEST(VerifierRelational, WrongSynthesizedSignalSizeIsAHostDifference) {
  // The allreduce fixture with the synthesized buffer one byte too large: the
  // triple no longer matches, so the output differs from its input.
  auto fixtures = AllFixtures();
  const auto& f = fixtures[3];
  for (const auto& m : AllMutators()) {
    if (m.name != "remove-allreduce-signal") continue;
    auto p = m.apply(f.after);
    ASSERT_TRUE(p);
    // Removing the user's explicit signal changes the host body relative to the input.
    EXPECT_TRUE(HasCode(VerifyRelational(f.before, *p), "CDS-V028"));
  }
  // The normalized output equals the normalized input.
  auto host_before = NormalizeHostOrchestrator(f.before->FindFunction("host_orch"));
  auto host_after = NormalizeHostOrchestrator(f.after->FindFunction("host_orch"));
  EXPECT_TRUE(StructuralEqual(host_before, host_after))
      << StructuralEqualWhere(host_before, host_after).path;
}

// Skipping back-references must give the verdict of comparing after erasing them
// (what relational mode relies on), and must not hide any other difference.
TEST(VerifierRelational, IgnoringWindowBuffersEqualsComparingErasedPrograms) {
  const EqualOptions kIgnoreWindowBuffers{.ignore_window_buffers = true};
  auto fixtures = AllFixtures();
  for (const auto& f : fixtures) {
    WindowBufferEraser eraser;
    auto erased = eraser.MutateAs(f.after);
    EXPECT_FALSE(StructuralEqual(f.after, erased)) << f.name;
    EXPECT_TRUE(StructuralEqual(f.after, erased, kIgnoreWindowBuffers)) << f.name;
    for (const Mutator* m : ApplicableMutators(f.after)) {
      auto p = *m->apply(f.after);
      WindowBufferEraser e1, e2;
      EXPECT_EQ(StructuralEqual(f.after, p, kIgnoreWindowBuffers),
                StructuralEqual(e1.MutateAs(f.after), e2.MutateAs(p)))
          << f.name << " / " << m->name;
    }
  }
  for (size_t i = 0; i + 1 < fixtures.size(); ++i) {
    EXPECT_FALSE(StructuralEqual(fixtures[i].after, fixtures[i + 1].after, kIgnoreWindowBuffers));
  }
}

// ---------------------------------------------------------------------------
// Coverage rules, on their own.

Descriptor LoopOf(ExprPtr start, ExprPtr stop, ExprPtr step, const BoundEnv& env = {}) {
  ForStmt loop(MakeVar("r", ScalarTy(DataType::kIndex)), start, stop, step, Seq({}));
  return LoopDescriptor(loop, env);
}

TEST(VerifierCoverage, LoopDescriptors) {
  ExprPtr ws = MakeOpCall(ops::kWorldSize, {});
  EXPECT_TRUE(LoopOf(Int(0), ws, Int(1)).set.all());
  EXPECT_FALSE(LoopOf(Int(1), ws, Int(1)).ok);  // world_size from 1: not expressible
  EXPECT_FALSE(LoopOf(Int(0), ws, Int(2)).ok);
  EXPECT_FALSE(LoopOf(Int(0), Int(4), Int(2)).ok);
  auto d = LoopOf(Int(2), Int(5), Int(1));
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.set, Devices::FromScope(DeviceSet{false, {2, 3, 4}}));
  auto empty = LoopOf(Int(0), Int(0), Int(1));
  ASSERT_TRUE(empty.ok);
  EXPECT_TRUE(empty.set.Empty());
  EXPECT_FALSE(empty.set.all());
  VarPtr n = MakeVar("n", ScalarTy(DataType::kIndex));
  BoundEnv env{{n.get(), {BoundKind::kWorldSize, 0}}};
  EXPECT_TRUE(LoopOf(Int(0), n, Int(1), env).set.all());
  EXPECT_FALSE(LoopOf(Int(0), n, Int(1)).ok);  // n not bound to a recognised form
  // Device ids are never negative, also through a range start; the pass refuses
  // ranges of more than 65536 devices. A range is one run, never expanded.
  EXPECT_FALSE(LoopOf(Int(-1), Int(2), Int(1)).ok);
  EXPECT_TRUE(LoopOf(Int(-1), Int(-1), Int(1)).ok);  // empty: nothing negative is covered
  EXPECT_FALSE(LoopOf(Int(0), Int(65537), Int(1)).ok);
  EXPECT_FALSE(LoopOf(Int(0), Int(int64_t{1} << 40), Int(1)).ok);
  auto widest = LoopOf(Int(0), Int(65536), Int(1));
  ASSERT_TRUE(widest.ok);
  EXPECT_EQ(widest.set.Brief(), "[0, 1, 2, 3, 4, 5, 6, 7, ..., 65535] (65536 devices)");
}

TEST(VerifierCoverage, DeviceDescriptors) {
  LoopEnv loops;
  EXPECT_EQ(DeviceDescriptor(Int(3), loops).set, Devices::One(3));
  EXPECT_FALSE(DeviceDescriptor(Int(-1), loops).ok);
  EXPECT_FALSE(DeviceDescriptor(nullptr, loops).ok);
  VarPtr r = MakeVar("r", ScalarTy(DataType::kIndex));
  EXPECT_FALSE(DeviceDescriptor(r, loops).ok);
  loops[r.get()] = Descriptor{true, Devices::All(), {}};
  EXPECT_TRUE(DeviceDescriptor(r, loops).set.all());
  EXPECT_FALSE(DeviceDescriptor(Add(r, Int(1)), loops).ok);
}

// A dispatch without device= is placed at run time: no V021, and no coverage, so
// an alloc it alone consumes gets none (V020, which says why).
TEST(VerifierCoverage, DispatchWithoutDeviceCoversNothing) {
  auto chip = ChipOrch("chip_orch", {{64}});
  HostBuilder b(true, "unplaced.pyir");
  VarPtr buf = b.Alloc("buf", Int(256));
  VarPtr data = b.Window("data", buf, Shape({64}), DataType::kFP32);
  b.Dispatch("chip_orch", {data}, nullptr, ChipReturnType(chip));
  b.Return({Int(0)});
  auto body = b.Body({{"comm_d0", DeviceSet{false, {0}}, {buf}}});
  auto p = ir::MakeNode<Program>("P", std::vector<VarPtr>{},
                                 std::vector<FunctionPtr>{chip, HostFunction("host_orch", body)});
  auto diags = VerifyProgram(p, NoRoundTrip());
  EXPECT_FALSE(HasCode(diags, "CDS-V021")) << FormatDiagnostics(diags);
  ASSERT_EQ(CountCode(diags, "CDS-V020"), 1u) << FormatDiagnostics(diags);
  for (const auto& d : diags) {
    if (d.code != "CDS-V020") continue;
    EXPECT_NE(d.message.find("alloc 'buf'"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("dispatches without device= cover no device"), std::string::npos)
        << d.message;
  }
}

// ---------------------------------------------------------------------------
// Robustness: malformed outputs are reported, never crash.

TEST(VerifierRobustness, NullsAndOddShapesAreReported) {
  auto host = HostFunction("host_orch", Seq({nullptr, Eval(nullptr), Assign(nullptr, Int(1))}));
  auto p = ir::MakeNode<Program>("P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{host});
  auto diags = VerifyProgram(p, NoRoundTrip());
  EXPECT_TRUE(HasCode(diags, "CDS-V029")) << Codes(diags);
  EXPECT_TRUE(HasCode(VerifyProgram(nullptr), "CDS-V029"));
  EXPECT_TRUE(HasCode(VerifyRelational(nullptr, p), "CDS-V029"));

  auto slotless = ir::MakeNode<CommDomainScopeStmt>(
      "comm_d0", DeviceSet::All(), std::vector<WindowBufferPtr>{nullptr}, KwargList{}, nullptr);
  auto host2 = HostFunction("host_orch", Seq({slotless}));
  auto p2 = ir::MakeNode<Program>("P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{host2});
  auto d2 = VerifyProgram(p2, NoRoundTrip());
  EXPECT_TRUE(HasCode(d2, "CDS-V029")) << Codes(d2);
  EXPECT_TRUE(HasCode(d2, "CDS-V012")) << Codes(d2);
}

TEST(VerifierRobustness, EveryMutantOfEveryFixtureSurvivesRelationalMode) {
  for (const auto& f : AllFixtures()) {
    for (const Mutator* m : ApplicableMutators(f.after)) {
      auto p = *m->apply(f.after);
      (void)VerifyAll(f.before, p, NoRoundTrip());
      (void)VerifyAfterPass("synthesize-allreduce-signals", f.before, p, NoRoundTrip());
    }
  }
}

TEST(VerifierRobustness, DiagnosticCapKeepsTheFirstOnes) {
  VerifyOptions o = NoRoundTrip();
  o.max_diagnostics = 1;
  auto f = AllFixtures()[0];
  EXPECT_EQ(VerifyProgram(f.before, o).size(), 1u);
}

// ---------------------------------------------------------------------------
// Pipeline seam.

TEST(VerifierAfterPass, SynthesizeRequiresTwoArgAllReduces) {
  auto fixtures = AllFixtures();
  const auto& f = fixtures[3];
  // The pipeline input still has a signal-less allreduce.
  auto diags = VerifyAfterPass("synthesize-allreduce-signals", f.before, f.before, NoRoundTrip());
  EXPECT_TRUE(HasCode(diags, "CDS-V022")) << Codes(diags);
  EXPECT_FALSE(HasCode(diags, "CDS-V008"));  // scopes are not expected yet
  EXPECT_TRUE(
      VerifyAfterPass("synthesize-allreduce-signals", f.before, f.after, NoRoundTrip()).empty());
  EXPECT_TRUE(
      VerifyAfterPass("materialize-comm-domain-scopes", f.before, f.after, NoRoundTrip()).empty());
  EXPECT_TRUE(
      HasCode(VerifyAfterPass("MaterializeCommDomainScopes", f.before, f.before, NoRoundTrip()),
              "CDS-V008"));
  EXPECT_TRUE(VerifyAfterPass("some-other-pass", f.before, f.before, NoRoundTrip()).empty());
}

// ---------------------------------------------------------------------------
// Round trip.

TEST(VerifierRoundTrip, CorrectOutputsRoundTrip) {
  for (const auto& f : AllFixtures()) {
    auto diags = VerifyProgram(f.after);
    EXPECT_TRUE(diags.empty()) << f.name << ":\n" << FormatDiagnostics(diags);
  }
}

}  // namespace
}  // namespace cds::verify::testing
