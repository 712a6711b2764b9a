#include "pass/pass_manager.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "tests/pass/pass_test_util.h"

namespace cds::pass::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ProgramPtr SmallProgram() {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr data = b.Window("data", buf, {256}, 3);
  b.Dispatch("chip_orch", {data}, Int(0), 4);
  b.Do(b.Op(ops::kAllReduce, {data}, {}, 5), 5);
  return Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)});
}

class Recorder final : public PassInstrumentation {
 public:
  void BeforePass(std::string_view name, const ProgramPtr& p) override {
    log.push_back(fmt::format("before {}", name));
    seen_before.push_back(p);
  }
  void AfterPass(std::string_view name, const ProgramPtr& before,
                 const ProgramPtr& after) override {
    log.push_back(fmt::format("after {}", name));
    EXPECT_EQ(before, seen_before.back());
    seen_after.push_back(after);
    if (throw_after == name) throw ValueError("stop", Span{});
  }
  std::vector<std::string> log;
  std::vector<ProgramPtr> seen_before, seen_after;
  std::string throw_after;
};

TEST(PassManager, DefaultPipelineIsSynthesizeThenMaterialize) {
  auto passes = ParsePipeline(kDefaultPipeline);
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_EQ(passes[0]->name, "synthesize-allreduce-signals");
  EXPECT_EQ(passes[1]->name, "materialize-comm-domain-scopes");
}

TEST(PassManager, PassProperties) {
  const PassInfo* mcds = FindPass("materialize-comm-domain-scopes");
  ASSERT_TRUE(mcds);
  EXPECT_TRUE(mcds->required.Empty());
  EXPECT_EQ(mcds->produced, IRPropertySet({IRProperty::kCommDomainScopesMaterialized}));
  EXPECT_TRUE(mcds->invalidated.Empty());
  const PassInfo* sars = FindPass("synthesize-allreduce-signals");
  ASSERT_TRUE(sars);
  EXPECT_EQ(sars->produced, IRPropertySet({IRProperty::kAllReduceSignalsSynthesized}));
  EXPECT_EQ(FindPass("nope"), nullptr);
}

TEST(PassManager, UnknownPassIsNamed) {
  CaughtError e = ErrorOf([] { ParsePipeline("synthesize-allreduce-signals, frobnicate"); });
  ASSERT_TRUE(e.thrown);
  EXPECT_THAT(e.message, HasSubstr("unknown pass 'frobnicate'"));
  EXPECT_THAT(e.message, HasSubstr("materialize-comm-domain-scopes"));
  EXPECT_TRUE(ErrorOf([] { ParsePipeline("a,,b"); }).thrown);
  EXPECT_TRUE(ParsePipeline("").empty());
}

TEST(PassManager, RunsPassesInOrderWithHooks) {
  auto rec = std::make_shared<Recorder>();
  PassManager pm = PassManager::FromPipeline(kDefaultPipeline);
  pm.AddInstrumentation(rec);
  ProgramPtr in = SmallProgram();
  ProgramPtr out = pm.Run(in);
  EXPECT_THAT(
      rec->log,
      ElementsAre("before synthesize-allreduce-signals", "after synthesize-allreduce-signals",
                  "before materialize-comm-domain-scopes", "after materialize-comm-domain-scopes"));
  EXPECT_EQ(rec->seen_before[0], in);
  EXPECT_EQ(rec->seen_before[1], rec->seen_after[0]);
  EXPECT_EQ(rec->seen_after[1], out);
  EXPECT_EQ(Scopes(out->FindFunction("host_orch")).size(), 1u);
  EXPECT_EQ(pm.properties(), IRPropertySet({IRProperty::kAllReduceSignalsSynthesized,
                                            IRProperty::kCommDomainScopesMaterialized}));
}

TEST(PassManager, ThrowingInstrumentationStopsThePipeline) {
  auto rec = std::make_shared<Recorder>();
  rec->throw_after = "synthesize-allreduce-signals";
  PassManager pm = PassManager::FromPipeline(kDefaultPipeline);
  pm.AddInstrumentation(rec);
  EXPECT_THROW(pm.Run(SmallProgram()), ValueError);
  EXPECT_THAT(rec->log, ElementsAre("before synthesize-allreduce-signals",
                                    "after synthesize-allreduce-signals"));
}

TEST(PassManager, MissingRequiredPropertyIsReported) {
  PassManager pm;
  PassInfo needy{
      "needy", {IRProperty::kCommDomainScopesMaterialized}, {}, {}, [](const ProgramPtr& p) {
        return p;
      }};
  pm.AddPass(needy);
  CaughtError e = ErrorOf([&] { pm.Run(SmallProgram()); });
  ASSERT_TRUE(e.thrown);
  EXPECT_THAT(e.message, HasSubstr("CommDomainScopesMaterialized"));
  EXPECT_NO_THROW(pm.Run(SmallProgram(), {IRProperty::kCommDomainScopesMaterialized}));
}

TEST(Driver, BuildsThePipelineWithExtraInstrumentations) {
  auto rec = std::make_shared<Recorder>();
  driver::PipelineOptions opts;
  opts.verify_each = true;
  PassManager pm = driver::BuildPassManager(opts, {rec});
  ASSERT_EQ(pm.passes().size(), 2u);
  ASSERT_GE(pm.instrumentations().size(), 2u);
  EXPECT_EQ(pm.instrumentations().back(), rec);
  pm.Run(SmallProgram());
  EXPECT_EQ(rec->log.size(), 4u);

  opts.pipeline = "materialize-comm-domain-scopes";
  opts.verify_each = false;
  PassManager only = driver::BuildPassManager(opts);
  EXPECT_EQ(only.passes().size(), 1u);
  EXPECT_TRUE(only.instrumentations().empty());
}

TEST(Driver, VerifyEachRejectsAPassThatDropsFunctions) {
  PassManager pm;
  pm.AddPass(PassInfo{"drop", {}, {}, {}, [](const ProgramPtr& p) {
                        return ir::MakeNode<Program>(p->name, p->dynamic_dims,
                                                     std::vector<FunctionPtr>{});
                      }});
  for (auto& inst : driver::VerifyEachInstrumentations()) pm.AddInstrumentation(inst);
  CaughtError e = ErrorOf([&] { pm.Run(SmallProgram()); });
  ASSERT_TRUE(e.thrown);
  EXPECT_THAT(e.message, HasSubstr("'drop' changed the set of functions"));
}

}  // namespace
}  // namespace cds::pass::testing
