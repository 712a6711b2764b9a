// Where the verify-each instrument runs each check: the invariant checks after
// every pass, the print/parse round trip once, after the last pass.

#include <gtest/gtest.h>

#include "driver/driver.h"
#include "ir/ir.h"
#include "tests/verifier/fixtures.h"
#include "tests/verifier/mutators.h"
#include "verifier/verifier.h"

namespace cds::verify::testing {
namespace {

using namespace cds::ir;

// A materialized program whose only defect is one the round trip alone sees: a
// chip parameter typed with a back-reference cannot be printed back. The
// relational checks would see it too, so the test passes compare the output
// against itself (an identity pass does exactly that).
ProgramPtr RoundTripOnlyDefect() {
  auto f = AllFixtures()[0];
  for (const auto& m : AllMutators()) {
    if (m.name == "chip-param-back-reference") return *m.apply(f.after);
  }
  return nullptr;
}

pass::PassInfo Identity(std::string name) {
  return pass::PassInfo{std::move(name), {}, {}, {}, [](const ProgramPtr& p) { return p; }};
}

struct Outcome {
  bool thrown = false;
  std::string pass;
  std::vector<Diagnostic> diagnostics;
};

Outcome RunPasses(const std::vector<std::string>& passes, std::string_view last) {
  pass::PassManager pm;
  for (const auto& p : passes) pm.AddPass(Identity(p));
  for (auto& inst : driver::VerifyEachInstrumentations(last)) pm.AddInstrumentation(inst);
  try {
    pm.Run(RoundTripOnlyDefect());
  } catch (const driver::VerificationError& e) {
    return {true, e.pass_name(), e.diagnostics()};
  }
  return {};
}

TEST(VerifyEach, RoundTripRunsOnceAfterTheLastPass) {
  ASSERT_TRUE(RoundTripOnlyDefect());
  Outcome o = RunPasses({"first", "second", "third"}, "third");
  ASSERT_TRUE(o.thrown);
  EXPECT_EQ(o.pass, "third");
  EXPECT_TRUE(HasCode(o.diagnostics, "CDS-V024") || HasCode(o.diagnostics, "CDS-V025"))
      << FormatDiagnostics(o.diagnostics);
}

TEST(VerifyEach, NoRoundTripWithoutALastPass) {
  EXPECT_FALSE(RunPasses({"first", "second"}, "").thrown);
}

// BuildPassManager names the pipeline's last pass to the instrument: a one-pass
// pipeline (signal synthesis, which leaves this program as it is and checks only
// signals) stops at that pass on the round trip's finding.
TEST(VerifyEach, BuildPassManagerRunsTheRoundTripAfterItsLastPass) {
  driver::PipelineOptions options;
  options.pipeline = "synthesize-allreduce-signals";
  options.verify_each = true;
  try {
    driver::RunPipeline(RoundTripOnlyDefect(), options);
    ADD_FAILURE() << "the round trip did not run after the last pass";
  } catch (const driver::VerificationError& e) {
    EXPECT_EQ(e.pass_name(), "synthesize-allreduce-signals");
    EXPECT_TRUE(HasCode(e.diagnostics(), "CDS-V024") || HasCode(e.diagnostics(), "CDS-V025"))
        << FormatDiagnostics(e.diagnostics());
  }
}

// The full default pipeline with verify-each is clean on every fixture input.
TEST(VerifyEach, DefaultPipelineIsCleanOnEveryFixture) {
  driver::PipelineOptions options;
  options.verify_each = true;
  for (const auto& f : AllFixtures()) {
    try {
      auto out = driver::RunPipeline(f.before, options);
      EXPECT_TRUE(out) << f.name;
    } catch (const driver::VerificationError& e) {
      ADD_FAILURE() << f.name << " after " << e.pass_name() << ":\n"
                    << FormatDiagnostics(e.diagnostics());
    }
  }
}

}  // namespace
}  // namespace cds::verify::testing
