// The rules the passes state in their own headers: which functions are host and
// chip orchestrators, the size of a window buffer, and how device coverages merge.

#include <gtest/gtest.h>

#include "ir/structural_equal.h"
#include "pass/device_coverage.h"
#include "pass/orchestrators.h"
#include "pass/window_buffer_size.h"
#include "tests/pass/pass_test_util.h"

namespace cds::pass::testing {
namespace {

FunctionPtr Fn(FunctionType type, std::optional<Level> level = std::nullopt,
               std::optional<Role> role = std::nullopt) {
  return ir::MakeNode<Function>("f", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                                std::vector<TypePtr>{}, Seq({}), type, level, role);
}

// ---------------------------------------------------------------------------
// Orchestrators

TEST(PassRules, LevelDefaultsFromTheFunctionType) {
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kOrchestration)), Level::kChip);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kGraph)), Level::kChip);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kInCore)), Level::kChipDie);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kAIC)), Level::kAIC);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kAIV)), Level::kAIV);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kGroup)), Level::kCoreGroup);
  for (FunctionType t : {FunctionType::kOpaque, FunctionType::kSpmd, FunctionType::kInline}) {
    EXPECT_EQ(LevelOf(*Fn(t)), std::nullopt);
  }
}

TEST(PassRules, DeclaredLevelWins) {
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kOrchestration, Level::kHost)), Level::kHost);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kOpaque, Level::kCluster1)), Level::kCluster1);
}

TEST(PassRules, HostOrchestratorIsHostLevelAndOrchestrates) {
  EXPECT_TRUE(IsHostOrchestrator(*Fn(FunctionType::kOpaque, Level::kHost, Role::kOrchestrator)));
  EXPECT_TRUE(IsHostOrchestrator(*Fn(FunctionType::kOrchestration, Level::kHost)));
  EXPECT_FALSE(IsHostOrchestrator(*Fn(FunctionType::kOpaque, Level::kHost)));
  EXPECT_FALSE(IsHostOrchestrator(*Fn(FunctionType::kOpaque, Level::kHost, Role::kSubWorker)));
  EXPECT_FALSE(IsHostOrchestrator(*Fn(FunctionType::kOrchestration)));  // CHIP by default
  EXPECT_FALSE(IsHostOrchestrator(*Fn(FunctionType::kOpaque, Level::kChip, Role::kOrchestrator)));
}

TEST(PassRules, ChipOrchestratorIsChipLevelOrchestratesAndIsNoGraph) {
  EXPECT_TRUE(IsChipOrchestrator(*Fn(FunctionType::kOrchestration)));
  EXPECT_TRUE(IsChipOrchestrator(*Fn(FunctionType::kOpaque, Level::kChip, Role::kOrchestrator)));
  EXPECT_FALSE(IsChipOrchestrator(*Fn(FunctionType::kGraph, std::nullopt, Role::kOrchestrator)));
  EXPECT_FALSE(IsChipOrchestrator(*Fn(FunctionType::kInCore, Level::kChip)));
  EXPECT_FALSE(IsChipOrchestrator(*Fn(FunctionType::kOrchestration, Level::kHost)));
  EXPECT_FALSE(IsChipOrchestrator(*Fn(FunctionType::kOpaque, Level::kChip)));
}

// ---------------------------------------------------------------------------
// Window buffer size

CallPtr ShapeAlloc(std::vector<ExprPtr> shape, KwargList kwargs) {
  return MakeOpCall(ops::kAllocWindowBuffer, {Tuple(std::move(shape))}, std::move(kwargs));
}

TEST(PassRules, SizeFormIsItsArgument) {
  ExprPtr size = Mul(Int(256), Int(4));
  CallPtr alloc = MakeOpCall(ops::kAllocWindowBuffer, {size}, {});
  EXPECT_EQ(WindowBufferSizeBytes(*alloc), size);
}

TEST(PassRules, ShapeFormIsTheProductOfTheShapeTimesTheDtypeWidth) {
  VarPtr n = MakeVar("n", ScalarTy(DataType::kIndex));
  EXPECT_TRUE(StructuralEqual(
      WindowBufferSizeBytes(*ShapeAlloc({Int(2), n, Int(3)}, {{"dtype", DataType::kFP16}})),
      Mul(Mul(Mul(Int(2), n), Int(3)), Int(2))));
  EXPECT_TRUE(
      StructuralEqual(WindowBufferSizeBytes(*ShapeAlloc({Int(8)}, {{"dtype", DataType::kIndex}})),
                      Mul(Int(8), Int(8))));
  // No dimension: one element.
  EXPECT_TRUE(StructuralEqual(WindowBufferSizeBytes(*ShapeAlloc({}, {{"dtype", DataType::kBool}})),
                              Int(1)));
}

TEST(PassRules, NoSizeWithoutDtypeOrForOtherCalls) {
  // Only IR built by hand lacks the dtype: the op registry requires it.
  auto no_dtype = ir::MakeNode<Call>(OpRegistry::Get().GetOp(ops::kAllocWindowBuffer),
                                     std::vector<ExprPtr>{Tuple({Int(4)})}, KwargList{},
                                     ExprAttrList{}, UnknownType::Get());
  EXPECT_EQ(WindowBufferSizeBytes(*no_dtype), nullptr);
  EXPECT_EQ(WindowBufferSizeBytes(*MakeOpCall(ops::kWorldSize, {}, {})), nullptr);
}

// ---------------------------------------------------------------------------
// Device coverage

Devices Ids(std::vector<int64_t> ids) { return Devices{false, std::move(ids)}; }

TEST(PassRules, AllAbsorbs) {
  EXPECT_EQ(Merge(Devices::All(), Ids({1, 2})), Devices::All());
  EXPECT_EQ(Merge(Ids({1, 2}), Devices::All()), Devices::All());
  EXPECT_EQ(Merge(Ids({}), Devices::All()), Devices::All());
}

TEST(PassRules, SetsUniteInAscendingOrder) {
  EXPECT_EQ(Merge(Ids({0, 5}), Ids({1, 5, 9})), Ids({0, 1, 5, 9}));
  EXPECT_EQ(Merge(Ids({3}), Ids({})), Ids({3}));
}

TEST(PassRules, TheEmptySetIsNeverAll) {
  EXPECT_EQ(Merge(Ids({}), Ids({})), Ids({}));
  EXPECT_TRUE(Merge(Ids({}), Ids({})).Empty());
  EXPECT_FALSE(Devices::All().Empty());
}

TEST(PassRules, RangeCoversStartToStopMinusOne) {
  EXPECT_EQ(Devices::Range(2, 5), Ids({2, 3, 4}));
  EXPECT_EQ(Devices::Range(3, 3), Ids({}));
  EXPECT_EQ(Devices::Range(4, 1), Ids({}));
  EXPECT_EQ(Devices::One(7), Ids({7}));
}

}  // namespace
}  // namespace cds::pass::testing
