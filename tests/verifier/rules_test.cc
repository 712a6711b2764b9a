// The rules the verifier states itself: which functions orchestrate, device sets
// and how they merge, an alloc's byte size. Expectations are written from the
// rules (docs/verifier.md), never computed by the code under test.

#include <gtest/gtest.h>

#include "ir/ir.h"
#include "tests/verifier/fixtures.h"
#include "verifier/byte_size.h"
#include "verifier/devices.h"
#include "verifier/orchestrators.h"
#include "verifier/verifier.h"

namespace cds::verify::testing {
namespace {

using namespace cds::ir;

FunctionPtr Fn(FunctionType type, std::optional<Level> level = std::nullopt,
               std::optional<Role> role = std::nullopt) {
  return ir::MakeNode<Function>("f", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                                std::vector<TypePtr>{}, Seq({}), type, level, role);
}

TEST(VerifierOrchestrators, LevelDefaultsFromTheType) {
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kOrchestration)), Level::kChip);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kGraph)), Level::kChip);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kInCore)), Level::kChipDie);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kAIC)), Level::kAIC);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kAIV)), Level::kAIV);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kGroup)), Level::kCoreGroup);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kOpaque)), std::nullopt);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kSpmd)), std::nullopt);
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kInline)), std::nullopt);
  // A declared level wins over the type's.
  EXPECT_EQ(LevelOf(*Fn(FunctionType::kOrchestration, Level::kHost)), Level::kHost);
}

TEST(VerifierOrchestrators, HostAndChipOrchestrators) {
  struct Case {
    FunctionPtr fn;
    bool host, chip;
  };
  const Case cases[] = {
      {Fn(FunctionType::kOpaque, Level::kHost, Role::kOrchestrator), true, false},
      {Fn(FunctionType::kOrchestration, Level::kHost), true, false},
      {Fn(FunctionType::kOpaque, Level::kHost), false, false},
      {Fn(FunctionType::kOpaque, Level::kHost, Role::kSubWorker), false, false},
      {Fn(FunctionType::kOrchestration), false, true},  // CHIP from the type
      {Fn(FunctionType::kOpaque, Level::kChip, Role::kOrchestrator), false, true},
      {Fn(FunctionType::kGraph), false, false},  // CHIP, but a Graph is no chip orchestrator
      {Fn(FunctionType::kGraph, Level::kChip, Role::kOrchestrator), false, false},
      {Fn(FunctionType::kOpaque, Level::kChip), false, false},
      {Fn(FunctionType::kInCore, std::nullopt, Role::kOrchestrator), false, false},
      {Fn(FunctionType::kOrchestration, Level::kChipDie), false, false},
      {Fn(FunctionType::kOpaque, Level::kGlobal, Role::kOrchestrator), false, false},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(IsHostOrchestrator(*cases[i].fn), cases[i].host) << "case " << i;
    EXPECT_EQ(IsChipOrchestrator(*cases[i].fn), cases[i].chip) << "case " << i;
  }
}

TEST(VerifierDevices, AllAbsorbsAndSubsetsUnite) {
  Devices a = Devices::Range(0, 2);  // {0, 1}
  a.Absorb(Devices::One(5));
  a.Absorb(Devices::Range(2, 4));  // touches {0, 1}: one run [0, 3]
  EXPECT_EQ(a.ToString(), "[0, 1, 2, 3, 5]");
  EXPECT_EQ(a, Devices::FromScope(DeviceSet{false, {0, 1, 2, 3, 5}}));
  a.Absorb(Devices::One(4));
  EXPECT_EQ(a, Devices::Range(0, 6));
  EXPECT_NE(a, Devices::Range(0, 7));

  Devices all = Devices::All();
  all.Absorb(Devices::One(3));
  EXPECT_TRUE(all.all());
  Devices some = Devices::One(3);
  some.Absorb(Devices::All());
  EXPECT_TRUE(some.all());
  EXPECT_EQ(some, Devices::All());
  EXPECT_EQ(some.ToString(), "all");

  Devices empty = Devices::Range(3, 3);
  EXPECT_TRUE(empty.Empty());
  EXPECT_FALSE(empty.all());
  EXPECT_NE(empty, Devices::All());  // an empty subset is never "all devices"
  EXPECT_EQ(empty.ToString(), "[]");

  // Merging in any order gives one set; the largest id joins without overflow.
  const int64_t max = std::numeric_limits<int64_t>::max();
  Devices x = Devices::One(max);
  x.Absorb(Devices::One(max - 1));
  Devices y = Devices::One(max - 1);
  y.Absorb(Devices::One(max));
  EXPECT_EQ(x, y);
  EXPECT_EQ(x.ToString(), "[9223372036854775806, 9223372036854775807]");
}

TEST(VerifierDevices, ScopeListsAreReadAsSetsAndJudgedAsLists) {
  EXPECT_EQ(Devices::FromScope(DeviceSet{false, {1, 0}}), Devices::Range(0, 2));
  EXPECT_TRUE(Devices::IsCanonical(DeviceSet{false, {0, 1, 7}}));
  EXPECT_TRUE(Devices::IsCanonical(DeviceSet{true, {}}));
  EXPECT_FALSE(Devices::IsCanonical(DeviceSet{false, {1, 0}}));
  EXPECT_FALSE(Devices::IsCanonical(DeviceSet{false, {1, 1}}));
  EXPECT_FALSE(Devices::IsCanonical(DeviceSet{true, {1}}));
  EXPECT_EQ(BriefDeviceList(DeviceSet{false, {1, 0}}), "[1, 0]");
  EXPECT_EQ(Devices::Range(0, 20).Brief(), "[0, 1, 2, 3, 4, 5, 6, 7, ..., 19] (20 devices)");
  EXPECT_EQ(Devices::Range(0, 17).ToString(),
            "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]");
  EXPECT_EQ(Devices::Range(0, 16).Brief(), Devices::Range(0, 16).ToString());
}

TEST(VerifierByteSize, FoldsToOneValue) {
  auto same = [](const ExprPtr& a, const ExprPtr& b) {
    return SameByteSize(FoldByteSize(a), FoldByteSize(b));
  };
  EXPECT_TRUE(same(Mul(Int(256), Int(4)), Int(1024)));
  EXPECT_TRUE(same(Mul(Int(4), Int(256)), Mul(Int(256), Int(4))));
  EXPECT_FALSE(same(Add(Mul(Int(256), Int(4)), Int(1)), Mul(Int(256), Int(4))));
  EXPECT_TRUE(same(Add(Mul(Int(256), Int(4)), Int(1)), Int(1025)));
  VarPtr n = MakeVar("n", ScalarTy(DataType::kIndex));
  VarPtr m = MakeVar("m", ScalarTy(DataType::kIndex));
  EXPECT_TRUE(same(Mul(Mul(n, Int(2)), Int(4)), Mul(Int(8), n)));
  EXPECT_FALSE(same(Mul(n, Int(4)), Mul(m, Int(4))));  // the same shape over another Var
  EXPECT_FALSE(same(Mul(n, Int(4)), Mul(n, Int(8))));
  EXPECT_EQ(ByteSizeText(FoldByteSize(Mul(Mul(n, Int(2)), Int(4)))), "8 * n");
}

TEST(VerifierByteSize, AnAllocAsksForItsArgumentOrShapeTimesWidth) {
  std::string why;
  auto scalar = MakeOpCall(ops::kAllocWindowBuffer, {Mul(Int(64), Int(4))});
  auto s = AllocByteSize(*scalar, &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->constant, 256);
  // The widths PyPTO gives: FP16 2 bytes, FP32 4, INDEX 8, BOOL 1.
  const std::pair<DataType, int64_t> widths[] = {
      {DataType::kFP16, 2}, {DataType::kFP32, 4}, {DataType::kIndex, 8}, {DataType::kBool, 1}};
  for (const auto& [dt, width] : widths) {
    auto shaped = MakeOpCall(ops::kAllocWindowBuffer, {Tuple({Int(2), Int(3)})}, {{"dtype", dt}});
    auto size = AllocByteSize(*shaped, &why);
    ASSERT_TRUE(size) << why;
    EXPECT_EQ(size->constant, 6 * width) << DataTypeName(dt);
    EXPECT_TRUE(size->factors.empty());
  }
  // The registry rejects this call: a copy of a good one loses its dtype=.
  auto no_dtype = ir::MakeNode<Call>(
      *MakeOpCall(ops::kAllocWindowBuffer, {Tuple({Int(2)})}, {{"dtype", DataType::kFP32}}));
  no_dtype->kwargs = Kwargs{};
  EXPECT_FALSE(AllocByteSize(*no_dtype, &why));
  EXPECT_NE(why.find("dtype"), std::string::npos) << why;
}

// V019 reads scope device lists as sets: two scopes with {0, 1}, one written
// [1, 0], are duplicates although their texts differ.
TEST(VerifierCoverageChecks, DuplicateScopeDevicesAreComparedAsSets) {
  auto f = AllFixtures()[1];  // subsets: comm_d1 is [0, 1]; comm_d2 becomes [1, 0]
  const auto& host = *f.after->FindFunction("host_orch");
  const auto& outer =
      static_cast<const CommDomainScopeStmt&>(*static_cast<const SeqStmts&>(*host.body).stmts[0]);
  const auto& mid =
      static_cast<const CommDomainScopeStmt&>(*static_cast<const SeqStmts&>(*outer.body).stmts[0]);
  const auto& inner =
      static_cast<const CommDomainScopeStmt&>(*static_cast<const SeqStmts&>(*mid.body).stmts[0]);
  auto new_inner = ir::MakeNode<CommDomainScopeStmt>(inner);
  new_inner->devices = DeviceSet{false, {1, 0}};
  auto new_mid = ir::MakeNode<CommDomainScopeStmt>(mid);
  new_mid->body = Seq({new_inner});
  auto new_outer = ir::MakeNode<CommDomainScopeStmt>(outer);
  new_outer->body = Seq({new_mid});
  auto new_host = ir::MakeNode<Function>(host);
  new_host->body = Seq({new_outer});
  std::vector<FunctionPtr> fns;
  for (const auto& fn : f.after->functions) fns.push_back(fn->name == "host_orch" ? new_host : fn);
  auto p = ir::MakeNode<Program>(f.after->name, f.after->dynamic_dims, fns);
  VerifyOptions o;
  o.round_trip = false;
  auto diags = VerifyProgram(p, o);
  EXPECT_TRUE(HasCode(diags, "CDS-V019")) << FormatDiagnostics(diags);
  // The unsorted list itself is reported as well.
  bool unsorted = false;
  for (const auto& d : diags) {
    unsorted |= d.code == "CDS-V018" && d.message.find("[1, 0]") != std::string::npos &&
                d.message.find("increasing order") != std::string::npos;
  }
  EXPECT_TRUE(unsorted) << FormatDiagnostics(diags);
}

}  // namespace
}  // namespace cds::verify::testing
