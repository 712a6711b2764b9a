// RapidCheck properties of the pipeline (SynthesizeAllReduceSignals +
// MaterializeCommDomainScopes) over programs from the fuzz/gen model, which is
// valid by construction and carries its own expected result, independent of the
// pass. See docs/properties.md for what each property checks, the case counts and
// how to reproduce a failure.

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "pass/materialize_comm_domain_scopes.h"
#include "pass/synthesize_allreduce_signals.h"
#include "tests/prop/prop_budget.h"
#include "tests/prop/prop_gen.h"
#include "tests/prop/prop_util.h"
#include "tests/verifier/mutators.h"
#include "verifier/verifier.h"

namespace cds::prop {
namespace {

using fuzz::GeneratedProgram;

// Base case counts (x CDS_PROP_SCALE). Sized so the whole binary stays well under
// three minutes in the Debug build on two cores; see docs/properties.md.
constexpr int kVerifierCases = 400;
constexpr int kScopeCases = 600;
constexpr int kRoundTripCases = 300;
constexpr int kIdempotenceCases = 400;
constexpr int kRelationalCases = 400;
constexpr int kInvalidCasesPerKind = 60;
constexpr int kMutantCases = 100;

// 1. The verifier's self-check accepts the output, and so does the per-pass seam
// the pass manager uses (after each of the two passes).
TEST(PipelineProperty, OutputPassesVerifier) {
  CheckProperty(kVerifierCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr out = PipelineOrFail(p);
    auto diags = verify::VerifyProgram(out);
    if (!diags.empty()) RC_FAIL(FailureMessage("VerifyProgram(output) is not clean", p, diags));

    const ir::ProgramPtr mid = pass::SynthesizeAllReduceSignals(p.ir);
    diags = verify::VerifyAfterPass("synthesize-allreduce-signals", p.ir, mid);
    if (!diags.empty()) RC_FAIL(FailureMessage("VerifyAfterPass(SARS) is not clean", p, diags));
    const ir::ProgramPtr out2 = pass::MaterializeCommDomainScopes(mid);
    diags = verify::VerifyAfterPass("materialize-comm-domain-scopes", mid, out2);
    if (!diags.empty()) RC_FAIL(FailureMessage("VerifyAfterPass(MCDS) is not clean", p, diags));
  });
}

// 2. Scopes per host orchestrator (names, devices, slot alloc names and slot
// variables, in order) equal the model's expectation.
TEST(PipelineProperty, ScopesMatchModel) {
  CheckProperty(kScopeCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr out = PipelineOrFail(p);
    const auto observed = ObserveScopes(out);
    const auto expected = ExpectedScopes(p.expect);
    bool same = observed.size() == expected.size();
    for (size_t i = 0; same && i < observed.size(); ++i) {
      same = observed[i].name == expected[i].name && observed[i].scopes == expected[i].scopes;
    }
    if (!same) {
      RC_FAIL(FailureMessage("scopes differ from the model\n--- expected ---\n" +
                                 ToString(expected) + "--- observed ---\n" + ToString(observed),
                             p));
    }
  });
}

// parse(print(x)) == x with an equal hash, and printing the reparsed program gives
// the same text.
void CheckRoundTrip(const ir::ProgramPtr& x, const std::string& what, const GeneratedProgram& p) {
  const std::string text = ir::PrintProgram(x);
  ir::ProgramPtr back;
  try {
    back = ir::ParseProgram(text, {.filename = "printed.pyir"});
  } catch (const ValueError& e) {
    RC_FAIL(FailureMessage(
        what + ": printed text does not parse: " + e.Format() + "\n--- printed ---\n" + text, p));
  }
  const ir::EqualityResult eq = ir::StructuralEqualWhere(x, back);
  if (!eq.equal) {
    RC_FAIL(FailureMessage(what + ": parse(print(x)) != x at " + eq.path + ": " + eq.reason +
                               "\n--- printed ---\n" + text,
                           p));
  }
  if (ir::StructuralHash(x) != ir::StructuralHash(back)) {
    RC_FAIL(FailureMessage(what + ": equal after round trip but hashes differ", p));
  }
  const std::string again = ir::PrintProgram(back);
  if (again != text) {
    RC_FAIL(FailureMessage(what + ": printing is not a fixed point\n--- first ---\n" + text +
                               "--- second ---\n" + again,
                           p));
  }
}

// 3. Round trip of the input and of the output.
TEST(PipelineProperty, PrintParseRoundTrip) {
  CheckProperty(kRoundTripCases, [] {
    const GeneratedProgram p = *ValidProgram();
    CheckRoundTrip(p.ir, "input", p);
    CheckRoundTrip(PipelineOrFail(p), "output", p);
  });
}

// 4. Running again on the output changes nothing: the same program pointer, for
// the whole pipeline and for each pass alone.
TEST(PipelineProperty, Idempotence) {
  CheckProperty(kIdempotenceCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr out = PipelineOrFail(p);
    ir::ProgramPtr again;
    try {
      again = pass::MaterializeCommDomainScopes(out);
      if (again != out) RC_FAIL(FailureMessage("MCDS(output) is not the same pointer", p));
      again = pass::SynthesizeAllReduceSignals(out);
      if (again != out) RC_FAIL(FailureMessage("SARS(output) is not the same pointer", p));
      again = RunDefaultPipeline(out);
      if (again != out) RC_FAIL(FailureMessage("pipeline(output) is not the same pointer", p));
    } catch (const ValueError& e) {
      RC_FAIL(FailureMessage("rerunning on the output throws: " + e.Format(), p));
    }
  });
}

// 5. Relational verification against the pipeline input, and against the input
// of MaterializeCommDomainScopes alone.
TEST(PipelineProperty, RelationalInputOutput) {
  CheckProperty(kRelationalCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr out = PipelineOrFail(p);
    auto diags = verify::VerifyRelational(p.ir, out);
    if (!diags.empty()) RC_FAIL(FailureMessage("VerifyRelational(input, output)", p, diags));
    const ir::ProgramPtr mid = pass::SynthesizeAllReduceSignals(p.ir);
    diags = verify::VerifyRelational(mid, pass::MaterializeCommDomainScopes(mid));
    if (!diags.empty())
      RC_FAIL(FailureMessage("VerifyRelational(SARS output, MCDS output)", p, diags));
  });
}

bool MentionsAny(const std::string& message, const std::vector<std::string>& any_of) {
  for (const std::string& s : any_of) {
    if (message.find(s) != std::string::npos) return true;
  }
  return false;
}

// Text path: ParseProgram(RenderText) then the stage that should reject it.
void CheckInvalidText(const GeneratedProgram& p) {
  const fuzz::InvalidSpec& spec = *p.invalid;
  const std::string expected = fmt::format("expected a {} error at line {} mentioning one of [{}]",
                                           fuzz::StageName(spec.text_stage), spec.line,
                                           fmt::join(spec.message_any_of, ", "));
  RC_LOG() << expected << "\n" << p.text;
  auto check_error = [&](const ValueError& e, const std::string& stage) {
    if (e.span().line != spec.line || !MentionsAny(e.message(), spec.message_any_of)) {
      RC_FAIL(FailureMessage(expected + "; got at " + stage + ": " + e.Format(), p));
    }
  };
  ir::ProgramPtr parsed;
  try {
    parsed = ir::ParseProgram(p.text, {.filename = "invalid.pyir"});
  } catch (const ValueError& e) {
    if (spec.text_stage != fuzz::Stage::kParse) {
      RC_FAIL(FailureMessage(expected + "; the parser rejected it: " + e.Format(), p));
    }
    check_error(e, "parse");
    return;
  }
  if (spec.text_stage == fuzz::Stage::kParse) RC_FAIL(FailureMessage(expected + "; it parsed", p));

  ir::ProgramPtr mid;
  try {
    mid = pass::SynthesizeAllReduceSignals(parsed);
  } catch (const ValueError& e) {
    if (spec.text_stage != fuzz::Stage::kSynthesize) {
      RC_FAIL(
          FailureMessage(expected + "; SynthesizeAllReduceSignals rejected it: " + e.Format(), p));
    }
    check_error(e, "synthesize");
    return;
  }
  if (spec.text_stage == fuzz::Stage::kSynthesize) {
    RC_FAIL(FailureMessage(expected + "; SynthesizeAllReduceSignals accepted it", p));
  }
  try {
    pass::MaterializeCommDomainScopes(mid);
  } catch (const ValueError& e) {
    check_error(e, "materialize");
    return;
  }
  RC_FAIL(FailureMessage(expected + "; the pipeline accepted it", p));
}

// IR path (RenderIR, no spans): the right stage rejects it with the right message,
// also through the driver.
void CheckInvalidIR(const GeneratedProgram& p) {
  const fuzz::InvalidSpec& spec = *p.invalid;
  try {
    RunDefaultPipeline(p.ir);
  } catch (const ValueError& e) {
    if (!MentionsAny(e.message(), spec.message_any_of)) {
      RC_FAIL(FailureMessage("IR path: wrong message: " + e.Format(), p));
    }
    // Which pass threw: SARS alone must throw exactly for synthesize-stage kinds.
    bool sars_threw = false;
    try {
      pass::SynthesizeAllReduceSignals(p.ir);
    } catch (const ValueError&) {
      sars_threw = true;
    }
    if (sars_threw != (spec.ir_stage == fuzz::Stage::kSynthesize)) {
      RC_FAIL(FailureMessage(
          fmt::format("IR path: expected stage {}, got {}", fuzz::StageName(spec.ir_stage),
                      sars_threw ? "synthesize" : "materialize"),
          p));
    }
    return;
  }
  RC_FAIL(FailureMessage("IR path: the pipeline accepted a program with a planted defect", p));
}

// 6. Every invalid kind, each as its own property (id .../KIND) so a reproduce=
// string replays only that kind.
TEST(PipelineProperty, InvalidProgramsGiveThePlantedDiagnostic) {
  for (size_t k = 0; k < fuzz::kNumInvalidKinds; ++k) {
    const auto kind = static_cast<fuzz::InvalidKind>(k);
    CheckProperty(
        kInvalidCasesPerKind,
        [kind] {
          const GeneratedProgram p = *InvalidProgram(kind);
          RC_ASSERT(p.invalid.has_value());
          CheckInvalidText(p);
          CheckInvalidIR(p);
        },
        std::string(fuzz::InvalidKindName(kind)));
  }
}

// The verifier finds what each output mutator breaks on generated outputs (the
// mutators of tests/verifier, applied to pipeline outputs instead of fixtures).
TEST(PipelineProperty, VerifierCatchesMutatedOutputs) {
  CheckProperty(kMutantCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr in = p.ir;
    const ir::ProgramPtr out = PipelineOrFail(p);
    for (const verify::testing::Mutator* m : verify::testing::ApplicableMutators(out)) {
      const ir::ProgramPtr bad = *m->apply(out);
      const auto diags = verify::VerifyAll(in, bad);
      if (!verify::HasCode(diags, m->code)) {
        RC_FAIL(
            FailureMessage(fmt::format("mutator {} should give {}", m->name, m->code), p, diags));
      }
    }
  });
}

}  // namespace
}  // namespace cds::prop
