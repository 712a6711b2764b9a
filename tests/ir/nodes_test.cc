// Construction, fields, deduced types and spans of every IR node kind, plus the
// Function/Program/DeviceSet semantics docs/ir.md fixes.

#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/function.h"

namespace cds::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Span At(int line, int col) { return Span{InternFileName("t.pyir"), line, col}; }

DataType ScalarDType(const ExprPtr& e) {
  EXPECT_EQ(e->type->kind(), NodeKind::kScalarType);
  return static_cast<const ScalarType&>(*e->type).dtype;
}

int64_t IntValue(const ExprPtr& e) {
  EXPECT_EQ(e->kind(), NodeKind::kConstInt);
  return static_cast<const ConstInt&>(*e).value;
}

// ---------------------------------------------------------------------------
// dtypes

TEST(DataTypeTest, ByteSizesMatchPyPTO) {
  EXPECT_EQ(DataTypeBytes(DataType::kBool), 1);
  EXPECT_EQ(DataTypeBytes(DataType::kInt8), 1);
  EXPECT_EQ(DataTypeBytes(DataType::kInt16), 2);
  EXPECT_EQ(DataTypeBytes(DataType::kInt32), 4);
  EXPECT_EQ(DataTypeBytes(DataType::kInt64), 8);
  EXPECT_EQ(DataTypeBytes(DataType::kUInt8), 1);
  EXPECT_EQ(DataTypeBytes(DataType::kUInt16), 2);
  EXPECT_EQ(DataTypeBytes(DataType::kUInt32), 4);
  EXPECT_EQ(DataTypeBytes(DataType::kUInt64), 8);
  EXPECT_EQ(DataTypeBytes(DataType::kFP16), 2);
  EXPECT_EQ(DataTypeBytes(DataType::kBF16), 2);
  EXPECT_EQ(DataTypeBytes(DataType::kFP32), 4);
  EXPECT_EQ(DataTypeBytes(DataType::kFP64), 8);
  EXPECT_EQ(DataTypeBytes(DataType::kIndex), 8);
}

TEST(DataTypeTest, NamesRoundTripAndClassify) {
  for (DataType dt : kAllDataTypes) {
    EXPECT_EQ(DataTypeFromName(DataTypeName(dt)), dt) << DataTypeName(dt);
  }
  EXPECT_EQ(DataTypeName(DataType::kIndex), "INDEX");
  EXPECT_EQ(DataTypeName(DataType::kBF16), "BF16");
  EXPECT_FALSE(DataTypeFromName("FP8").has_value());
  // The lookup compares names packed into one integer: names that pack alike, or
  // share a prefix, must still differ.
  using namespace std::string_view_literals;
  EXPECT_FALSE(DataTypeFromName("FP32\0"sv).has_value());
  EXPECT_FALSE(DataTypeFromName("FP3").has_value());
  EXPECT_FALSE(DataTypeFromName("INT6").has_value());
  EXPECT_FALSE(DataTypeFromName("UINT64X").has_value());
  EXPECT_FALSE(DataTypeFromName("UINT64UINT64").has_value());
  EXPECT_FALSE(DataTypeFromName("fp32").has_value());
  EXPECT_FALSE(DataTypeFromName("").has_value());
  EXPECT_TRUE(IsFloat(DataType::kBF16));
  EXPECT_FALSE(IsFloat(DataType::kIndex));
  EXPECT_TRUE(IsInteger(DataType::kIndex));
  EXPECT_TRUE(IsInteger(DataType::kUInt8));
  EXPECT_FALSE(IsInteger(DataType::kBool));
  EXPECT_FALSE(IsInteger(DataType::kFP32));
}

// ---------------------------------------------------------------------------
// Types

TEST(TypeTest, ScalarTypeCarriesDType) {
  TypePtr t = ScalarTy(DataType::kInt32);
  ASSERT_EQ(t->kind(), NodeKind::kScalarType);
  EXPECT_EQ(static_cast<const ScalarType&>(*t).dtype, DataType::kInt32);
}

TEST(TypeTest, PtrAndUnknownAreSingletons) {
  EXPECT_EQ(PtrType::Get(), PtrType::Get());
  EXPECT_EQ(PtrType::Get()->kind(), NodeKind::kPtrType);
  EXPECT_EQ(UnknownType::Get(), UnknownType::Get());
  EXPECT_EQ(UnknownType::Get()->kind(), NodeKind::kUnknownType);
}

TEST(TypeTest, TensorTypeOptionalFieldsDefaultToNull) {
  auto t = ir::PtrCast<const TensorType>(TensorTy(Shape({16, 32}), DataType::kFP16));
  EXPECT_EQ(t->kind(), NodeKind::kTensorType);
  ASSERT_EQ(t->shape.size(), 2u);
  EXPECT_EQ(IntValue(t->shape[0]), 16);
  EXPECT_EQ(IntValue(t->shape[1]), 32);
  EXPECT_EQ(t->dtype, DataType::kFP16);
  EXPECT_EQ(t->memref, nullptr);
  EXPECT_EQ(t->tensor_view, nullptr);

  ExprPtr mr = Int(1);
  TensorType with_views(Shape({4}), DataType::kFP32, mr, Int(2));
  EXPECT_EQ(with_views.memref, mr);
  EXPECT_EQ(IntValue(with_views.tensor_view), 2);
}

TEST(TypeTest, DistributedTensorTypeCarriesWindowBuffer) {
  auto buf = MakeVar("buf", PtrType::Get());
  auto wb = ir::MakeNode<const WindowBuffer>(buf, Int(1024), false, true);
  auto plain =
      ir::PtrCast<const DistributedTensorType>(DistTensorTy(Shape({256}), DataType::kFP32));
  EXPECT_EQ(plain->kind(), NodeKind::kDistributedTensorType);
  EXPECT_EQ(plain->window_buffer, nullptr);
  auto bound =
      ir::PtrCast<const DistributedTensorType>(DistTensorTy(Shape({256}), DataType::kFP32, wb));
  EXPECT_EQ(bound->window_buffer, wb);
  EXPECT_EQ(bound->dtype, DataType::kFP32);
  EXPECT_EQ(IntValue(bound->shape[0]), 256);
}

TEST(TypeTest, TileAndTupleTypes) {
  TileType tile(Shape({8, 8}), DataType::kBF16);
  EXPECT_EQ(tile.kind(), NodeKind::kTileType);
  EXPECT_EQ(tile.shape.size(), 2u);
  EXPECT_EQ(tile.dtype, DataType::kBF16);
  TupleType tup({ScalarTy(DataType::kInt64), PtrType::Get()});
  EXPECT_EQ(tup.kind(), NodeKind::kTupleType);
  ASSERT_EQ(tup.types.size(), 2u);
  EXPECT_EQ(tup.types[1], PtrType::Get());
}

TEST(NodeKindTest, NamesAndRanges) {
  EXPECT_EQ(NodeKindName(NodeKind::kCommDomainScopeStmt), "CommDomainScopeStmt");
  EXPECT_EQ(NodeKindName(NodeKind::kWindowBuffer), "WindowBuffer");
  EXPECT_TRUE(IsTypeKind(NodeKind::kTileType));
  EXPECT_TRUE(IsExprKind(NodeKind::kWindowBuffer));
  EXPECT_TRUE(IsVarLikeKind(NodeKind::kIterArg));
  EXPECT_TRUE(IsVarLikeKind(NodeKind::kWindowBuffer));
  EXPECT_FALSE(IsVarLikeKind(NodeKind::kGlobalVar));
  EXPECT_TRUE(IsStmtKind(NodeKind::kScopeStmt));
  EXPECT_FALSE(IsStmtKind(NodeKind::kFunction));
  EXPECT_FALSE(IsExprKind(NodeKind::kOp));
}

// ---------------------------------------------------------------------------
// Spans: a node keeps line, column and the file's interned id in its 16-byte
// header.

TEST(SpanTest, FileNamesAreInternedOnceAndNamedBack) {
  FileId a = InternFileName("span_a.pyir");
  EXPECT_EQ(InternFileName("span_a.pyir"), a);
  FileId b = InternFileName("span_b.pyir");
  EXPECT_NE(a, b);
  EXPECT_NE(a, FileId{0});
  EXPECT_EQ(FileNameOf(a), "span_a.pyir");
  EXPECT_EQ(FileNameOf(b), "span_b.pyir");
  EXPECT_EQ(FileNameOf(0), "<unknown>");
  EXPECT_EQ(Span{}.ToString(), "<unknown>:0:0");
}

TEST(SpanTest, NodesKeepAndCopyTheirSpan) {
  static_assert(sizeof(Node) == 16);
  Span at{InternFileName("span_c.pyir"), 123456, 789};
  VarPtr v = MakeVar("x", ScalarTy(DataType::kIndex), at);
  EXPECT_EQ(v->span().file, at.file);
  EXPECT_EQ(v->span().ToString(), "span_c.pyir:123456:789");
  Var copy = *v;  // a copy is a new node with the same position
  EXPECT_EQ(copy.span().ToString(), "span_c.pyir:123456:789");
  EXPECT_EQ(copy.kind(), NodeKind::kVar);
  copy.set_span(At(2, 3));
  EXPECT_EQ(copy.span().ToString(), "t.pyir:2:3");
  EXPECT_EQ(v->span().line, 123456);
}

// An id the header cannot hold is not truncated into some other file's id.
TEST(SpanTest, AnIdBeyondTheHeadersBitsReadsAsOverflow) {
  VarPtr v = MakeVar("x", ScalarTy(DataType::kIndex), Span{kMaxFileIds + 5, 1, 1});
  EXPECT_EQ(v->span().file, kOverflowFileId);
  EXPECT_THAT(v->span().FileName(), HasSubstr("more than"));
}

// ---------------------------------------------------------------------------
// Expressions

TEST(ExprTest, VarKeepsNameTypeAndSpan) {
  VarPtr v = MakeVar("x", ScalarTy(DataType::kIndex), At(3, 9));
  EXPECT_EQ(v->kind(), NodeKind::kVar);
  EXPECT_EQ(v->name_hint, "x");
  EXPECT_EQ(ScalarDType(v), DataType::kIndex);
  EXPECT_EQ(v->span().line, 3);
  EXPECT_EQ(v->span().column, 9);
  EXPECT_EQ(v->span().FileName(), "t.pyir");
  EXPECT_EQ(v->span().ToString(), "t.pyir:3:9");
}

TEST(ExprTest, UnknownSpanPrintsPlaceholder) {
  VarPtr v = MakeVar("x", ScalarTy(DataType::kIndex));
  EXPECT_FALSE(v->span().IsKnown());
  EXPECT_EQ(v->span().ToString(), "<unknown>:0:0");
}

TEST(ExprTest, IterArgIsAVarWithInit) {
  ExprPtr init = Int(0);
  auto ia = ir::MakeNode<const IterArg>("acc", ScalarTy(DataType::kInt64), init);
  EXPECT_EQ(ia->kind(), NodeKind::kIterArg);
  EXPECT_EQ(ia->name_hint, "acc");
  EXPECT_EQ(ia->init_value, init);
  EXPECT_NE(AsVar(ia), nullptr);
}

TEST(ExprTest, WindowBufferTakesItsBaseName) {
  auto buf = MakeVar("buf", PtrType::Get());
  ExprPtr size = Int(1024);
  auto wb = ir::MakeNode<const WindowBuffer>(buf, size, true, false);
  EXPECT_EQ(wb->kind(), NodeKind::kWindowBuffer);
  EXPECT_EQ(wb->name_hint, "buf");
  EXPECT_EQ(wb->base, buf);
  EXPECT_EQ(wb->size, size);
  EXPECT_TRUE(wb->load_from_host);
  EXPECT_FALSE(wb->store_to_host);
  EXPECT_EQ(wb->type, PtrType::Get());
  EXPECT_NE(AsVar(wb), nullptr);
}

TEST(ExprTest, ConstantsDeduceScalarTypes) {
  ExprPtr i = Int(7, DataType::kInt32, At(1, 2));
  EXPECT_EQ(IntValue(i), 7);
  EXPECT_EQ(static_cast<const ConstInt&>(*i).dtype, DataType::kInt32);
  EXPECT_EQ(ScalarDType(i), DataType::kInt32);
  EXPECT_EQ(i->span().column, 2);
  EXPECT_EQ(ScalarDType(Int(1)), DataType::kInt64);  // the literal default

  ExprPtr f = Float(0.5);
  EXPECT_EQ(f->kind(), NodeKind::kConstFloat);
  EXPECT_EQ(static_cast<const ConstFloat&>(*f).value, 0.5);
  EXPECT_EQ(ScalarDType(f), DataType::kFP32);
  EXPECT_EQ(ScalarDType(Float(1.0, DataType::kFP64)), DataType::kFP64);

  ExprPtr b = Bool(true);
  EXPECT_EQ(b->kind(), NodeKind::kConstBool);
  EXPECT_TRUE(static_cast<const ConstBool&>(*b).value);
  EXPECT_EQ(ScalarDType(b), DataType::kBool);

  ExprPtr s = Str("sum");
  EXPECT_EQ(s->kind(), NodeKind::kConstString);
  EXPECT_EQ(static_cast<const ConstString&>(*s).value, "sum");
  EXPECT_EQ(s->type, UnknownType::Get());
}

TEST(ExprTest, GlobalVarHasUnknownType) {
  GlobalVar g("chip_orch");
  EXPECT_EQ(g.name, "chip_orch");
  EXPECT_EQ(g.type, UnknownType::Get());
}

TEST(ExprTest, BinaryPromotion) {
  auto i32 = MakeVar("a", ScalarTy(DataType::kInt32));
  auto i64 = MakeVar("b", ScalarTy(DataType::kInt64));
  auto idx = MakeVar("c", ScalarTy(DataType::kIndex));
  auto f16 = MakeVar("d", ScalarTy(DataType::kFP16));
  auto f32 = MakeVar("e", ScalarTy(DataType::kFP32));
  EXPECT_EQ(ScalarDType(Add(i32, i64)), DataType::kInt64);
  EXPECT_EQ(ScalarDType(Add(i64, i32)), DataType::kInt64);
  EXPECT_EQ(ScalarDType(Mul(i64, idx)), DataType::kIndex);
  EXPECT_EQ(ScalarDType(Mul(idx, i32)), DataType::kIndex);
  EXPECT_EQ(ScalarDType(Add(i64, f16)), DataType::kFP16);
  EXPECT_EQ(ScalarDType(Add(f16, f32)), DataType::kFP32);
  EXPECT_EQ(ScalarDType(Binary(BinaryOp::kLt, i32, i64)), DataType::kBool);
  EXPECT_EQ(ScalarDType(Binary(BinaryOp::kAnd, Bool(true), Bool(false))), DataType::kBool);
  EXPECT_EQ(ScalarDType(Binary(BinaryOp::kFloorDiv, idx, Int(2))), DataType::kIndex);
}

TEST(ExprTest, BinaryKeepsOperandsAndSpan) {
  auto x = MakeVar("x", ScalarTy(DataType::kInt64));
  ExprPtr one = Int(1);
  ExprPtr e = Binary(BinaryOp::kSub, x, one, At(5, 1));
  ASSERT_EQ(e->kind(), NodeKind::kBinaryExpr);
  const auto& be = static_cast<const BinaryExpr&>(*e);
  EXPECT_EQ(be.op, BinaryOp::kSub);
  EXPECT_EQ(be.lhs, x);
  EXPECT_EQ(be.rhs, one);
  EXPECT_EQ(be.span().line, 5);
  EXPECT_EQ(BinaryOpName(BinaryOp::kFloorMod), "FloorMod");
}

TEST(ExprTest, BinaryRejectsNonScalars) {
  auto t = MakeVar("t", TensorTy(Shape({4}), DataType::kFP32));
  try {
    Binary(BinaryOp::kAdd, t, Int(1), At(2, 4));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.message(), HasSubstr("operator Add needs scalar operands"));
    EXPECT_EQ(e.span().line, 2);
    EXPECT_EQ(e.Format(), "t.pyir:2:4: error: operator Add needs scalar operands");
  }
  EXPECT_THROW(Unary(UnaryOp::kNeg, t), ValueError);
}

TEST(ExprTest, UnaryTypes) {
  auto x = MakeVar("x", ScalarTy(DataType::kInt16));
  ExprPtr n = Unary(UnaryOp::kNeg, x);
  EXPECT_EQ(n->kind(), NodeKind::kUnaryExpr);
  EXPECT_EQ(ScalarDType(n), DataType::kInt16);
  EXPECT_EQ(static_cast<const UnaryExpr&>(*n).operand, x);
  EXPECT_EQ(ScalarDType(Unary(UnaryOp::kNot, Bool(false))), DataType::kBool);
  EXPECT_EQ(UnaryOpName(UnaryOp::kNot), "Not");
}

TEST(ExprTest, MakeTupleTypeIsTupleOfElementTypes) {
  auto p = MakeVar("p", PtrType::Get());
  ExprPtr t = Tuple({Int(256, DataType::kInt32), p});
  ASSERT_EQ(t->kind(), NodeKind::kMakeTuple);
  ASSERT_EQ(t->type->kind(), NodeKind::kTupleType);
  const auto& tt = static_cast<const TupleType&>(*t->type);
  ASSERT_EQ(tt.types.size(), 2u);
  EXPECT_EQ(static_cast<const ScalarType&>(*tt.types[0]).dtype, DataType::kInt32);
  EXPECT_EQ(tt.types[1], PtrType::Get());
  EXPECT_EQ(static_cast<const MakeTuple&>(*t).elements[1], p);
}

TEST(ExprTest, TupleGetItemSliceSubscript) {
  auto pair =
      MakeVar("pr", ir::MakeNode<const TupleType>(std::vector<TypePtr>{ScalarTy(DataType::kInt8)}));
  TupleGetItem tgi(pair, 0, ScalarTy(DataType::kInt8));
  EXPECT_EQ(tgi.kind(), NodeKind::kTupleGetItem);
  EXPECT_EQ(tgi.tuple, pair);
  EXPECT_EQ(tgi.index, 0);

  Slice sl(Int(0), Int(8), nullptr);
  EXPECT_EQ(sl.kind(), NodeKind::kSlice);
  EXPECT_EQ(IntValue(sl.stop), 8);
  EXPECT_EQ(sl.step, nullptr);
  EXPECT_EQ(sl.type, UnknownType::Get());

  auto out = MakeVar("out", TensorTy(Shape({8, 64}), DataType::kFP32));
  auto slice = ir::MakeNode<const Slice>(Int(0), Int(8), nullptr);
  Subscript sub(out, {slice, Int(3)}, UnknownType::Get());
  EXPECT_EQ(sub.kind(), NodeKind::kSubscript);
  EXPECT_EQ(sub.value, out);
  ASSERT_EQ(sub.indices.size(), 2u);
  EXPECT_EQ(sub.indices[0], slice);
}

TEST(ExprTest, CallAccessorsAndKwargLookup) {
  auto data = MakeVar("data", DistTensorTy(Shape({256}), DataType::kFP32));
  ExprPtr dev = Int(3);
  CallPtr dispatch = MakeFunctionCall("chip_orch", {data}, dev, nullptr, At(9, 9));
  EXPECT_EQ(dispatch->OpName(), "");
  ASSERT_NE(dispatch->Callee(), nullptr);
  EXPECT_EQ(dispatch->Callee()->name, "chip_orch");
  EXPECT_EQ(FindAttr(dispatch->attrs, "device"), dev);
  EXPECT_EQ(FindAttr(dispatch->attrs, "other"), nullptr);
  EXPECT_EQ(dispatch->type, UnknownType::Get());
  EXPECT_EQ(dispatch->span().line, 9);
  EXPECT_TRUE(dispatch->kwargs.empty());

  CallPtr no_device = MakeFunctionCall("f", {}, nullptr, ScalarTy(DataType::kInt64));
  EXPECT_TRUE(no_device->attrs.empty());
  EXPECT_EQ(ScalarDType(no_device), DataType::kInt64);

  KwargList kw = {
      {"op", EnumAttr{"pld.ReduceOp.Sum"}}, {"root", int64_t{0}}, {"dtype", DataType::kFP32}};
  Call opaque(OpRegistry::Get().GetOp("pl.some.op"), {data}, kw, {}, UnknownType::Get());
  EXPECT_EQ(opaque.OpName(), "pl.some.op");
  EXPECT_EQ(opaque.Callee(), nullptr);
  const AttrValue* op = FindKwarg(opaque.kwargs, "op");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(std::get<EnumAttr>(*op).qualified, "pld.ReduceOp.Sum");
  EXPECT_EQ(std::get<int64_t>(*FindKwarg(opaque.kwargs, "root")), 0);
  EXPECT_EQ(std::get<DataType>(*FindKwarg(opaque.kwargs, "dtype")), DataType::kFP32);
  EXPECT_EQ(FindKwarg(opaque.kwargs, "name"), nullptr);
}

// ---------------------------------------------------------------------------
// Statements

TEST(StmtTest, AssignEvalReturnYield) {
  auto x = MakeVar("x", ScalarTy(DataType::kInt64));
  ExprPtr v = Int(4);
  StmtPtr a = Assign(x, v, At(2, 5));
  ASSERT_EQ(a->kind(), NodeKind::kAssignStmt);
  EXPECT_EQ(static_cast<const AssignStmt&>(*a).var, x);
  EXPECT_EQ(static_cast<const AssignStmt&>(*a).value, v);
  EXPECT_EQ(a->span().line, 2);

  StmtPtr e = Eval(x, At(3, 5));
  ASSERT_EQ(e->kind(), NodeKind::kEvalStmt);
  EXPECT_EQ(static_cast<const EvalStmt&>(*e).expr, x);
  EXPECT_EQ(e->span().line, 3);

  StmtPtr r = Return({x, v}, At(4, 5));
  ASSERT_EQ(r->kind(), NodeKind::kReturnStmt);
  EXPECT_THAT(static_cast<const ReturnStmt&>(*r).values, ElementsAre(x, v));
  EXPECT_EQ(r->span().line, 4);

  YieldStmt y({x});
  EXPECT_EQ(y.kind(), NodeKind::kYieldStmt);
  EXPECT_THAT(y.values, ElementsAre(x));
}

TEST(StmtTest, UnpackAndSubscriptAssign) {
  auto a = MakeVar("a", UnknownType::Get());
  auto b = MakeVar("b", UnknownType::Get());
  ExprPtr call = MakeFunctionCall("f", {}, nullptr, nullptr);
  UnpackAssignStmt u({a, b}, call);
  EXPECT_EQ(u.kind(), NodeKind::kUnpackAssignStmt);
  EXPECT_THAT(u.vars, ElementsAre(a, b));
  EXPECT_EQ(u.value, call);

  auto out = MakeVar("out", TensorTy(Shape({8}), DataType::kFP32));
  auto target =
      ir::MakeNode<const Subscript>(out, std::vector<ExprPtr>{Int(0)}, UnknownType::Get());
  SubscriptAssignStmt sa(target, a);
  EXPECT_EQ(sa.kind(), NodeKind::kSubscriptAssignStmt);
  EXPECT_EQ(sa.target, target);
  EXPECT_EQ(sa.value, a);
}

TEST(StmtTest, SeqForWhileIf) {
  auto r = MakeVar("r", ScalarTy(DataType::kIndex));
  StmtPtr inner = Eval(r);
  SeqStmtsPtr body = Seq({inner}, At(6, 1));
  EXPECT_EQ(body->kind(), NodeKind::kSeqStmts);
  EXPECT_THAT(body->stmts, ElementsAre(inner));
  EXPECT_EQ(body->span().line, 6);

  StmtPtr f = For(r, Int(0), Int(4), Int(1), body, At(5, 1));
  ASSERT_EQ(f->kind(), NodeKind::kForStmt);
  const auto& fs = static_cast<const ForStmt&>(*f);
  EXPECT_EQ(fs.loop_var, r);
  EXPECT_EQ(IntValue(fs.start), 0);
  EXPECT_EQ(IntValue(fs.stop), 4);
  EXPECT_EQ(IntValue(fs.step), 1);
  EXPECT_EQ(fs.body, body);
  EXPECT_EQ(fs.kind, ForKind::kRange);
  EXPECT_TRUE(fs.iter_args.empty());
  EXPECT_TRUE(fs.return_vars.empty());
  EXPECT_EQ(fs.span().line, 5);
  EXPECT_EQ(ForKindName(ForKind::kUnroll), "unroll");

  ExprPtr cond = Bool(true);
  StmtPtr w = While(cond, body, At(7, 1));
  ASSERT_EQ(w->kind(), NodeKind::kWhileStmt);
  EXPECT_EQ(static_cast<const WhileStmt&>(*w).cond, cond);
  EXPECT_EQ(static_cast<const WhileStmt&>(*w).body, body);
  EXPECT_EQ(w->span().line, 7);

  StmtPtr i1 = If(cond, body);
  ASSERT_EQ(i1->kind(), NodeKind::kIfStmt);
  EXPECT_EQ(static_cast<const IfStmt&>(*i1).then_body, body);
  EXPECT_EQ(static_cast<const IfStmt&>(*i1).else_body, nullptr);
  StmtPtr i2 = If(cond, body, inner, At(8, 2));
  EXPECT_EQ(static_cast<const IfStmt&>(*i2).else_body, inner);
  EXPECT_EQ(i2->span().column, 2);
}

TEST(StmtTest, FlattenSeqOrSingle) {
  StmtPtr a = Eval(Int(1));
  StmtPtr b = Eval(Int(2));
  EXPECT_THAT(Flatten(Seq({a, b})), ElementsAre(a, b));
  EXPECT_THAT(Flatten(a), ElementsAre(a));
  EXPECT_TRUE(Flatten(nullptr).empty());
}

TEST(StmtTest, CommDomainScopeAndGenericScope) {
  auto buf = MakeVar("buf", PtrType::Get());
  auto wb = ir::MakeNode<const WindowBuffer>(buf, Int(64), false, false);
  auto body = Seq({});
  CommDomainScopeStmt s("comm_d0", DeviceSet{false, {0, 1}}, {wb}, {}, body);
  EXPECT_EQ(s.kind(), NodeKind::kCommDomainScopeStmt);
  EXPECT_EQ(s.name_hint, "comm_d0");
  EXPECT_EQ(s.devices, (DeviceSet{false, {0, 1}}));
  EXPECT_THAT(s.slots, ElementsAre(wb));
  EXPECT_TRUE(s.attrs.empty());
  EXPECT_EQ(s.body, body);

  auto t = MakeVar("t", UnknownType::Get());
  ScopeStmt g("pl.at", {}, {{"level", EnumAttr{"pl.Level.CHIP"}}}, t, body);
  EXPECT_EQ(g.kind(), NodeKind::kScopeStmt);
  EXPECT_EQ(g.kind_name, "pl.at");
  EXPECT_EQ(g.as_var, t);
  EXPECT_EQ(std::get<EnumAttr>(*FindKwarg(g.kwargs, "level")).qualified, "pl.Level.CHIP");
}

// ---------------------------------------------------------------------------
// DeviceSet

TEST(DeviceSetTest, AllIsNotAnySubset) {
  DeviceSet all = DeviceSet::All();
  DeviceSet none{false, {}};
  EXPECT_TRUE(all.all);
  EXPECT_TRUE(all.ids.empty());
  EXPECT_FALSE(all.Empty());
  EXPECT_TRUE(none.Empty());
  EXPECT_FALSE(none.all);
  EXPECT_NE(all, none);
  EXPECT_NE(all, (DeviceSet{false, {0, 1, 2, 3}}));
  EXPECT_EQ(DeviceSet{}, none);  // default-constructed is the empty subset
}

TEST(DeviceSetTest, EqualityComparesFlagAndList) {
  EXPECT_EQ((DeviceSet{false, {0, 1, 3}}), (DeviceSet{false, {0, 1, 3}}));
  EXPECT_NE((DeviceSet{false, {0, 1, 3}}), (DeviceSet{false, {0, 1}}));
  EXPECT_NE(DeviceSet::All(), (DeviceSet{true, {0}}));
}

TEST(DeviceSetTest, ToString) {
  EXPECT_EQ(DeviceSet::All().ToString(), "all");
  EXPECT_EQ((DeviceSet{false, {0, 1}}).ToString(), "[0, 1]");
  EXPECT_EQ((DeviceSet{false, {}}).ToString(), "[]");
}

// ---------------------------------------------------------------------------
// Function and Program

FunctionPtr Fn(std::string name, FunctionType t, std::optional<Level> level = std::nullopt,
               std::optional<Role> role = std::nullopt) {
  return ir::MakeNode<const Function>(std::move(name), std::vector<VarPtr>{},
                                      std::vector<ParamDirection>{}, std::vector<TypePtr>{},
                                      Seq({}), t, level, role);
}

TEST(FunctionTest, FieldsAreKept) {
  auto p = MakeVar("data", DistTensorTy(Shape({256}), DataType::kFP32));
  auto body = Seq({Return({p})});
  Function f("chip_orch", {p}, {ParamDirection::kInOut}, {p->type}, body,
             FunctionType::kOrchestration);
  EXPECT_EQ(f.kind(), NodeKind::kFunction);
  EXPECT_EQ(f.name, "chip_orch");
  EXPECT_THAT(f.params, ElementsAre(p));
  EXPECT_THAT(f.param_directions, ElementsAre(ParamDirection::kInOut));
  EXPECT_THAT(f.return_types, ElementsAre(p->type));
  EXPECT_EQ(f.body, body);
  EXPECT_EQ(f.func_type, FunctionType::kOrchestration);
  EXPECT_FALSE(f.level.has_value());
  EXPECT_FALSE(f.role.has_value());
}

TEST(FunctionTest, EnumNames) {
  EXPECT_EQ(FunctionTypeName(FunctionType::kOrchestration), "Orchestration");
  EXPECT_EQ(FunctionTypeFromName("InCore"), FunctionType::kInCore);
  EXPECT_EQ(FunctionTypeFromName("Graph"), FunctionType::kGraph);
  EXPECT_FALSE(FunctionTypeFromName("Kernel").has_value());
  EXPECT_EQ(LevelName(Level::kCoreGroup), "CORE_GROUP");
  EXPECT_EQ(LevelName(Level::kCluster0), "CLUSTER_0");
  EXPECT_EQ(LevelFromName("CHIP_DIE"), Level::kChipDie);
  EXPECT_EQ(LevelFromName("GLOBAL"), Level::kGlobal);
  EXPECT_FALSE(LevelFromName("chip").has_value());
  EXPECT_EQ(RoleName(Role::kSubWorker), "SubWorker");
  EXPECT_EQ(RoleFromName("Orchestrator"), Role::kOrchestrator);
  EXPECT_FALSE(RoleFromName("Worker").has_value());
}

TEST(ProgramTest, FunctionsKeptInNameOrder) {
  auto host = Fn("host_orch", FunctionType::kOpaque, Level::kHost, Role::kOrchestrator);
  auto chip = Fn("chip_orch", FunctionType::kOrchestration);
  auto kern = Fn("a_kernel", FunctionType::kInCore);
  auto z = Fn("zeta", FunctionType::kOpaque);
  Program p("P", {}, {host, z, chip, kern});
  EXPECT_EQ(p.kind(), NodeKind::kProgram);
  EXPECT_EQ(p.name, "P");
  EXPECT_THAT(p.functions, ElementsAre(kern, chip, host, z));
  EXPECT_EQ(p.FindFunction("host_orch"), host);
  EXPECT_EQ(p.FindFunction("a_kernel"), kern);
  EXPECT_EQ(p.FindFunction("zeta"), z);
  EXPECT_EQ(p.FindFunction("missing"), nullptr);
  EXPECT_EQ(p.FindFunction(""), nullptr);
}

TEST(ProgramTest, DynamicDimsKept) {
  auto nr = MakeVar("NR", ScalarTy(DataType::kIndex));
  Program p("P", {nr}, {});
  EXPECT_THAT(p.dynamic_dims, ElementsAre(nr));
  EXPECT_TRUE(p.functions.empty());
}

// ---------------------------------------------------------------------------
// Errors

TEST(ErrorTest, ValueErrorFormat) {
  ValueError e("alloc 'buf' has no view", At(12, 7));
  EXPECT_EQ(e.message(), "alloc 'buf' has no view");
  EXPECT_STREQ(e.what(), "alloc 'buf' has no view");
  EXPECT_EQ(e.Format(), "t.pyir:12:7: error: alloc 'buf' has no view");
}

TEST(ErrorTest, CheckFailureAborts) {
  EXPECT_DEATH(CDS_CHECK(1 + 1 == 3, "arithmetic broke"),
               "internal check failed: .*arithmetic broke");
}

}  // namespace
}  // namespace cds::ir
