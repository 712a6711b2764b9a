#include "pass/synthesize_allreduce_signals.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/structural_equal.h"
#include "pass/materialize_comm_domain_scopes.h"
#include "tests/pass/pass_test_util.h"

namespace cds::pass::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const KwargList kSum = {{"op", EnumAttr{"pld.ReduceOp.Sum"}}};

// A host body with data_buf -> data dispatched over world_size (lines 2-5).
struct HostFixture {
  Body b;
  VarPtr buf, data;
  HostFixture() {
    buf = b.Alloc("data_buf", 1024, 2);
    data = b.Window("data", buf, {256}, 3);
    b.WorldLoop("r", 4, [&](Body& in, const VarPtr& r) { in.Dispatch("chip_orch", {data}, r, 5); });
  }
  CallPtr AllReduce(int line, KwargList kw = kSum) {
    return b.Op(ops::kAllReduce, {data}, std::move(kw), line);
  }
  ProgramPtr Build(const std::string& name = "host_orch") {
    return Prog({ChipOrch("chip_orch", {F32View()}), Host(name, b)});
  }
};

std::string OpOf(const StmtPtr& s) {
  ExprPtr e;
  if (s->kind() == NodeKind::kAssignStmt) e = As<AssignStmt>(s)->value;
  if (s->kind() == NodeKind::kEvalStmt) e = As<EvalStmt>(s)->expr;
  return e && e->kind() == NodeKind::kCall ? As<Call>(e)->OpName() : std::string();
}

std::string VarName(const StmtPtr& s) {
  return s->kind() == NodeKind::kAssignStmt ? As<AssignStmt>(s)->var->name_hint : std::string();
}

// Checks the three statements synthesized for signal K right before `at`.
void ExpectSignalBefore(const std::vector<StmtPtr>& stmts, size_t at, int64_t k, int64_t core_num) {
  ASSERT_GE(at, 3u);
  auto ws = As<AssignStmt>(stmts[at - 3]);
  auto alloc = As<AssignStmt>(stmts[at - 2]);
  auto win = As<AssignStmt>(stmts[at - 1]);
  EXPECT_EQ(ws->var->name_hint, fmt::format("__allreduce_signal_world_size_{}", k));
  EXPECT_EQ(OpOf(stmts[at - 3]), ops::kWorldSize);
  EXPECT_EQ(alloc->var->name_hint, fmt::format("__allreduce_signal_buf_{}", k));
  EXPECT_EQ(OpOf(stmts[at - 2]), ops::kAllocWindowBuffer);
  auto alloc_call = As<Call>(alloc->value);
  const AttrValue* name = FindKwarg(alloc_call->kwargs, "name");
  ASSERT_TRUE(name && std::holds_alternative<std::string>(*name));
  EXPECT_EQ(std::get<std::string>(*name), alloc->var->name_hint);
  // world_size * core_num * 4, built with the world-size Var itself.
  ExprPtr expected_size = Mul(Mul(ws->var, Int(core_num)), Int(4));
  EXPECT_TRUE(StructuralEqual(alloc_call->args[0], expected_size));
  auto size = As<BinaryExpr>(alloc_call->args[0]);
  EXPECT_EQ(As<BinaryExpr>(size->lhs)->lhs, ws->var);
  EXPECT_EQ(win->var->name_hint, fmt::format("__allreduce_signal_{}", k));
  EXPECT_EQ(OpOf(stmts[at - 1]), ops::kWindow);
  EXPECT_EQ(As<Call>(win->value)->args[0], alloc->var);
  const auto* t = DistOf(win->var);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->dtype, DataType::kInt32);
  ASSERT_EQ(t->shape.size(), 2u);
  EXPECT_EQ(t->shape[0], ws->var);
  EXPECT_TRUE(StructuralEqual(t->shape[1], Int(core_num)));
}

TEST(Sars, BareStatementGetsSignalRightBefore) {
  HostFixture fx;
  fx.b.Do(fx.AllReduce(6), 6);
  fx.b.Ret({Int(0)}, 7);
  auto host = SynthesizeAllReduceSignals(fx.Build())->FindFunction("host_orch");
  auto stmts = Flatten(host->body);
  ASSERT_EQ(stmts.size(), 3u + 3u + 2u);
  ExpectSignalBefore(stmts, 6, 0, 1);
  auto call = As<Call>(As<EvalStmt>(stmts[6])->expr);
  ASSERT_EQ(call->args.size(), 2u);
  EXPECT_EQ(call->args[0], fx.data);
  EXPECT_EQ(call->args[1], As<AssignStmt>(stmts[5])->var);
  EXPECT_EQ(call->kwargs, kSum);
  EXPECT_EQ(call->span().line, 6);
}

TEST(Sars, AssignmentKeepsItsVar) {
  HostFixture fx;
  VarPtr out = fx.b.Let("out", fx.AllReduce(6), 6);
  fx.b.Ret({out}, 7);
  auto host = SynthesizeAllReduceSignals(fx.Build())->FindFunction("host_orch");
  auto stmts = Flatten(host->body);
  ASSERT_EQ(stmts.size(), 8u);
  ExpectSignalBefore(stmts, 6, 0, 1);
  auto assign = As<AssignStmt>(stmts[6]);
  EXPECT_EQ(assign->var, out);
  EXPECT_EQ(As<Call>(assign->value)->args.size(), 2u);
  EXPECT_EQ(As<ReturnStmt>(stmts[7])->values[0], out);
}

TEST(Sars, ReturnIsLiftedAfterTheSignal) {
  HostFixture fx;
  fx.b.Ret({fx.AllReduce(6)}, 6);
  auto host = SynthesizeAllReduceSignals(fx.Build())->FindFunction("host_orch");
  auto stmts = Flatten(host->body);
  ASSERT_EQ(stmts.size(), 3u + 3u + 2u);
  ExpectSignalBefore(stmts, 6, 0, 1);
  auto lifted = As<AssignStmt>(stmts[6]);
  // The signal used 0, so the result takes the next counter value.
  EXPECT_EQ(lifted->var->name_hint, "__allreduce_result_1");
  EXPECT_EQ(OpOf(stmts[6]), ops::kAllReduce);
  auto ret = As<ReturnStmt>(stmts[7]);
  ASSERT_EQ(ret->values.size(), 1u);
  EXPECT_EQ(ret->values[0], lifted->var);
}

TEST(Sars, ReturnWithExplicitSignalIsLiftedToo) {
  HostFixture fx;
  VarPtr sig_buf = fx.b.Alloc("sig_buf", 16, 6);
  VarPtr sig = fx.b.Window("sig", sig_buf, {4, 1}, 7, DataType::kInt32);
  CallPtr call = fx.b.Op(ops::kAllReduce, {fx.data, sig}, kSum, 8);
  fx.b.Ret({call, Int(0)}, 8);
  auto host = SynthesizeAllReduceSignals(fx.Build())->FindFunction("host_orch");
  auto stmts = Flatten(host->body);
  ASSERT_EQ(stmts.size(), 5u + 2u);
  auto lifted = As<AssignStmt>(stmts[5]);
  EXPECT_EQ(lifted->var->name_hint, "__allreduce_result_0");
  EXPECT_EQ(lifted->value, call);
  auto ret = As<ReturnStmt>(stmts[6]);
  EXPECT_EQ(ret->values[0], lifted->var);
  EXPECT_TRUE(StructuralEqual(ret->values[1], Int(0)));
}

TEST(Sars, CoreNumSizesSignal) {
  HostFixture fx;
  fx.b.Do(fx.AllReduce(6, {{"core_num", int64_t{4}}}), 6);
  auto host = SynthesizeAllReduceSignals(fx.Build())->FindFunction("host_orch");
  auto stmts = Flatten(host->body);
  ASSERT_EQ(stmts.size(), 7u);
  ExpectSignalBefore(stmts, 6, 0, 4);
  auto call = As<Call>(As<EvalStmt>(stmts[6])->expr);
  EXPECT_THAT(call->kwargs, ElementsAre(std::pair<std::string, AttrValue>("core_num", int64_t{4})));
}

// The op registry already refuses core_num= <= 0 when the call is built
// (OpRegistryTest.AllReduceErrors); IR built without it reaches the pass, which
// rejects it itself.
TEST(Sars, NonPositiveCoreNumIsRejected) {
  HostFixture fx;
  auto call =
      ir::MakeNode<Call>(OpRegistry::Get().GetOp(ops::kAllReduce), NodeList<ExprPtr>{fx.data},
                         Kwargs{{"op", EnumAttr{"pld.ReduceOp.Sum"}}, {"core_num", int64_t{0}}},
                         ExprAttrs{}, fx.data->type);
  call->set_span(At(6));
  fx.b.Do(call, 6);
  CaughtError e = ErrorOf([&] { SynthesizeAllReduceSignals(fx.Build()); });
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 6);
  EXPECT_THAT(e.message, HasSubstr("core_num= must be a positive integer, got 0"));
}

TEST(Sars, NumberingFollowsFunctionNameOrderAcrossTheProgram) {
  // Built in the order z, a: the program sorts them, so "a_host" is numbered first.
  HostFixture z;
  z.b.Do(z.AllReduce(6), 6);
  HostFixture a;
  a.b.Do(a.AllReduce(6), 6);
  a.b.Do(a.AllReduce(7), 7);
  auto p = Prog({ChipOrch("chip_orch", {F32View()}), Host("z_host", z.b), Host("a_host", a.b)});
  auto out = SynthesizeAllReduceSignals(p);
  auto sa = Flatten(out->FindFunction("a_host")->body);
  auto sz = Flatten(out->FindFunction("z_host")->body);
  ASSERT_EQ(sa.size(), 3u + 4u + 4u);
  ExpectSignalBefore(sa, 6, 0, 1);
  ExpectSignalBefore(sa, 10, 1, 1);
  ASSERT_EQ(sz.size(), 3u + 4u);
  ExpectSignalBefore(sz, 6, 2, 1);
}

TEST(Sars, PreExistingNamesAreSkipped) {
  HostFixture fx;
  // Var name __allreduce_signal_0 taken; alloc *name* __allreduce_signal_buf_1 taken
  // (through name=, under another Var name); __allreduce_result_3 taken.
  VarPtr taken_buf = fx.b.Alloc("user_buf", 16, 6, "__allreduce_signal_buf_1");
  fx.b.Window("__allreduce_signal_0", taken_buf, {4, 1}, 7, DataType::kInt32);
  fx.b.Let("__allreduce_result_3", Int(0), 8);
  fx.b.Ret({fx.AllReduce(9)}, 9);
  auto host = SynthesizeAllReduceSignals(fx.Build())->FindFunction("host_orch");
  auto stmts = Flatten(host->body);
  ASSERT_EQ(stmts.size(), 6u + 3u + 2u);
  ExpectSignalBefore(stmts, 9, 2, 1);                    // 0 and 1 have a taken name
  EXPECT_EQ(VarName(stmts[9]), "__allreduce_result_4");  // 3 is next, but taken
}

// A body that is one statement, not a list, becomes a list when its allreduce
// gets a signal.
TEST(Sars, LoneStatementBodyBecomesAList) {
  HostFixture fx;
  auto lone = Eval(fx.AllReduce(6), At(6));
  auto host = ir::MakeNode<Function>("host_orch", std::vector<VarPtr>{},
                                     std::vector<ParamDirection>{}, std::vector<TypePtr>{}, lone,
                                     FunctionType::kOpaque, Level::kHost, Role::kOrchestrator);
  auto out = SynthesizeAllReduceSignals(Prog({host}))->FindFunction("host_orch");
  ASSERT_EQ(out->body->kind(), NodeKind::kSeqStmts);
  auto stmts = Flatten(out->body);
  ASSERT_EQ(stmts.size(), 4u);
  ExpectSignalBefore(stmts, 3, 0, 1);
  EXPECT_EQ(As<Call>(As<EvalStmt>(stmts[3])->expr)->args.size(), 2u);
  EXPECT_EQ(out->body->span().line, 6);
}

TEST(Sars, ExplicitSignalOnlyProgramIsTheSamePointer) {
  HostFixture fx;
  VarPtr sig_buf = fx.b.Alloc("sig_buf", 16, 6);
  VarPtr sig = fx.b.Window("sig", sig_buf, {4, 1}, 7, DataType::kInt32);
  fx.b.Range("i", 2, 8, [&](Body& in, const VarPtr&) {
    in.Do(in.Op(ops::kAllReduce, {fx.data, sig}, kSum, 9), 9);
  });
  auto p = fx.Build();
  EXPECT_EQ(SynthesizeAllReduceSignals(p), p);
}

TEST(Sars, OnlyHostOrchestratorsAreRewritten) {
  HostFixture fx;
  fx.b.Do(fx.AllReduce(6), 6);
  auto chip =
      ir::MakeNode<Function>("chip_level", std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                             std::vector<TypePtr>{}, fx.b.Build(), FunctionType::kOrchestration);
  auto p = Prog({chip});
  EXPECT_EQ(SynthesizeAllReduceSignals(p), p);
}

struct SarsError {
  const char* label;
  std::function<void(HostFixture&)> build;  // the faulty call on line 9
  const char* message;
};

class SarsErrors : public ::testing::TestWithParam<SarsError> {};

TEST_P(SarsErrors, AreReportedAtTheCall) {
  HostFixture fx;
  GetParam().build(fx);
  CaughtError e = ErrorOf([&] { SynthesizeAllReduceSignals(fx.Build()); });
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.line, 9);
  EXPECT_THAT(e.message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Table, SarsErrors,
    ::testing::Values(
        SarsError{"ThreeArgs",
                  [](HostFixture& fx) {
                    auto bad = ir::MakeNode<Call>(OpRegistry::Get().GetOp(ops::kAllReduce),
                                                  std::vector<ExprPtr>{fx.data, fx.data, fx.data},
                                                  KwargList{}, ExprAttrList{}, fx.data->type);
                    bad->set_span(At(9));
                    fx.b.Do(bad, 9);
                  },
                  "takes 1 or 2 positional arguments (data, signal), got 3"},
        SarsError{"NoArgs",
                  [](HostFixture& fx) {
                    auto bad = ir::MakeNode<Call>(OpRegistry::Get().GetOp(ops::kAllReduce),
                                                  std::vector<ExprPtr>{}, KwargList{},
                                                  ExprAttrList{}, UnknownType::Get());
                    bad->set_span(At(9));
                    fx.b.Do(bad, 9);
                  },
                  "got 0"},
        SarsError{"NestedInTuple",
                  [](HostFixture& fx) { fx.b.Let("wrapped", Tuple({fx.AllReduce(9)}), 9); },
                  "cannot be nested inside another expression"},
        SarsError{"NestedInOpCall",
                  [](HostFixture& fx) {
                    fx.b.Do(fx.b.Op(ops::kTensorAdd, {fx.AllReduce(9), fx.data}, {}, 9), 9);
                  },
                  "cannot be nested inside another expression"},
        SarsError{"NestedInReturnValue",
                  [](HostFixture& fx) { fx.b.Ret({Tuple({fx.AllReduce(9)})}, 9); },
                  "cannot be nested inside another expression"},
        SarsError{"SignalLessInFor",
                  [](HostFixture& fx) {
                    fx.b.Range("i", 2, 8,
                               [&](Body& in, const VarPtr&) { in.Do(fx.AllReduce(9), 9); });
                  },
                  "signal-less pld.tensor.allreduce is not supported inside a for/while loop"},
        SarsError{"SignalLessInWhile",
                  [](HostFixture& fx) {
                    fx.b.WhileTrue(8, [&](Body& in) { in.Let("x", fx.AllReduce(9), 9); });
                  },
                  "signal-less pld.tensor.allreduce is not supported inside a for/while loop"},
        SarsError{"SignalLessInIfInsideFor",
                  [](HostFixture& fx) {
                    fx.b.Range("i", 2, 8, [&](Body& in, const VarPtr&) {
                      Body then_body;
                      then_body.Do(fx.AllReduce(9), 9);
                      in.stmts.push_back(If(Bool(true), then_body.Build()));
                    });
                  },
                  "not supported inside a for/while loop"}),
    [](const ::testing::TestParamInfo<SarsError>& info) { return std::string(info.param.label); });

TEST(Sars, PipelinePutsTheSynthesizedSignalInTheDataDomain) {
  HostFixture fx;
  VarPtr x = fx.b.Let("x", fx.AllReduce(6), 6);
  fx.b.Ret({fx.b.Op(ops::kAllReduce, {x}, kSum, 7)}, 7);
  auto out = MaterializeCommDomainScopes(SynthesizeAllReduceSignals(fx.Build()));
  auto scopes = Scopes(out->FindFunction("host_orch"));
  ASSERT_EQ(scopes.size(), 1u);
  EXPECT_EQ(scopes[0]->devices, (DeviceSet{true, {}}));
  EXPECT_THAT(SlotNames(scopes[0]),
              ElementsAre("data_buf", "__allreduce_signal_buf_0", "__allreduce_signal_buf_1"));
  // The returned result (an in-place result of x, itself of data) carries data's buffer.
  auto lifted = DefOf(out->FindFunction("host_orch"), "__allreduce_result_2");
  ASSERT_TRUE(lifted && DistOf(lifted->var));
  EXPECT_EQ(DistOf(lifted->var)->window_buffer, scopes[0]->slots[0]);
}

}  // namespace
}  // namespace cds::pass::testing
