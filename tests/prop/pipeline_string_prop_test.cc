// Pipeline strings and the pass manager over generated programs: ParsePipeline
// accepts exactly the lists of known names, and any pipeline of known passes
// run on a materialized program hands it back unchanged with the properties of
// the passes it ran.

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "ir/error.h"
#include "pass/pass_manager.h"
#include "tests/prop/prop_budget.h"
#include "tests/prop/prop_gen.h"
#include "tests/prop/prop_util.h"

namespace cds::prop {
namespace {

constexpr int kPipelineCases = 200;

const std::vector<std::string>& Names() {
  static const std::vector<std::string> names = {
      std::string(pass::kSynthesizeAllReduceSignalsPass),
      std::string(pass::kMaterializeCommDomainScopesPass), "no-such-pass", ""};
  return names;
}

TEST(PassManagerProperty, PipelineStrings) {
  CheckProperty(kPipelineCases, [] {
    const auto picks =
        *rc::gen::container<std::vector<size_t>>(rc::gen::inRange<size_t>(0, Names().size()));
    std::string text;
    bool valid = true;
    std::vector<std::string> expected;
    for (size_t i = 0; i < picks.size(); ++i) {
      const std::string& n = Names()[picks[i]];
      if (i > 0) text += *rc::gen::element<std::string>(",", " , ", ",  ");
      text += n;
      if (n.empty() || n == "no-such-pass") valid = false;
      expected.push_back(n);
    }
    // The empty string is the empty pipeline; one empty name in a list is an error.
    if (picks.size() == 1 && expected[0].empty()) {
      valid = true;
      expected.clear();
    }
    RC_LOG() << "pipeline: '" << text << "'\n";
    try {
      const auto passes = pass::ParsePipeline(text);
      RC_ASSERT(valid);
      RC_ASSERT(passes.size() == expected.size());
      for (size_t i = 0; i < passes.size(); ++i) RC_ASSERT(passes[i]->name == expected[i]);
    } catch (const ValueError& e) {
      RC_LOG() << e.Format() << "\n";
      RC_ASSERT(!valid);
    }
  });
}

// Any pipeline of known passes is the identity on a materialized program, and the
// manager reports the properties of the passes that ran.
TEST(PassManagerProperty, KnownPipelinesOnOutputs) {
  CheckProperty(kPipelineCases / 2, [] {
    const fuzz::GeneratedProgram p = *ValidProgram();
    RC_LOG() << p.text;
    const ir::ProgramPtr out = RunDefaultPipeline(p.ir);
    const auto picks = *rc::gen::container<std::vector<size_t>>(rc::gen::inRange<size_t>(0, 2));
    std::string text;
    pass::IRPropertySet produced;
    for (size_t i = 0; i < picks.size(); ++i) {
      text += (i > 0 ? "," : "") + Names()[picks[i]];
      produced.Insert(picks[i] == 0 ? pass::IRProperty::kAllReduceSignalsSynthesized
                                    : pass::IRProperty::kCommDomainScopesMaterialized);
    }
    pass::PassManager pm = pass::PassManager::FromPipeline(text);
    const ir::ProgramPtr again = pm.Run(out);
    if (again != out)
      RC_FAIL(FailureMessage("pipeline '" + text + "' changed a materialized program", p));
    RC_ASSERT(pm.properties() == produced);
  });
}

}  // namespace
}  // namespace cds::prop
