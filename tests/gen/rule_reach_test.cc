// The rule-coverage table of docs/generators.md: every rule and error of
// docs/pass.md is exercised by generated programs, and the table names each one.

#include "fuzz/gen/rule_reach.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "fuzz/gen/generate.h"

namespace cds::fuzz {
namespace {

// Each rule has a program that exercises it, and the reader sees nothing else in it.
// A reader that never fires (a rule the generator cannot reach, or a reader that
// looks at the wrong field) fails here.
TEST(GenRules, EveryRuleIsReachedInTheValidMix) {
  std::vector<int> reached(kNumRules, 0);
  const int count = 3000;
  for (uint64_t seed = 1; seed <= count; ++seed) {
    const RuleSet r = RulesReached(Generate(seed, GenOptions{}, std::nullopt));
    for (size_t i = 0; i < kNumRules; ++i) reached[i] += r.test(i);
  }
  for (size_t i = 0; i < kNumRules; ++i) {
    // docs/generators.md's table is measured over 10,000 programs, each row at 1% or
    // more of gen_sweep's mix (two in three valid); a third of that here leaves room
    // for the smaller sample.
    EXPECT_GE(reached[i], count / 300) << RuleText(static_cast<Rule>(i));
  }
}

TEST(GenRules, InvalidProgramsReachNoRule) {
  const GeneratedProgram p = Generate(3, GenOptions{}, InvalidKind::kDeadAlloc);
  EXPECT_TRUE(RulesReached(p).none());
}

// One pinned program per reader family: a reader that fires on everything fails.
TEST(GenRules, AProgramWithoutCollectivesHandsNothingOver) {
  GenOptions o;
  o.features.reset();
  for (Feature f : {Feature::kSizeLiteral, Feature::kLoopRange, Feature::kDeviceConst})
    o.features.set(static_cast<size_t>(f));
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const RuleSet r = RulesReached(Generate(seed, o, std::nullopt));
    for (Rule rule : {Rule::kInheritAllReduce, Rule::kInheritBroadcast, Rule::kInheritAllGather,
                      Rule::kInheritAllToAllV, Rule::kSynthesizeSignal, Rule::kSizeShapeSymbolic,
                      Rule::kViewAlias, Rule::kViewInOpaqueCall}) {
      EXPECT_FALSE(r.test(static_cast<size_t>(rule))) << "seed " << seed << ": " << RuleText(rule);
    }
  }
}

TEST(GenRules, DocsTableNamesEveryRule) {
  const std::string path = std::string(CDS_SOURCE_DIR) + "/docs/generators.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t i = 0; i < kNumRules; ++i) {
    const std::string row = "| " + std::string(RuleText(static_cast<Rule>(i))) + " |";
    EXPECT_NE(doc.find(row), std::string::npos) << path << " lacks the row " << row;
  }
  for (size_t k = 0; k < kNumInvalidKinds; ++k) {
    const std::string row =
        "| error: " + std::string(InvalidKindName(static_cast<InvalidKind>(k))) + " (invalid kind)";
    EXPECT_NE(doc.find(row), std::string::npos) << path << " lacks the row " << row;
  }
}

}  // namespace
}  // namespace cds::fuzz
