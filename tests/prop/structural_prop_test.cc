// Structural equality / hash laws on generated host programs and on their
// pipeline outputs (which carry shared WindowBuffers and scopes, the part of the
// IR where definition mapping is easiest to get wrong).

#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "tests/prop/prop_budget.h"
#include "tests/prop/prop_gen.h"
#include "tests/prop/prop_util.h"

namespace cds::prop {
namespace {

using fuzz::GeneratedProgram;

constexpr int kLawCases = 300;
constexpr int kPairCases = 500;

void ExpectEqualWithHash(const ir::ProgramPtr& a, const ir::ProgramPtr& b, const std::string& what,
                         const GeneratedProgram& p) {
  const ir::EqualityResult eq = ir::StructuralEqualWhere(a, b);
  if (!eq.equal) RC_FAIL(FailureMessage(what + ": not equal at " + eq.path + ": " + eq.reason, p));
  if (!ir::StructuralEqual(b, a)) RC_FAIL(FailureMessage(what + ": equality is not symmetric", p));
  if (ir::StructuralHash(a) != ir::StructuralHash(b)) {
    RC_FAIL(FailureMessage(what + ": equal but hashes differ", p));
  }
}

// Reflexivity, parse(RenderText) == RenderIR, and renaming, on the input and the
// output of the pipeline.
TEST(StructuralLaws, OnGeneratedPrograms) {
  CheckProperty(kLawCases, [] {
    const GeneratedProgram p = *ValidProgram();
    RC_LOG() << p.text;
    ir::ProgramPtr out;
    try {
      out = RunDefaultPipeline(p.ir);
    } catch (const ValueError& e) {
      RC_FAIL(FailureMessage("the pipeline rejected a valid program: " + e.Format(), p));
    }
    for (const auto& [what, x] : {std::pair{"input", p.ir}, std::pair{"output", out}}) {
      ExpectEqualWithHash(x, x, fmt::format("{}: reflexive", what), p);
      const ir::ProgramPtr renamed = RenamedCopy(x, "rn_");
      RC_ASSERT(renamed != x);
      ExpectEqualWithHash(x, renamed, fmt::format("{}: renamed copy", what), p);
    }
    ir::ProgramPtr parsed;
    try {
      parsed = ir::ParseProgram(p.text, {.filename = "gen.pyir"});
    } catch (const ValueError& e) {
      RC_FAIL(FailureMessage("RenderText does not parse: " + e.Format(), p));
    }
    ExpectEqualWithHash(parsed, p.ir, "parse(RenderText) vs RenderIR", p);
    // The pass must treat the parsed and the rendered input alike.
    ExpectEqualWithHash(RunDefaultPipeline(parsed), out, "pipeline(parsed) vs pipeline(rendered)",
                        p);
  });
}

// Pairs of programs, equal about half the time:
// equality is symmetric and equal programs hash equally; the pass preserves
// equality (equal inputs give equal outputs).
TEST(StructuralLaws, PairsOfPrograms) {
  CheckProperty(kPairCases, [] {
    fuzz::GenOptions small;
    small.size = 6;
    // Half the time b replays a's draws (equal programs built as separate objects),
    // otherwise b is independent (almost always a different program).
    const auto draws = BoundedDraws();
    const std::vector<uint64_t> da = *draws;
    const std::vector<uint64_t> db = *rc::gen::oneOf(rc::gen::just(da), draws);
    const GeneratedProgram a = fuzz::GenerateFromDraws(da, small);
    const GeneratedProgram b = fuzz::GenerateFromDraws(db, small);
    RC_LOG() << a.text << "---\n" << b.text;
    const bool ab = ir::StructuralEqual(a.ir, b.ir);
    RC_ASSERT(ab == ir::StructuralEqual(b.ir, a.ir));
    RC_CLASSIFY(ab, "equal inputs");
    if (ab) {
      RC_ASSERT(ir::StructuralHash(a.ir) == ir::StructuralHash(b.ir));
      const ir::ProgramPtr oa = RunDefaultPipeline(a.ir);
      const ir::ProgramPtr ob = RunDefaultPipeline(b.ir);
      RC_ASSERT(ir::StructuralEqual(oa, ob));
      RC_ASSERT(ir::StructuralHash(oa) == ir::StructuralHash(ob));
    }
    // Equal texts must mean equal IR (the renderer is deterministic).
    if (a.text == b.text) RC_ASSERT(ab);
  });
}

}  // namespace
}  // namespace cds::prop
