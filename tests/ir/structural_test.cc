// Structural equality and hashing: the TVM/PyPTO cases, sharing of WindowBuffers,
// device sets, ignored fields, and the difference path StructuralEqualWhere reports.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"

namespace cds::ir {
namespace {

// Asserts equality both ways and equal hashes.
void ExpectEqual(const NodePtr& a, const NodePtr& b) {
  EqualityResult ab = StructuralEqualWhere(a, b);
  EXPECT_TRUE(ab.equal) << ab.path << ": " << ab.reason;
  EXPECT_TRUE(StructuralEqual(b, a));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  // The round trip's fused walk: same verdict, and each side's StructuralHash.
  EqualAndHashes fused = StructuralEqualAndHash(a, b);
  EXPECT_TRUE(fused.equal);
  EXPECT_EQ(fused.lhs_hash, StructuralHash(a));
  EXPECT_EQ(fused.rhs_hash, StructuralHash(b));
}

// Asserts inequality both ways and different hashes (the inputs here are chosen so
// that a sound hash has no reason to collide).
void ExpectDifferent(const NodePtr& a, const NodePtr& b) {
  EXPECT_FALSE(StructuralEqual(a, b));
  EXPECT_FALSE(StructuralEqual(b, a));
  EXPECT_NE(StructuralHash(a), StructuralHash(b));
  EXPECT_FALSE(StructuralEqualAndHash(a, b).equal);
  EXPECT_FALSE(StructuralEqualAndHash(b, a).equal);
}

VarPtr I64(const std::string& name) { return MakeVar(name, ScalarTy(DataType::kInt64)); }

TEST(StructuralEqualTest, SameVarTwiceMatchesSameVarTwice) {
  auto x = I64("x");
  auto y = I64("y");
  auto z = I64("z");
  ExpectEqual(Add(x, x), Add(y, y));
  ExpectDifferent(Add(x, x), Add(y, z));
  ExpectDifferent(Add(y, z), Add(x, x));
  ExpectEqual(Add(y, z), Add(x, y));  // a consistent renaming {y->x, z->y}
}

TEST(StructuralEqualTest, VarTypesAndConstantsCompareByValue) {
  auto x = I64("x");
  auto w = MakeVar("w", ScalarTy(DataType::kInt32));
  ExpectDifferent(Add(x, x), Add(w, w));
  ExpectDifferent(Int(1), Int(2));
  ExpectDifferent(Int(1, DataType::kInt64), Int(1, DataType::kInt32));
  ExpectDifferent(Int(1), Float(1.0));
  ExpectDifferent(Float(0.0), Float(-0.0));  // bitwise, as the hash is
  ExpectEqual(Float(0.25), Float(0.25));
  ExpectDifferent(Binary(BinaryOp::kSub, x, Int(1)), Add(x, Int(1)));
  ExpectDifferent(Str("a"), Str("b"));
  ExpectEqual(Str("a"), Str("a"));
}

TEST(StructuralEqualTest, SpansAndNameHintsAreIgnored) {
  Span s1{InternFileName("a.pyir"), 1, 1};
  Span s2{InternFileName("b.pyir"), 9, 40};
  auto x = MakeVar("x", ScalarTy(DataType::kInt64), s1);
  auto other = MakeVar("completely_different", ScalarTy(DataType::kInt64), s2);
  ExpectEqual(Assign(x, Int(3, DataType::kInt64, s1), s1),
              Assign(other, Int(3, DataType::kInt64, s2), s2));
  auto b1 = MakeVar("buf", PtrType::Get());
  auto b2 = MakeVar("other_buf", PtrType::Get());
  ExpectEqual(ir::MakeNode<const WindowBuffer>(b1, Int(4), false, false),
              ir::MakeNode<const WindowBuffer>(b2, Int(4), false, false));
}

TEST(StructuralEqualTest, DefinitionsMapBijectively) {
  // x = 1; y = x  vs  x = 1; y = y'(free)  must differ: the second y reads a
  // variable other than the one just defined.
  auto x1 = I64("x");
  auto y1 = I64("y");
  auto x2 = I64("x");
  auto y2 = I64("y");
  auto free = I64("x");
  ExpectEqual(Seq({Assign(x1, Int(1)), Assign(y1, x1)}), Seq({Assign(x2, Int(1)), Assign(y2, x2)}));
  ExpectDifferent(Seq({Assign(x1, Int(1)), Assign(y1, x1)}),
                  Seq({Assign(x2, Int(1)), Assign(y2, free)}));
}

TEST(StructuralEqualTest, NullFieldsAndKinds) {
  ExpectEqual(If(Bool(true), Seq({})), If(Bool(true), Seq({})));
  ExpectDifferent(If(Bool(true), Seq({})), If(Bool(true), Seq({}), Seq({})));
  EXPECT_TRUE(StructuralEqual(nullptr, nullptr));
  EXPECT_FALSE(StructuralEqual(Int(1), nullptr));
  ExpectDifferent(Eval(Int(1)), Return({Int(1)}));
}

TEST(StructuralEqualTest, KwargsCompareKeysValuesAndAlternatives) {
  auto call = [](KwargList kw) {
    return ir::MakeNode<const Call>(OpRegistry::Get().GetOp("pl.opaque"), std::vector<ExprPtr>{},
                                    std::move(kw), ExprAttrList{}, UnknownType::Get());
  };
  ExpectEqual(call({{"op", EnumAttr{"pld.ReduceOp.Sum"}}}),
              call({{"op", EnumAttr{"pld.ReduceOp.Sum"}}}));
  ExpectDifferent(call({{"op", EnumAttr{"pld.ReduceOp.Sum"}}}),
                  call({{"op", EnumAttr{"pld.ReduceOp.Max"}}}));
  ExpectDifferent(call({{"root", int64_t{1}}}), call({{"root", true}}));
  ExpectDifferent(call({{"root", int64_t{1}}}), call({{"core", int64_t{1}}}));
  ExpectDifferent(call({{"root", int64_t{1}}}),
                  call({{"root", Int(1)}}));  // literal vs IR constant
  ExpectDifferent(call({{"dtype", DataType::kFP32}}), call({{"dtype", DataType::kFP16}}));
  ExpectDifferent(call({{"a", int64_t{1}}, {"b", int64_t{2}}}),
                  call({{"b", int64_t{2}}, {"a", int64_t{1}}}));
}

// --- WindowBuffer sharing ------------------------------------------------------

struct Views {
  VarPtr buf;
  WindowBufferPtr wb_a, wb_b;
  VarPtr v1, v2;
};

// Two views of one alloc; `shared` decides whether their types hold one
// WindowBuffer object or two equal-looking ones.
Views MakeViews(bool shared) {
  Views r;
  r.buf = MakeVar("buf", PtrType::Get());
  r.wb_a = ir::MakeNode<const WindowBuffer>(r.buf, Int(1024), false, false);
  r.wb_b = shared ? r.wb_a : ir::MakeNode<const WindowBuffer>(r.buf, Int(1024), false, false);
  r.v1 = MakeVar("v1", DistTensorTy(Shape({256}), DataType::kFP32, r.wb_a));
  r.v2 = MakeVar("v2", DistTensorTy(Shape({256}), DataType::kFP32, r.wb_b));
  return r;
}

NodePtr UseBoth(const Views& v) { return Tuple({v.v1, v.v2}); }

TEST(StructuralEqualTest, SharedWindowBufferIsNotTwoEqualLookingOnes) {
  Views shared1 = MakeViews(true), shared2 = MakeViews(true), split1 = MakeViews(false),
        split2 = MakeViews(false);
  ExpectEqual(UseBoth(shared1), UseBoth(shared2));
  ExpectEqual(UseBoth(split1), UseBoth(split2));
  ExpectDifferent(UseBoth(shared1), UseBoth(split1));
  EqualityResult r = StructuralEqualWhere(UseBoth(shared1), UseBoth(split1));
  EXPECT_EQ(r.path, "elements[1].type.window_buffer");
  EXPECT_THAT(r.reason, ::testing::HasSubstr("mapped elsewhere"));
}

// A scope whose slot is the WindowBuffer its view's type names, or (bad) a scope
// whose slot is a different, equal-looking WindowBuffer.
StmtPtr ScopeWithView(bool slot_is_views_buffer) {
  auto buf = MakeVar("buf", PtrType::Get());
  auto wb = ir::MakeNode<const WindowBuffer>(buf, Int(512), false, false);
  auto slot =
      slot_is_views_buffer ? wb : ir::MakeNode<const WindowBuffer>(buf, Int(512), false, false);
  auto view = MakeVar("data", DistTensorTy(Shape({128}), DataType::kFP32, wb));
  auto call = MakeOpCallWithType(ops::kWindow, {buf, Tuple(Shape({128}))},
                                 {{"dtype", DataType::kFP32}}, view->type);
  return ir::MakeNode<const CommDomainScopeStmt>(
      "comm_d0", DeviceSet::All(), std::vector<WindowBufferPtr>{slot}, KwargList{},
      Seq({Assign(buf,
                  MakeOpCall(ops::kAllocWindowBuffer, {Int(512)}, {{"name", std::string("buf")}})),
           Assign(view, call)}));
}

TEST(StructuralEqualTest, ScopeSlotMustBeTheViewsBuffer) {
  ExpectEqual(ScopeWithView(true), ScopeWithView(true));
  ExpectEqual(ScopeWithView(false), ScopeWithView(false));
  ExpectDifferent(ScopeWithView(true), ScopeWithView(false));
  EqualityResult r = StructuralEqualWhere(ScopeWithView(true), ScopeWithView(false));
  EXPECT_EQ(r.path, "body.stmts[1].var.type.window_buffer");
}

// --- devices -----------------------------------------------------------------

StmtPtr ScopeOn(DeviceSet d) {
  return ir::MakeNode<const CommDomainScopeStmt>(
      "comm_d0", std::move(d), std::vector<WindowBufferPtr>{}, KwargList{}, Seq({}));
}

TEST(StructuralEqualTest, AllDevicesDiffersFromEverySubset) {
  ExpectEqual(ScopeOn(DeviceSet::All()), ScopeOn(DeviceSet::All()));
  ExpectEqual(ScopeOn((DeviceSet{false, {0, 1}})), ScopeOn((DeviceSet{false, {0, 1}})));
  ExpectDifferent(ScopeOn(DeviceSet::All()), ScopeOn((DeviceSet{false, {}})));
  ExpectDifferent(ScopeOn(DeviceSet::All()), ScopeOn((DeviceSet{false, {0}})));
  ExpectDifferent(ScopeOn(DeviceSet::All()), ScopeOn((DeviceSet{false, {0, 1, 2, 3, 4, 5, 6, 7}})));
  ExpectDifferent(ScopeOn((DeviceSet{false, {}})), ScopeOn((DeviceSet{false, {0}})));
  ExpectDifferent(ScopeOn((DeviceSet{false, {0, 1}})), ScopeOn((DeviceSet{false, {0, 2}})));
  EqualityResult r =
      StructuralEqualWhere(ScopeOn(DeviceSet::All()), ScopeOn((DeviceSet{false, {}})));
  EXPECT_EQ(r.path, "devices");
  EXPECT_EQ(r.reason, "CommDomainScopeStmt.devices: all vs []");
}

// --- function-level fields -------------------------------------------------------

FunctionPtr Fn(std::string name, std::vector<VarPtr> params, StmtPtr body,
               std::optional<Level> level, std::optional<Role> role,
               FunctionType t = FunctionType::kOpaque) {
  std::vector<ParamDirection> dirs(params.size(), ParamDirection::kIn);
  return ir::MakeNode<const Function>(std::move(name), std::move(params), std::move(dirs),
                                      std::vector<TypePtr>{}, std::move(body), t, level, role);
}

TEST(StructuralEqualTest, FunctionAttributesMatter) {
  auto p = I64("p");
  auto q = I64("q");
  ExpectEqual(Fn("f", {p}, Seq({Return({p})}), Level::kHost, Role::kOrchestrator),
              Fn("f", {q}, Seq({Return({q})}), Level::kHost, Role::kOrchestrator));
  ExpectDifferent(Fn("f", {p}, Seq({}), Level::kHost, std::nullopt),
                  Fn("g", {p}, Seq({}), Level::kHost, std::nullopt));
  ExpectDifferent(Fn("f", {p}, Seq({}), Level::kHost, std::nullopt),
                  Fn("f", {p}, Seq({}), std::nullopt, std::nullopt));
  ExpectDifferent(Fn("f", {p}, Seq({}), Level::kHost, Role::kOrchestrator),
                  Fn("f", {p}, Seq({}), Level::kHost, Role::kSubWorker));
  ExpectDifferent(Fn("f", {}, Seq({}), std::nullopt, std::nullopt, FunctionType::kOrchestration),
                  Fn("f", {}, Seq({}), std::nullopt, std::nullopt, FunctionType::kGraph));
  // Which parameter is returned matters even though both are int64.
  ExpectDifferent(Fn("f", {p, q}, Seq({Return({p})}), std::nullopt, std::nullopt),
                  Fn("f", {p, q}, Seq({Return({q})}), std::nullopt, std::nullopt));
}

TEST(StructuralEqualTest, CallsOfDifferentCalleesDiffer) {
  auto d = I64("d");
  ExpectEqual(MakeFunctionCall("chip", {}, d, nullptr), MakeFunctionCall("chip", {}, d, nullptr));
  ExpectDifferent(MakeFunctionCall("chip", {}, d, nullptr),
                  MakeFunctionCall("chip2", {}, d, nullptr));
  ExpectDifferent(MakeFunctionCall("chip", {}, d, nullptr),
                  MakeFunctionCall("chip", {}, nullptr, nullptr));
  ExpectDifferent(MakeFunctionCall("chip", {}, Int(0), nullptr),
                  MakeFunctionCall("chip", {}, Int(1), nullptr));
}

// --- difference paths ------------------------------------------------------------

// A hand-built program: chip_orch and host_orch, where host_orch's fourth
// statement is `r = pl.opaque(data, <last>)`.
ProgramPtr PathProgram(ExprPtr last_arg, DataType view_dtype = DataType::kFP32,
                       int64_t device = 0) {
  auto cp = MakeVar("data", DistTensorTy(Shape({256}), DataType::kFP32));
  auto chip = Fn("chip_orch", {cp}, Seq({Return({cp})}), std::nullopt, std::nullopt,
                 FunctionType::kOrchestration);
  auto buf = MakeVar("buf", PtrType::Get());
  auto data = MakeVar("data", DistTensorTy(Shape({256}), view_dtype));
  auto r = MakeVar("r", UnknownType::Get());
  auto opaque = ir::MakeNode<const Call>(OpRegistry::Get().GetOp("pl.opaque"),
                                         std::vector<ExprPtr>{data, std::move(last_arg)},
                                         KwargList{}, ExprAttrList{}, UnknownType::Get());
  auto host = Fn("host_orch", {},
                 Seq({Assign(buf, MakeOpCall(ops::kAllocWindowBuffer, {Int(1024)},
                                             {{"name", std::string("buf")}})),
                      Assign(data, MakeOpCall(ops::kWindow, {buf, Tuple(Shape({256}))},
                                              {{"dtype", view_dtype}})),
                      Eval(MakeFunctionCall("chip_orch", {data}, Int(device), cp->type)),
                      Assign(r, opaque), Return({Int(0)})}),
                 Level::kHost, Role::kOrchestrator);
  return ir::MakeNode<const Program>("P", std::vector<VarPtr>{},
                                     std::vector<FunctionPtr>{host, chip});
}

TEST(StructuralEqualWhereTest, EqualProgramsHaveNoPath) {
  EqualityResult r = StructuralEqualWhere(PathProgram(Int(256)), PathProgram(Int(256)));
  EXPECT_TRUE(r.equal);
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r.path, "");
  EXPECT_EQ(r.reason, "");
}

TEST(StructuralEqualWhereTest, PathToADifferentKindOfArgument) {
  EqualityResult r = StructuralEqualWhere(PathProgram(Int(256)), PathProgram(Float(256.0)));
  EXPECT_FALSE(r.equal);
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.path, "functions[host_orch].body.stmts[3].value.args[1]");
  EXPECT_EQ(r.reason, "ConstInt vs ConstFloat");
}

TEST(StructuralEqualWhereTest, PathToADifferentConstant) {
  EqualityResult r = StructuralEqualWhere(PathProgram(Int(256)), PathProgram(Int(512)));
  EXPECT_EQ(r.path, "functions[host_orch].body.stmts[3].value.args[1].value");
  EXPECT_EQ(r.reason, "ConstInt.value: 256 vs 512");
}

TEST(StructuralEqualWhereTest, PathIntoAVarType) {
  EqualityResult r =
      StructuralEqualWhere(PathProgram(Int(1)), PathProgram(Int(1), DataType::kFP16));
  // The view Var's type is met first, at its definition.
  EXPECT_EQ(r.path, "functions[host_orch].body.stmts[1].var.type.dtype");
  EXPECT_EQ(r.reason, "DistributedTensorType.dtype: FP32 vs FP16");
}

TEST(StructuralEqualWhereTest, PathIntoADeviceAttr) {
  EqualityResult r = StructuralEqualWhere(PathProgram(Int(1), DataType::kFP32, 0),
                                          PathProgram(Int(1), DataType::kFP32, 3));
  EXPECT_EQ(r.path, "functions[host_orch].body.stmts[2].expr.attrs[device].value");
  EXPECT_EQ(r.reason, "ConstInt.value: 0 vs 3");
}

TEST(StructuralEqualWhereTest, PathToAMissingFunction) {
  ProgramPtr full = PathProgram(Int(1));
  auto only_host = ir::MakeNode<const Program>(
      "P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{full->FindFunction("host_orch")});
  EqualityResult r = StructuralEqualWhere(full, only_host);
  EXPECT_EQ(r.path, "functions");
  EXPECT_EQ(r.reason, "Program.functions: 2 vs 1 elements");
}

TEST(StructuralEqualWhereTest, PathToAVarThatBreaksTheMapping) {
  auto x = I64("x");
  auto y = I64("y");
  auto z = I64("z");
  EqualityResult r = StructuralEqualWhere(Seq({Eval(Add(x, x))}), Seq({Eval(Add(y, z))}));
  EXPECT_EQ(r.path, "stmts[0].expr.rhs");
  EXPECT_EQ(r.reason, "Var 'x' does not correspond to 'z' (mapped elsewhere)");
}

TEST(StructuralEqualWhereTest, PathIntoKwargOfACall) {
  auto c1 = MakeOpCall(ops::kAllocWindowBuffer, {Tuple(Shape({4}))}, {{"dtype", DataType::kFP32}});
  auto c2 = MakeOpCall(ops::kAllocWindowBuffer, {Tuple(Shape({4}))}, {{"dtype", DataType::kInt32}});
  EqualityResult r = StructuralEqualWhere(c1, c2);
  EXPECT_EQ(r.path, "kwargs[dtype]");
  EXPECT_EQ(r.reason, "Call.kwargs: FP32 vs INT32");
}

// --- hashing ---------------------------------------------------------------------

TEST(StructuralHashTest, StableAndOrderSensitive) {
  auto x = I64("x");
  auto y = I64("y");
  EXPECT_EQ(StructuralHash(Add(x, Int(1))), StructuralHash(Add(x, Int(1))));
  EXPECT_NE(StructuralHash(Add(x, y)), StructuralHash(Add(y, y)));
  EXPECT_NE(StructuralHash(Tuple({Int(1), Int(2)})), StructuralHash(Tuple({Int(2), Int(1)})));
  EXPECT_NE(StructuralHash(Seq({Eval(Int(1)), Eval(Int(2))})),
            StructuralHash(Seq({Eval(Int(2)), Eval(Int(1))})));
  EXPECT_NE(StructuralHash(nullptr), StructuralHash(Int(0)));
}

TEST(StructuralHashTest, HashIgnoresAddressesAndNames) {
  ProgramPtr a = PathProgram(Int(7));
  ProgramPtr b = PathProgram(Int(7));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  EXPECT_NE(StructuralHash(a), StructuralHash(PathProgram(Int(8))));
}

}  // namespace
}  // namespace cds::ir
