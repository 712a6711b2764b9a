// Round trips of hand-built IR: every construct of the text format, including
// the materialized state the pass produces.

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "tests/text/roundtrip_util.h"

namespace cds::ir {
namespace {

using testing::RoundTrips;

FunctionPtr ChipOrch() {
  VarPtr d = MakeVar("data", DistTensorTy(Shape({256}), DataType::kFP32));
  return ir::MakeNode<Function>(
      "chip_orch", std::vector<VarPtr>{d}, std::vector<ParamDirection>{ParamDirection::kIn},
      std::vector<TypePtr>{d->type}, Seq({Return({d})}), FunctionType::kOrchestration);
}

FunctionPtr Host(std::string name, std::vector<StmtPtr> body, std::vector<TypePtr> rets = {}) {
  return ir::MakeNode<Function>(
      std::move(name), std::vector<VarPtr>{}, std::vector<ParamDirection>{}, std::move(rets),
      Seq(std::move(body)), FunctionType::kOpaque, Level::kHost, Role::kOrchestrator);
}

ProgramPtr Prog(std::vector<FunctionPtr> fns) {
  return ir::MakeNode<Program>("P", std::vector<VarPtr>{}, std::move(fns));
}

CallPtr AllocCall(ExprPtr size, std::string name) {
  return MakeOpCall(ops::kAllocWindowBuffer, {std::move(size)}, {{"name", std::move(name)}});
}

// A string literal: the quote, the backslash, newline, tab and carriage return
// take their one-letter escapes, other control characters \xNN.
TEST(TextRoundTrip, StringEscapes) {
  EXPECT_EQ(PrintNode(Str("q\"b\\n\nt\tr\rc\x01.")), R"("q\"b\\n\nt\tr\rc\x01.")");
}

TEST(TextRoundTrip, UserFormHostProgram) {
  VarPtr buf = MakeVar("buf", PtrType::Get());
  CallPtr view = MakeOpCall(ops::kWindow, {buf, Tuple(Shape({256}))}, {{"dtype", DataType::kFP32}});
  VarPtr data = MakeVar("data", view->type);
  VarPtr r = MakeVar("r", ScalarTy(DataType::kIndex));
  auto loop = For(r, Int(0), MakeOpCall(ops::kWorldSize, {}), Int(1),
                  Seq({Eval(MakeFunctionCall("chip_orch", {data}, r, data->type))}));
  CallPtr ar = MakeOpCall(ops::kAllReduce, {data}, {{"op", EnumAttr{"pld.ReduceOp.Sum"}}});
  ProgramPtr p = Prog({ChipOrch(), Host("host_orch",
                                        {Assign(buf, AllocCall(Mul(Int(256), Int(4)), "buf")),
                                         Assign(data, view), loop, Eval(ar), Return({Int(0)})},
                                        {ScalarTy(DataType::kInt64)})});
  EXPECT_TRUE(RoundTrips(p));
  // Expected text written by hand from docs/text-format.md and docs/ir-conventions.md.
  const std::string expected =
      "@pl.program\n"
      "class P:\n"
      "    @pl.function(type=pl.FunctionType.Orchestration)\n"
      "    def chip_orch(self, data: pld.DistributedTensor[[256], pl.FP32]) -> "
      "pld.DistributedTensor[[256], "
      "pl.FP32]:\n"
      "        return data\n"
      "\n"
      "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
      "    def host_orch(self) -> pl.Scalar[pl.INT64]:\n"
      "        buf: pl.Ptr = pld.tensor.alloc_window_buffer(256 * 4)\n"
      "        data: pld.DistributedTensor[[256], pl.FP32] = pld.tensor.window(buf, [256], "
      "dtype=pl.FP32)\n"
      "        for r in pl.range(pld.system.world_size()):\n"
      "            self.chip_orch(data, device=r)\n"
      "        pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)\n"
      "        return 0\n";
  EXPECT_EQ(PrintProgram(p), expected);
}

// Everything the pass produces: one WindowBuffer shared by two views and a
// scope slot, two windows over one base, an SSA-renamed alloc.
TEST(TextRoundTrip, MaterializedState) {
  VarPtr buf = MakeVar("buf", PtrType::Get());
  ExprPtr size = Mul(Int(256), Int(4));
  auto wb = ir::MakeNode<WindowBuffer>(buf, size, false, false);
  TypePtr vt = DistTensorTy(Shape({256}), DataType::kFP32, wb);
  KwargList dt{{"dtype", DataType::kFP32}};
  VarPtr v1 = MakeVar("data", vt);
  VarPtr v2 = MakeVar("data", vt);  // same name: printed data_1
  auto call1 = MakeOpCallWithType(ops::kWindow, {buf, Tuple(Shape({256}))}, dt, vt);
  auto call2 = MakeOpCallWithType(ops::kWindow, {buf, Tuple(Shape({256}))}, dt, vt);

  VarPtr buf2 = MakeVar("buf", PtrType::Get());  // rebinding: printed buf_1, name kwarg stays "buf"
  auto wb2a = ir::MakeNode<WindowBuffer>(buf2, Int(64), true, false);
  auto wb2b = ir::MakeNode<WindowBuffer>(buf2, Int(32), false, true);
  TypePtr t2a = DistTensorTy(Shape({16}), DataType::kFP32, wb2a);
  TypePtr t2b = DistTensorTy(Shape({8}), DataType::kFP32, wb2b);
  VarPtr s1 = MakeVar("s", t2a);
  VarPtr s2 = MakeVar("s", t2b);

  std::vector<StmtPtr> inner{
      Assign(buf, AllocCall(size, "buf")),
      Assign(v1, call1),
      Assign(v2, call2),
      Assign(buf2, AllocCall(Int(64), "buf")),
      Assign(s1, MakeOpCallWithType(ops::kWindow, {buf2, Tuple(Shape({16}))}, dt, t2a)),
      Assign(s2, MakeOpCallWithType(ops::kWindow, {buf2, Tuple(Shape({8}))}, dt, t2b)),
      Eval(MakeFunctionCall("chip_orch", {v2}, Int(0), v1->type)),
  };
  auto scope1 = ir::MakeNode<CommDomainScopeStmt>("comm_d1", DeviceSet{false, {0, 1}},
                                                  std::vector<WindowBufferPtr>{wb2a, wb2b},
                                                  KwargList{}, Seq(inner));
  auto scope0 = ir::MakeNode<CommDomainScopeStmt>(
      "comm_d0", DeviceSet::All(), std::vector<WindowBufferPtr>{wb}, KwargList{}, Seq({scope1}));
  ProgramPtr p = Prog({ChipOrch(), Host("host_orch", {scope0})});
  ASSERT_TRUE(RoundTrips(p));

  std::string text = PrintProgram(p);
  EXPECT_NE(text.find("pl._dump.window_buffer(\"buf_window\", base=\"buf\", size=256 * 4, "
                      "load_from_host=False, "
                      "store_to_host=False)"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "pl._dump.window_buffer(\"buf_1_window\", base=\"buf_1\", size=64, load_from_host=True"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("pl._dump.window_buffer(\"buf_1_window_1\", base=\"buf_1\", size=32"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("buf_1: pl.Ptr = pl._dump.alloc_window_buffer(64, name=\"buf\")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("devices=[0, 1], slots=[\"buf_1_window\", \"buf_1_window_1\"]"),
            std::string::npos)
      << text;

  // Sharing survives: both views and the slot are one object after reparsing.
  ProgramPtr back = ParseProgram(text);
  const auto& host = *back->FindFunction("host_orch");
  auto outer = ir::PtrCast<const CommDomainScopeStmt>(Flatten(host.body)[0]);
  auto inner_scope = ir::PtrCast<const CommDomainScopeStmt>(Flatten(outer->body)[0]);
  auto stmts = Flatten(inner_scope->body);
  auto a1 = ir::PtrCast<const AssignStmt>(stmts[1]);
  auto a2 = ir::PtrCast<const AssignStmt>(stmts[2]);
  auto wb_of = [](const TypePtr& t) {
    return static_cast<const DistributedTensorType&>(*t).window_buffer;
  };
  EXPECT_EQ(wb_of(a1->var->type), outer->slots[0]);
  EXPECT_EQ(wb_of(a2->var->type), outer->slots[0]);
  EXPECT_EQ(wb_of(a1->value->type), outer->slots[0]);
  EXPECT_EQ(outer->slots[0]->base, ir::PtrCast<const AssignStmt>(stmts[0])->var);
  EXPECT_NE(inner_scope->slots[0], inner_scope->slots[1]);
  EXPECT_EQ(inner_scope->slots[0]->base, inner_scope->slots[1]->base);
}

TEST(TextRoundTrip, ControlFlowAndScalars) {
  VarPtr a = MakeVar("a", ScalarTy(DataType::kIndex));
  VarPtr b = MakeVar("b", ScalarTy(DataType::kInt32));
  VarPtr x = MakeVar("x", ScalarTy(DataType::kIndex));
  VarPtr x2 = MakeVar("x", ScalarTy(DataType::kIndex));
  VarPtr i = MakeVar("i", ScalarTy(DataType::kIndex));
  VarPtr u = MakeVar("u", UnknownType::Get());
  auto body = std::vector<StmtPtr>{
      Assign(x, Binary(BinaryOp::kSub, a, Binary(BinaryOp::kSub, b, Int(1)))),
      Assign(u, Int(3)),
      For(i, Int(2), Int(10), Int(3),
          Seq({If(
              Binary(BinaryOp::kLt, i, a), Seq({Assign(x2, Unary(UnaryOp::kNeg, Int(5)))}),
              Seq({If(Bool(true), Seq({}),
                      Seq({Eval(Binary(BinaryOp::kMax, a, Float(-0.5, DataType::kFP64)))}))}))})),
      While(Unary(UnaryOp::kNot,
                  Binary(BinaryOp::kOr, Bool(false), Binary(BinaryOp::kEq, a, Int(-3)))),
            Seq({})),
      Return({Int(INT64_MIN), Float(1e-300), Int(7, DataType::kUInt16), Bool(true)}),
  };
  auto f = ir::MakeNode<Function>(
      "f", std::vector<VarPtr>{a, b},
      std::vector<ParamDirection>{ParamDirection::kOut, ParamDirection::kInOut},
      std::vector<TypePtr>{}, Seq(body), FunctionType::kInCore);
  EXPECT_TRUE(RoundTrips(Prog({f})));
}

TEST(TextRoundTrip, EmptyProgramAndBodies) {
  EXPECT_TRUE(RoundTrips(Prog({})));
  EXPECT_TRUE(RoundTrips(Prog({Host("h", {})})));
  auto scope = ir::MakeNode<CommDomainScopeStmt>(
      "d", DeviceSet{false, {}}, std::vector<WindowBufferPtr>{},
      KwargList{{"k", int64_t{-1}}, {"s", std::string("q\"\\\n")}}, Seq({}));
  EXPECT_TRUE(RoundTrips(Prog({Host("h", {scope})})));
}

TEST(TextRoundTrip, CallsNeedingDumpForm) {
  VarPtr n = MakeVar("n", ScalarTy(DataType::kInt32));
  auto ws = MakeOpCallWithType(ops::kWorldSize, {}, {}, ScalarTy(DataType::kInt32));
  auto opaque = MakeOpCallWithType(
      "pl.something.opaque", {n, Str("s"), Tuple({Int(1)})},
      {{"x", ExprPtr(Int(3))}, {"f", 0.25}, {"b", true}, {"e", EnumAttr{"pld.E.A"}}},
      UnknownType::Get());
  auto wrong_dispatch = MakeFunctionCall("chip_orch", {}, nullptr, ScalarTy(DataType::kInt8));
  auto unnamed_alloc = MakeOpCall(ops::kAllocWindowBuffer, {Int(8)});
  VarPtr p = MakeVar("p", PtrType::Get());
  EXPECT_TRUE(
      RoundTrips(Prog({ChipOrch(), Host("h", {Assign(n, ws), Eval(opaque), Eval(wrong_dispatch),
                                              Assign(p, unnamed_alloc)})})));
}

// Tuple values (parenthesized) and lists of every length, nested in each other,
// as values, call arguments and return values.
TEST(TextRoundTrip, TupleValues) {
  auto paren = [](std::vector<ExprPtr> e) { return ir::MakeNode<MakeTuple>(std::move(e), true); };
  VarPtr a = MakeVar("a", ScalarTy(DataType::kInt32));
  ExprPtr empty = paren({});
  ExprPtr one = paren({a});
  ExprPtr nested = paren({one, empty, Tuple({a, Int(2)}), Tuple({}), paren({a, paren({a})})});
  VarPtr x = MakeVar("x", one->type), y = MakeVar("y", nested->type);
  auto call = MakeOpCallWithType("pl.opaque", {one, nested}, {}, UnknownType::Get());
  ProgramPtr p = Prog({Host("h",
                            {Assign(a, Int(1)), Assign(x, one), Assign(y, nested), Eval(call),
                             Return({paren({x, y}), empty})},
                            {paren({x, y})->type, empty->type})});
  EXPECT_TRUE(RoundTrips(p));
  // A tuple and a list of the same elements are different text, and different IR.
  EXPECT_FALSE(StructuralEqual(paren({a}), Tuple({a})));
  EXPECT_NE(StructuralHash(paren({a})), StructuralHash(Tuple({a})));
  EXPECT_EQ(StructuralHash(paren({a})), StructuralHash(paren({a})));
}

}  // namespace
}  // namespace cds::ir
