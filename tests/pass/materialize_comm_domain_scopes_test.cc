#include "pass/materialize_comm_domain_scopes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/structural_equal.h"
#include "tests/pass/pass_test_util.h"

namespace cds::pass::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// host(buf -> data, dispatched by `dispatch`) with chip_orch taking one FP32 view.
ProgramPtr OneAlloc(const std::function<void(Body&, const VarPtr& data)>& dispatch) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr data = b.Window("data", buf, {256}, 3);
  dispatch(b, data);
  b.Ret({Int(0)}, 20);
  return Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)});
}

// Expected device lists, written out: ascending ids, or all devices.
DeviceSet Ids(std::vector<int64_t> ids) { return DeviceSet{false, std::move(ids)}; }
DeviceSet AllDevices() { return DeviceSet{true, {}}; }

DeviceSet DevicesOf(const ProgramPtr& p) {
  ProgramPtr out = MaterializeCommDomainScopes(p);
  auto scopes = Scopes(out->FindFunction("host_orch"));
  EXPECT_EQ(scopes.size(), 1u);
  return scopes.empty() ? Ids({}) : scopes[0]->devices;
}

CaughtError ErrorOfProgram(const ProgramPtr& p) {
  return ErrorOf([&] { MaterializeCommDomainScopes(p); });
}

// ---------------------------------------------------------------------------
// The device= table

TEST(McdsDevices, ConstIntDispatchesGiveTheirIds) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Dispatch("chip_orch", {d}, Int(0), 4);
    b.Dispatch("chip_orch", {d}, Int(3), 5);
  });
  EXPECT_EQ(DevicesOf(p), Ids({0, 3}));
}

TEST(McdsDevices, WorldSizeLoopIsAll) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.WorldLoop("r", 4, [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 5); });
  });
  EXPECT_EQ(DevicesOf(p), AllDevices());
}

TEST(McdsDevices, RangeStopIsZeroToStopMinusOne) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Range("r", 3, 4, [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 5); });
  });
  EXPECT_EQ(DevicesOf(p), Ids({0, 1, 2}));
}

TEST(McdsDevices, RangeStartStopIsStartToStopMinusOne) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Loop("r", Int(2), Int(5), Int(1), 4,
           [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 5); });
  });
  EXPECT_EQ(DevicesOf(p), Ids({2, 3, 4}));
}

TEST(McdsDevices, UnrollBehavesLikeRange) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Loop(
        "r", Int(1), Int(3), Int(1), 4,
        [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 5); }, ForKind::kUnroll);
  });
  EXPECT_EQ(DevicesOf(p), Ids({1, 2}));
}

TEST(McdsDevices, LoopBoundThroughWorldSizeVar) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    VarPtr n = b.Let("n", b.WorldSize(4), 4);
    b.Loop("r", Int(0), n, Int(1), 5,
           [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 6); });
  });
  EXPECT_EQ(DevicesOf(p), AllDevices());
}

TEST(McdsDevices, LoopBoundThroughConstVar) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    VarPtr n = b.Let("n", Int(2), 4);
    b.Loop("r", Int(0), n, Int(1), 5,
           [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 6); });
  });
  EXPECT_EQ(DevicesOf(p), Ids({0, 1}));
}

TEST(McdsDevices, OuterLoopVariableInsideInnerLoop) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Range("r", 2, 4, [&](Body& outer, const VarPtr& r) {
      outer.Range("i", 7, 5,
                  [&](Body& inner, const VarPtr&) { inner.Dispatch("chip_orch", {d}, r, 6); });
    });
  });
  EXPECT_EQ(DevicesOf(p), Ids({0, 1}));
}

TEST(McdsDevices, EmptyRangeIsEmptyCoverageNeverAll) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Range("r", 0, 4, [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 5); });
  });
  CaughtError e = ErrorOfProgram(p);
  ASSERT_TRUE(e.thrown);
  EXPECT_THAT(e.message, HasSubstr("'buf'"));
  EXPECT_THAT(e.message, HasSubstr("empty device coverage"));
  EXPECT_EQ(e.line, 2);  // the alloc
}

// No device=: the runtime places the dispatch; it covers no device and is no error.
TEST(McdsDevices, DispatchWithoutDeviceAddsNoCoverage) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Dispatch("chip_orch", {d}, nullptr, 4);
    b.Dispatch("chip_orch", {d}, Int(3), 5);
    b.Range("r", 2, 6, [&](Body& in, const VarPtr&) { in.Dispatch("chip_orch", {d}, nullptr, 7); });
  });
  EXPECT_EQ(DevicesOf(p), Ids({3}));
}

TEST(McdsDevices, AllocReachingOnlyDispatchesWithoutDeviceIsRejectedAtTheAlloc) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) { b.Dispatch("chip_orch", {d}, nullptr, 4); });
  CaughtError e = ErrorOfProgram(p);
  ASSERT_TRUE(e.thrown);
  EXPECT_THAT(e.message, HasSubstr("'buf' is not consumed by any chip orchestrator dispatch"));
  EXPECT_THAT(e.message, HasSubstr("without device= is placed at run time"));
  EXPECT_EQ(e.line, 2);  // the alloc
}

struct BadDevice {
  const char* label;
  std::function<void(Body&, const VarPtr&)> build;  // dispatch on line 9
  const char* message;
};

class McdsBadDevice : public ::testing::TestWithParam<BadDevice> {};

TEST_P(McdsBadDevice, IsRejectedAtTheDispatch) {
  CaughtError e = ErrorOfProgram(OneAlloc(GetParam().build));
  ASSERT_TRUE(e.thrown);
  EXPECT_THAT(e.message, HasSubstr(GetParam().message));
  EXPECT_THAT(e.message, HasSubstr("chip_orch"));
  EXPECT_EQ(e.line, 9);
}

INSTANTIATE_TEST_SUITE_P(
    Table, McdsBadDevice,
    ::testing::Values(
        BadDevice{"NonUnitStep",
                  [](Body& b, const VarPtr& d) {
                    b.Loop("r", Int(0), Int(4), Int(2), 4,
                           [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 9); });
                  },
                  "non-unit step"},
        BadDevice{"WorldSizeStartNotZero",
                  [](Body& b, const VarPtr& d) {
                    b.Loop("r", Int(1), b.WorldSize(4), Int(1), 4,
                           [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 9); });
                  },
                  "pld.system.world_size() with a start other than 0"},
        BadDevice{"WorldSizeStepNotOne",
                  [](Body& b, const VarPtr& d) {
                    b.Loop("r", Int(0), b.WorldSize(4), Int(2), 4,
                           [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 9); });
                  },
                  "a step other than 1"},
        BadDevice{"VarNotLoopVariable",
                  [](Body& b, const VarPtr& d) {
                    VarPtr dev = b.Let("dev", Int(1), 4);
                    b.Dispatch("chip_orch", {d}, dev, 9);
                  },
                  "'dev' is not the induction variable"},
        BadDevice{"LoopVariableAfterItsLoop",
                  [](Body& b, const VarPtr& d) {
                    VarPtr r = b.Loop("r", Int(0), Int(2), Int(1), 4, [](Body&, const VarPtr&) {});
                    b.Dispatch("chip_orch", {d}, r, 9);
                  },
                  "'r' is not the induction variable"},
        BadDevice{"WhileCounter",
                  [](Body& b, const VarPtr& d) {
                    VarPtr i = b.Let("i", Int(0), 4);
                    b.WhileTrue(5, [&](Body& in) { in.Dispatch("chip_orch", {d}, i, 9); });
                  },
                  "'i' is not the induction variable"},
        BadDevice{"ArbitraryExpression",
                  [](Body& b, const VarPtr& d) {
                    b.Range("r", 2, 4, [&](Body& in, const VarPtr& r) {
                      in.Dispatch("chip_orch", {d}, Binary(BinaryOp::kAdd, r, Int(1)), 9);
                    });
                  },
                  "got a BinaryExpr expression"},
        BadDevice{"NegativeConstant",
                  [](Body& b, const VarPtr& d) { b.Dispatch("chip_orch", {d}, Int(-1), 9); },
                  "negative constant (-1)"},
        BadDevice{"NonConstantBound",
                  [](Body& b, const VarPtr& d) {
                    VarPtr m = b.Let("m", Binary(BinaryOp::kAdd, Int(1), Int(1)), 4);
                    b.Loop("r", Int(0), m, Int(1), 5,
                           [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 9); });
                  },
                  "neither integer constants nor pld.system.world_size()"}),
    [](const ::testing::TestParamInfo<BadDevice>& info) { return std::string(info.param.label); });

// ---------------------------------------------------------------------------
// Merging

TEST(McdsMerge, AllAbsorbsSubsets) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Dispatch("chip_orch", {d}, Int(5), 4);
    b.WorldLoop("r", 5, [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 6); });
    b.Dispatch("chip_orch", {d}, Int(7), 7);
  });
  EXPECT_EQ(DevicesOf(p), AllDevices());
}

TEST(McdsMerge, SubsetsAreUnioned) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) {
    b.Range("r", 2, 4, [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {d}, r, 5); });
    b.Loop("q", Int(1), Int(4), Int(1), 6,
           [&](Body& in, const VarPtr& q) { in.Dispatch("chip_orch", {d}, q, 7); });
    b.Dispatch("chip_orch", {d}, Int(9), 8);
  });
  EXPECT_EQ(DevicesOf(p), Ids({0, 1, 2, 3, 9}));
}

// ---------------------------------------------------------------------------
// Collective inheritance

// data (FP32 [8, 64]) dispatched to {1, 2}; sig (INT32 [8, 1], a slot per row of
// data) never dispatched.
struct CollectiveFixture {
  Body b;
  VarPtr data_buf, sig_buf, data, sig;
  CollectiveFixture() {
    data_buf = b.Alloc("data_buf", 2048, 2);
    sig_buf = b.Alloc("sig_buf", 32, 3);
    data = b.Window("data", data_buf, {8, 64}, 4);
    sig = b.Window("sig", sig_buf, {8, 1}, 5, DataType::kInt32);
    b.Dispatch("chip_orch", {data}, Int(1), 6);
    b.Dispatch("chip_orch", {data}, Int(2), 7);
  }
  ProgramPtr Build() {
    b.Ret({Int(0)}, 30);
    return Prog({ChipOrch("chip_orch", {DistTensorTy(Shape({8, 64}), DataType::kFP32)}),
                 Host("host_orch", b)});
  }
};

TEST(McdsInherit, AllReduceSignalInheritsData) {
  CollectiveFixture fx;
  fx.b.Do(fx.b.Op(ops::kAllReduce, {fx.data, fx.sig}, {{"op", EnumAttr{"pld.ReduceOp.Sum"}}}, 8),
          8);
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0]->devices, Ids({1, 2}));
  EXPECT_THAT(SlotNames(scopes[0]), ElementsAre("data_buf", "sig_buf"));
}

TEST(McdsInherit, BroadcastSignalInheritsData) {
  CollectiveFixture fx;
  fx.b.Do(fx.b.Op(ops::kBroadcast, {fx.data, fx.sig}, {{"root", int64_t{0}}}, 8), 8);
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0]->devices, Ids({1, 2}));
  EXPECT_THAT(SlotNames(scopes[0]), ElementsAre("data_buf", "sig_buf"));
}

TEST(McdsInherit, ReduceScatterSignalInheritsData) {
  CollectiveFixture fx;
  fx.b.Do(fx.b.Op(ops::kReduceScatter, {fx.data, fx.sig}, {}, 8), 8);
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_THAT(SlotNames(scopes[0]), ElementsAre("data_buf", "sig_buf"));
}

// input dispatched to {5}, target to {1, 2}: the signal follows the target only.
// The input is one row [1, 64] for allgather, as many rows as the target for
// all_to_all.
void CheckTargetPairing(std::string_view op) {
  CollectiveFixture fx;
  const int64_t rows = op == ops::kAllGather ? 1 : 8;
  VarPtr in_buf = fx.b.Alloc("in_buf", rows * 64 * 4, 8);
  VarPtr in = fx.b.Window("inp", in_buf, {rows, 64}, 9);
  fx.b.Dispatch("chip_orch", {in}, Int(5), 10);
  fx.b.Do(fx.b.Op(op, {in, fx.data, fx.sig}, {}, 11), 11);
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 2u) << op;
  EXPECT_EQ(scopes[0]->devices, Ids({1, 2}));
  EXPECT_THAT(SlotNames(scopes[0]), ElementsAre("data_buf", "sig_buf"));
  EXPECT_EQ(scopes[1]->devices, Ids({5}));
  EXPECT_THAT(SlotNames(scopes[1]), ElementsAre("in_buf"));
}

TEST(McdsInherit, AllGatherSignalInheritsTarget) { CheckTargetPairing(ops::kAllGather); }
TEST(McdsInherit, AllToAllSignalInheritsTarget) { CheckTargetPairing(ops::kAllToAll); }

TEST(McdsInherit, AllToAllVSignalAndRecvCountsBothInheritTarget) {
  CollectiveFixture fx;
  VarPtr in_buf = fx.b.Alloc("in_buf", 2048, 8);
  VarPtr send_buf = fx.b.Alloc("send_buf", 32, 9);
  VarPtr recv_buf = fx.b.Alloc("recv_buf", 32, 10);
  VarPtr in = fx.b.Window("inp", in_buf, {8, 64}, 11);
  // One count per rank: NR = 8, the signal's first dim.
  VarPtr send = fx.b.Window("send", send_buf, {8, 1}, 12, DataType::kInt32);
  VarPtr recv = fx.b.Window("recv", recv_buf, {8, 1}, 13, DataType::kInt32);
  fx.b.Dispatch("chip_orch", {in, send}, Int(5), 14);
  fx.b.Do(fx.b.Op(ops::kAllToAllV, {in, fx.data, fx.sig, send, recv}, {}, 15), 15);
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 2u);
  EXPECT_EQ(scopes[0]->devices, Ids({1, 2}));
  EXPECT_THAT(SlotNames(scopes[0]), ElementsAre("data_buf", "sig_buf", "recv_buf"));
  EXPECT_EQ(scopes[1]->devices, Ids({5}));
  EXPECT_THAT(SlotNames(scopes[1]), ElementsAre("in_buf", "send_buf"));
}

TEST(McdsInherit, OwnDispatchAndInheritedCoverageAreMerged) {
  CollectiveFixture fx;
  fx.b.Dispatch("chip_orch", {fx.sig}, Int(7), 8);
  fx.b.Do(fx.b.Op(ops::kAllReduce, {fx.data, fx.sig}, {}, 9), 9);
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 2u);
  EXPECT_EQ(scopes[1]->devices, Ids({1, 2, 7}));
  EXPECT_THAT(SlotNames(scopes[1]), ElementsAre("sig_buf"));
}

TEST(McdsInherit, NoTransitiveChains) {
  // sig inherits {1, 2} from data, but only dispatch coverage is handed on: sig
  // has none of its own to give sig2.
  CollectiveFixture fx;
  VarPtr sig2_buf = fx.b.Alloc("sig2_buf", 16, 8);
  VarPtr sig2 = fx.b.Window("sig2", sig2_buf, {4, 1}, 9, DataType::kInt32);
  fx.b.Do(fx.b.Op(ops::kAllReduce, {fx.data, fx.sig}, {}, 10), 10);
  // A broadcast, since an allreduce does not take INT32 data.
  fx.b.Do(fx.b.Op(ops::kBroadcast, {fx.sig, sig2}, {{"root", int64_t{0}}}, 11), 11);
  CaughtError e = ErrorOfProgram(fx.Build());
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 11);
  EXPECT_THAT(e.message,
              HasSubstr("data window buffer 'sig_buf' has no dispatch coverage to pass on"));
}

TEST(McdsInherit, BarrierWithOwnCoverageKeepsIt) {
  CollectiveFixture fx;
  fx.b.Dispatch("chip_orch", {fx.sig}, Int(3), 8);
  fx.b.Do(fx.b.Op(ops::kBarrier, {fx.sig}, {}, 9), 9);
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 2u);
  EXPECT_EQ(scopes[1]->devices, Ids({3}));
  EXPECT_THAT(SlotNames(scopes[1]), ElementsAre("sig_buf"));
}

TEST(McdsInherit, BarrierWithoutCoverageIsRejected) {
  CollectiveFixture fx;
  fx.b.Do(fx.b.Op(ops::kBarrier, {fx.sig}, {}, 9), 9);
  CaughtError e = ErrorOfProgram(fx.Build());
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 9);
  EXPECT_THAT(e.message, HasSubstr("pld.tensor.barrier"));
  EXPECT_THAT(e.message, HasSubstr("'sig_buf' has no dispatch coverage"));
}

TEST(McdsInherit, BarrierDoesNotUseInheritedCoverage) {
  CollectiveFixture fx;
  fx.b.Do(fx.b.Op(ops::kAllReduce, {fx.data, fx.sig}, {}, 8), 8);
  fx.b.Do(fx.b.Op(ops::kBarrier, {fx.sig}, {}, 9), 9);
  CaughtError e = ErrorOfProgram(fx.Build());
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 9);
}

TEST(McdsInherit, CollectiveDataWithoutCoverageIsRejected) {
  Body b;
  VarPtr data_buf = b.Alloc("data_buf", 1024, 2);
  VarPtr sig_buf = b.Alloc("sig_buf", 16, 3);
  VarPtr data = b.Window("data", data_buf, {256}, 4);
  VarPtr sig = b.Window("sig", sig_buf, {4, 1}, 5, DataType::kInt32);
  b.Dispatch("chip_orch", {sig}, Int(0), 6);
  b.Do(b.Op(ops::kAllReduce, {data, sig}, {}, 7), 7);
  CaughtError e = ErrorOfProgram(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}));
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 7);
  EXPECT_THAT(
      e.message,
      HasSubstr("pld.tensor.allreduce: data window buffer 'data_buf' has no dispatch coverage"));
}

TEST(McdsInherit, CollectiveArgumentThatIsNoViewIsRejected) {
  CollectiveFixture fx;
  VarPtr param_sig = MakeVar("param_sig", DistTensorTy(Shape({4, 1}), DataType::kInt32));
  fx.b.Do(fx.b.Op(ops::kAllReduce, {fx.data, param_sig}, {}, 8), 8);
  fx.b.Ret({Int(0)}, 30);
  auto p = Prog({ChipOrch("chip_orch", {DistTensorTy(Shape({8, 64}), DataType::kFP32)}),
                 Host("host_orch", fx.b, {param_sig})});
  CaughtError e = ErrorOfProgram(p);
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 8);
  EXPECT_THAT(e.message, HasSubstr("signal argument does not resolve to a window view"));
}

TEST(McdsInherit, AllToAllVInsideLoopsIsRejected) {
  for (bool use_while : {false, true}) {
    CollectiveFixture fx;
    auto body = [&](Body& in) {
      in.Do(in.Op(ops::kAllToAllV, {fx.data, fx.data, fx.sig, fx.sig, fx.sig}, {}, 12), 12);
    };
    if (use_while) {
      fx.b.WhileTrue(11, body);
    } else {
      fx.b.Range("i", 2, 11, [&](Body& in, const VarPtr&) { body(in); });
    }
    CaughtError e = ErrorOfProgram(fx.Build());
    ASSERT_TRUE(e.thrown) << use_while;
    EXPECT_EQ(e.line, 12);
    EXPECT_THAT(e.message, HasSubstr("all_to_all_v is not supported inside a for/while loop"));
  }
}

TEST(McdsInherit, ExplicitSignalAllReduceInsideLoopIsFine) {
  CollectiveFixture fx;
  fx.b.Range("i", 2, 8, [&](Body& in, const VarPtr&) {
    in.Do(in.Op(ops::kAllReduce, {fx.data, fx.sig}, {}, 9), 9);
  });
  auto scopes = Scopes(MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_THAT(SlotNames(scopes[0]), ElementsAre("data_buf", "sig_buf"));
}

// ---------------------------------------------------------------------------
// View resolution and retyping

TEST(McdsViews, MultipleViewsShareOneWindowBuffer) {
  Body b;
  VarPtr buf = b.Alloc("buf", 2048, 2);
  VarPtr va = b.Window("view_a", buf, {256}, 3);
  VarPtr vb = b.Window("view_b", buf, {256}, 4);
  b.Dispatch("chip_orch", {va, vb}, Int(0), 5);
  auto out = MaterializeCommDomainScopes(
      Prog({ChipOrch("chip_orch", {F32View(), F32View()}), Host("host_orch", b)}));
  auto host = out->FindFunction("host_orch");
  auto scopes = Scopes(host);
  ASSERT_EQ(scopes.size(), 1u);
  ASSERT_EQ(scopes[0]->slots.size(), 1u);
  WindowBufferPtr wb = scopes[0]->slots[0];
  auto da = DefOf(host, "view_a");
  auto db = DefOf(host, "view_b");
  ASSERT_TRUE(da && db);
  ASSERT_TRUE(DistOf(da->var) && DistOf(db->var));
  EXPECT_EQ(DistOf(da->var)->window_buffer, wb);
  EXPECT_EQ(DistOf(db->var)->window_buffer, wb);
  // Fresh Vars, the defining Calls re-minted with exactly the Var's type.
  EXPECT_NE(da->var, va);
  EXPECT_EQ(da->value->type, da->var->type);
  EXPECT_EQ(db->value->type, db->var->type);
  // The dispatch uses the fresh Vars.
  auto inner = InnerStmts(host);
  auto dispatch = As<Call>(As<EvalStmt>(inner[3])->expr);
  EXPECT_EQ(dispatch->args[0], da->var);
  EXPECT_EQ(dispatch->args[1], db->var);
  // The WindowBuffer: base = alloc Var, size = the alloc's size, no host staging.
  auto alloc = DefOf(host, "buf");
  EXPECT_EQ(wb->base, alloc->var);
  EXPECT_EQ(wb->base, buf);
  EXPECT_EQ(wb->size, As<Call>(alloc->value)->args[0]);
  EXPECT_EQ(wb->name_hint, "buf");
  EXPECT_FALSE(wb->load_from_host);
  EXPECT_FALSE(wb->store_to_host);
}

TEST(McdsViews, ShapeFormAllocSizeIsShapeTimesBytes) {
  Body b;
  VarPtr buf = b.Let("buf",
                     b.Op(ops::kAllocWindowBuffer, {Tuple({Int(2), Int(256)})},
                          {{"dtype", DataType::kFP32}, {"name", std::string("buf")}}, 2),
                     2);
  VarPtr v = b.Window("v", buf, {512}, 3);
  b.Dispatch("chip_orch", {v}, Int(0), 4);
  auto host = MaterializeCommDomainScopes(
                  Prog({ChipOrch("chip_orch", {F32View(512)}), Host("host_orch", b)}))
                  ->FindFunction("host_orch");
  auto scopes = Scopes(host);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_TRUE(StructuralEqual(scopes[0]->slots[0]->size, Mul(Mul(Int(2), Int(256)), Int(4))));
}

TEST(McdsViews, AliasResolvesToTheViewAlloc) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr v = b.Window("v", buf, {256}, 3);
  VarPtr w = b.Let("w", v, 4);
  b.Dispatch("chip_orch", {w}, Int(4), 5);  // only the alias reaches a dispatch
  auto host =
      MaterializeCommDomainScopes(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}))
          ->FindFunction("host_orch");
  auto scopes = Scopes(host);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0]->devices, Ids({4}));
  auto alias = DefOf(host, "w");
  auto view = DefOf(host, "v");
  ASSERT_TRUE(DistOf(alias->var));
  EXPECT_EQ(DistOf(alias->var)->window_buffer, scopes[0]->slots[0]);
  EXPECT_EQ(alias->value, view->var);  // the alias's RHS is the fresh view Var
}

TEST(McdsViews, InPlaceCollectiveResultsResolveAndAreReminted) {
  CollectiveFixture fx;
  VarPtr r = fx.b.Let("r", fx.b.Op(ops::kAllReduce, {fx.data, fx.sig}, {}, 8), 8);
  // allgather's input is one row [1, 64]: here a second view of data_buf.
  VarPtr row = fx.b.Window("row", fx.data_buf, {1, 64}, 9);
  VarPtr g = fx.b.Let("g", fx.b.Op(ops::kAllGather, {row, r, fx.sig}, {}, 10), 10);
  fx.b.Dispatch("chip_orch", {g}, Int(6), 11);  // coverage reaches data_buf through g -> r -> data
  auto host = MaterializeCommDomainScopes(fx.Build())->FindFunction("host_orch");
  auto scopes = Scopes(host);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0]->devices, Ids({1, 2, 6}));
  WindowBufferPtr data_wb = scopes[0]->slots[0];
  for (const char* name : {"data", "r", "row", "g"}) {
    auto def = DefOf(host, name);
    ASSERT_TRUE(def && DistOf(def->var)) << name;
    EXPECT_EQ(DistOf(def->var)->window_buffer, data_wb) << name;
    EXPECT_EQ(def->value->type, def->var->type) << name;
  }
  EXPECT_EQ(DistOf(DefOf(host, "sig")->var)->window_buffer, scopes[0]->slots[1]);
}

// IR built by hand may use a Var before the statement defining it (in walk
// order): every definition is collected before any use is looked at.
TEST(McdsViews, ViewUsedBeforeItsDefinitionIsResolvedAndRetyped) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr data = b.Window("data", buf, {256}, 4);
  StmtPtr definition = b.stmts.back();
  b.stmts.pop_back();
  b.Dispatch("chip_orch", {data}, Int(3), 3);
  b.stmts.push_back(definition);
  auto host =
      MaterializeCommDomainScopes(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}))
          ->FindFunction("host_orch");
  auto scopes = Scopes(host);
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0]->devices, Ids({3}));
  auto def = DefOf(host, "data");
  ASSERT_TRUE(def && DistOf(def->var));
  EXPECT_EQ(DistOf(def->var)->window_buffer, scopes[0]->slots[0]);
  auto inner = InnerStmts(host);
  ASSERT_EQ(inner.size(), 3u);
  EXPECT_EQ(As<Call>(As<EvalStmt>(inner[1])->expr)->args[0], def->var);
}

TEST(McdsDevices, LoopBoundDefinedAfterTheLoop) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr data = b.Window("data", buf, {256}, 3);
  VarPtr n = MakeVar("n", ScalarTy(DataType::kInt64), At(6));
  b.Loop("r", Int(0), n, Int(1), 4,
         [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {data}, r, 5); });
  b.stmts.push_back(Assign(n, Int(3), At(6)));
  EXPECT_EQ(DevicesOf(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)})),
            Ids({0, 1, 2}));
}

TEST(McdsViews, NonVarArgumentsAreNotResolved) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr v = b.Window("v", buf, {256}, 3);
  auto sub = ir::MakeNode<Subscript>(v, std::vector<ExprPtr>{Int(0)}, UnknownType::Get());
  b.Dispatch("chip_orch", {sub}, Int(0), 4);
  CaughtError e = ErrorOfProgram(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}));
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 2);
  EXPECT_THAT(e.message, HasSubstr("'buf' is not consumed by any chip orchestrator dispatch"));
}

TEST(McdsViews, CallsOfInCoreAndGraphFunctionsAreNotDispatches) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr v = b.Window("v", buf, {256}, 3);
  b.Dispatch("kernel", {v}, Int(0), 4);
  b.Dispatch("graph", {v}, Int(1), 5);
  auto p = Prog({ChipOrch("kernel", {F32View()}, FunctionType::kInCore),
                 ChipOrch("graph", {F32View()}, FunctionType::kGraph), Host("host_orch", b)});
  CaughtError e = ErrorOfProgram(p);
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 2);
  EXPECT_THAT(e.message, HasSubstr("not consumed by any chip orchestrator dispatch"));
}

TEST(McdsViews, RoleOrchestratorAtChipLevelIsADispatchTarget) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr v = b.Window("v", buf, {256}, 3);
  b.Dispatch("worker", {v}, Int(2), 4);
  auto chip = ir::MakeNode<Function>("worker", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                                     std::vector<TypePtr>{}, Seq({}), FunctionType::kOpaque,
                                     Level::kChip, Role::kOrchestrator);
  EXPECT_EQ(DevicesOf(Prog({chip, Host("host_orch", b)})), Ids({2}));
}

TEST(McdsViews, ChipOrchAndInCoreFunctionsComeBackUntouched) {
  auto chip = ChipOrch("chip_orch", {F32View()});
  auto kernel = ChipOrch("kernel", {F32View()}, FunctionType::kInCore);
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr v = b.Window("v", buf, {256}, 3);
  b.Dispatch("chip_orch", {v}, Int(0), 4);
  b.Dispatch("kernel", {v}, Int(0), 5);
  auto out = MaterializeCommDomainScopes(Prog({chip, kernel, Host("host_orch", b)}));
  EXPECT_EQ(out->FindFunction("chip_orch"), chip);
  EXPECT_EQ(out->FindFunction("kernel"), kernel);
  EXPECT_EQ(DistOf(chip->params[0])->window_buffer, nullptr);
}

TEST(McdsViews, MismatchedCallTypeIsKeptForTheVerifier) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  CallPtr win = b.Op(ops::kWindow, {buf, Tuple({Int(256)})}, {{"dtype", DataType::kFP32}}, 3);
  VarPtr v = MakeVar("v", F32View(128), At(3));  // the Var claims another shape
  b.stmts.push_back(Assign(v, win, At(3)));
  b.Dispatch("chip_orch", {v}, Int(0), 4);
  auto host =
      MaterializeCommDomainScopes(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}))
          ->FindFunction("host_orch");
  auto def = DefOf(host, "v");
  ASSERT_TRUE(DistOf(def->var));
  EXPECT_NE(DistOf(def->var)->window_buffer, nullptr);
  EXPECT_EQ(def->value->type, win->type);  // not re-minted
}

// ---------------------------------------------------------------------------
// Clustering and output shape

TEST(McdsCluster, DomainsFollowFirstAllocOrder) {
  Body b;
  VarPtr a = b.Alloc("a", 1024, 2);
  VarPtr w = b.Alloc("w", 1024, 3);
  VarPtr c = b.Alloc("c", 1024, 4);
  VarPtr d = b.Alloc("d", 1024, 5);
  VarPtr e = b.Alloc("e", 1024, 6);
  VarPtr va = b.Window("va", a, {256}, 7);
  VarPtr vw = b.Window("vw", w, {256}, 8);
  VarPtr vc = b.Window("vc", c, {256}, 9);
  VarPtr vd = b.Window("vd", d, {256}, 10);
  VarPtr ve = b.Window("ve", e, {256}, 11);
  // Dispatch order differs from alloc order on purpose.
  b.Dispatch("chip_orch", {vd}, Int(2), 12);
  b.Dispatch("chip_orch", {vd}, Int(1), 13);
  b.WorldLoop("r", 14, [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {vw}, r, 15); });
  b.Dispatch("chip_orch", {va}, Int(0), 16);
  b.Dispatch("chip_orch", {vc}, Int(0), 17);
  b.Range("q", 3, 18, [&](Body& in, const VarPtr& q) { in.Dispatch("chip_orch", {ve}, q, 19); });
  b.Dispatch("chip_orch", {ve}, Int(2), 20);
  const size_t n_stmts = b.stmts.size();
  auto host =
      MaterializeCommDomainScopes(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}))
          ->FindFunction("host_orch");
  auto scopes = Scopes(host);
  ASSERT_EQ(scopes.size(), 4u);
  EXPECT_EQ(scopes[0]->name_hint, "comm_d0");
  EXPECT_EQ(scopes[0]->devices, Ids({0}));
  EXPECT_THAT(SlotNames(scopes[0]), ElementsAre("a", "c"));
  EXPECT_EQ(scopes[1]->name_hint, "comm_d1");
  EXPECT_EQ(scopes[1]->devices, AllDevices());
  EXPECT_THAT(SlotNames(scopes[1]), ElementsAre("w"));
  EXPECT_EQ(scopes[2]->name_hint, "comm_d2");
  EXPECT_EQ(scopes[2]->devices, Ids({1, 2}));
  EXPECT_THAT(SlotNames(scopes[2]), ElementsAre("d"));
  EXPECT_EQ(scopes[3]->name_hint, "comm_d3");
  EXPECT_EQ(scopes[3]->devices, Ids({0, 1, 2}));
  EXPECT_THAT(SlotNames(scopes[3]), ElementsAre("e"));
  for (const auto& s : scopes) EXPECT_TRUE(s->attrs.empty());
  // The innermost body is the original statement list.
  EXPECT_EQ(InnerStmts(host).size(), n_stmts);
  ASSERT_EQ(host->body->kind(), NodeKind::kSeqStmts);
  EXPECT_EQ(As<SeqStmts>(host->body)->stmts.size(), 1u);
}

TEST(McdsCluster, DuplicateAllocNameInOneScopeIsRejected) {
  Body b;
  VarPtr a = b.Alloc("a", 1024, 2, "shared");
  VarPtr c = b.Alloc("c", 1024, 3, "shared");
  VarPtr va = b.Window("va", a, {256}, 4);
  VarPtr vc = b.Window("vc", c, {256}, 5);
  b.Dispatch("chip_orch", {va, vc}, Int(0), 6);
  CaughtError e =
      ErrorOfProgram(Prog({ChipOrch("chip_orch", {F32View(), F32View()}), Host("host_orch", b)}));
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 3);
  EXPECT_THAT(e.message, HasSubstr("duplicate window buffer name 'shared'"));
}

TEST(McdsCluster, SameAllocNameInDifferentScopesIsFine) {
  Body b;
  VarPtr a = b.Alloc("a", 1024, 2, "shared");
  VarPtr c = b.Alloc("c", 1024, 3, "shared");
  VarPtr va = b.Window("va", a, {256}, 4);
  VarPtr vc = b.Window("vc", c, {256}, 5);
  b.Dispatch("chip_orch", {va}, Int(0), 6);
  b.Dispatch("chip_orch", {vc}, Int(1), 7);
  auto host =
      MaterializeCommDomainScopes(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}))
          ->FindFunction("host_orch");
  EXPECT_EQ(Scopes(host).size(), 2u);
}

TEST(McdsCluster, ScopeNamesRestartPerFunction) {
  auto make = [](const std::string& name) {
    Body b;
    VarPtr buf = b.Alloc("buf", 1024, 2);
    VarPtr v = b.Window("v", buf, {256}, 3);
    b.Dispatch("chip_orch", {v}, Int(0), 4);
    return Host(name, b);
  };
  auto out = MaterializeCommDomainScopes(
      Prog({ChipOrch("chip_orch", {F32View()}), make("h1"), make("h2")}));
  for (const char* name : {"h1", "h2"}) {
    auto scopes = Scopes(out->FindFunction(name));
    ASSERT_EQ(scopes.size(), 1u);
    EXPECT_EQ(scopes[0]->name_hint, "comm_d0");
  }
}

TEST(McdsCluster, DeadAllocIsRejectedAtTheAlloc) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  VarPtr dead = b.Alloc("dead", 1024, 3);
  VarPtr v = b.Window("v", buf, {256}, 4);
  b.Dispatch("chip_orch", {v}, Int(0), 5);
  CaughtError e = ErrorOfProgram(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b)}));
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 3);
  EXPECT_THAT(e.message, HasSubstr("'dead' has no pld.tensor.window materialisation"));
}

TEST(McdsCluster, ViewWithoutDispatchIsRejectedAtTheAlloc) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  b.Window("v", buf, {256}, 3);
  CaughtError e = ErrorOfProgram(Prog({Host("host_orch", b)}));
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 2);
  EXPECT_THAT(e.message, HasSubstr("'buf' is not consumed by any chip orchestrator dispatch"));
}

// ---------------------------------------------------------------------------
// Identity guarantees

TEST(McdsIdentity, SecondRunReturnsTheSamePointer) {
  auto p = OneAlloc([](Body& b, const VarPtr& d) { b.Dispatch("chip_orch", {d}, Int(0), 4); });
  auto once = MaterializeCommDomainScopes(p);
  ASSERT_NE(once, p);
  EXPECT_EQ(MaterializeCommDomainScopes(once), once);
}

TEST(McdsIdentity, ProgramWithoutAllocsIsTheSamePointer) {
  Body b;
  VarPtr x = MakeVar("x", TensorTy(Shape({64}), DataType::kFP32));
  b.Dispatch("chip_orch", {x}, Int(0), 2);
  b.Ret({x}, 3);
  auto p = Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b, {x})});
  EXPECT_EQ(MaterializeCommDomainScopes(p), p);
}

TEST(McdsIdentity, HostWithoutAllocsMayDispatchWithoutDevice) {
  Body b;
  VarPtr x = MakeVar("x", TensorTy(Shape({64}), DataType::kFP32));
  b.Dispatch("chip_orch", {x}, nullptr, 2);
  b.Ret({x}, 3);
  auto p = Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b, {x})});
  EXPECT_EQ(MaterializeCommDomainScopes(p), p);
}

// The scan's checks hold without allocs too: a device= that is present must be valid.
TEST(McdsIdentity, HostWithoutAllocsStillRejectsABadDevice) {
  Body b;
  VarPtr x = MakeVar("x", TensorTy(Shape({64}), DataType::kFP32));
  b.Dispatch("chip_orch", {x}, Int(-1), 2);
  b.Ret({x}, 3);
  CaughtError e =
      ErrorOfProgram(Prog({ChipOrch("chip_orch", {F32View()}), Host("host_orch", b, {x})}));
  ASSERT_TRUE(e.thrown);
  EXPECT_THAT(e.message, HasSubstr("negative constant (-1)"));
  EXPECT_EQ(e.line, 2);
}

TEST(McdsIdentity, NonHostFunctionsAreTheSamePointer) {
  Body inner;
  VarPtr buf =
      inner.Alloc("buf", 1024, 2);  // an alloc outside a host orchestrator is not looked at
  auto chip_level =
      ir::MakeNode<Function>("chip_level", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                             std::vector<TypePtr>{}, inner.Build(), FunctionType::kOrchestration);
  auto p = Prog({chip_level});
  EXPECT_EQ(MaterializeCommDomainScopes(p), p);
}

TEST(McdsIdentity, HostWithOrchestrationTypeAndNoRoleIsAHostOrchestrator) {
  Body b;
  VarPtr buf = b.Alloc("buf", 1024, 2);
  b.Window("v", buf, {256}, 3);
  auto host = ir::MakeNode<Function>("host", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                                     std::vector<TypePtr>{}, b.Build(),
                                     FunctionType::kOrchestration, Level::kHost);
  CaughtError e = ErrorOfProgram(Prog({host}));
  EXPECT_TRUE(e.thrown);  // analysed (and rejected: no dispatch)
}

}  // namespace
}  // namespace cds::pass::testing
