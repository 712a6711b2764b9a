#include "ir/builder.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace cds::ir {

TypePtr ScalarTy(DataType dt) { return ScalarType::Get(dt); }

TypePtr TensorTy(NodeList<ExprPtr> shape, DataType dt) {
  return MakeNode<const TensorType>(std::move(shape), dt);
}

TypePtr DistTensorTy(NodeList<ExprPtr> shape, DataType dt, WindowBufferPtr wb) {
  return MakeNode<const DistributedTensorType>(std::move(shape), dt, nullptr, nullptr,
                                               std::move(wb));
}

std::vector<ExprPtr> Shape(std::initializer_list<int64_t> dims) {
  std::vector<ExprPtr> out;
  for (int64_t d : dims) out.push_back(Int(d));
  return out;
}

VarPtr MakeVar(std::string name, TypePtr type, Span span) {
  return WithSpan(MakeNode<Var>(std::move(name), std::move(type)), span);
}
ExprPtr Int(int64_t v, DataType dt, Span span) { return WithSpan(MakeNode<ConstInt>(v, dt), span); }
ExprPtr Float(double v, DataType dt, Span span) {
  return WithSpan(MakeNode<ConstFloat>(v, dt), span);
}
ExprPtr Bool(bool v, Span span) { return WithSpan(MakeNode<ConstBool>(v), span); }
ExprPtr Str(std::string v, Span span) {
  return WithSpan(MakeNode<ConstString>(std::move(v)), span);
}
ExprPtr Tuple(NodeList<ExprPtr> elements, Span span) {
  return WithSpan(MakeNode<MakeTuple>(std::move(elements)), span);
}

DataType PromoteDataTypes(BinaryOp op, DataType a, DataType b) {
  // Comparisons and logic are the last operators of BinaryOp.
  if (op >= BinaryOp::kEq) return DataType::kBool;
  if (IsFloat(a) || IsFloat(b)) {
    if (!IsFloat(a)) return b;
    if (!IsFloat(b)) return a;
    return DataTypeBytes(b) > DataTypeBytes(a) ? b : a;
  }
  if (a == DataType::kIndex || b == DataType::kIndex) return DataType::kIndex;
  return DataTypeBytes(b) > DataTypeBytes(a) ? b : a;
}

static const ScalarType* ScalarOrNull(const ExprPtr& e) {
  if (!HasTypeKind(e, NodeKind::kScalarType)) return nullptr;
  return static_cast<const ScalarType*>(e->type.get());
}

ExprPtr Binary(BinaryOp op, ExprPtr a, ExprPtr b, Span span) {
  const ScalarType* ta = ScalarOrNull(a);
  const ScalarType* tb = ScalarOrNull(b);
  if (!ta || !tb) {
    throw ValueError(fmt::format("operator {} needs scalar operands", BinaryOpName(op)), span);
  }
  TypePtr t = ScalarTy(PromoteDataTypes(op, ta->dtype, tb->dtype));
  return WithSpan(MakeNode<BinaryExpr>(op, std::move(a), std::move(b), std::move(t)), span);
}

ExprPtr Unary(UnaryOp op, ExprPtr x, Span span) {
  const ScalarType* tx = ScalarOrNull(x);
  if (!tx)
    throw ValueError(fmt::format("operator {} needs a scalar operand", UnaryOpName(op)), span);
  TypePtr t = op == UnaryOp::kNot ? ScalarTy(DataType::kBool) : x->type;
  return WithSpan(MakeNode<UnaryExpr>(op, std::move(x), std::move(t)), span);
}

CallPtr MakeFunctionCall(std::string callee, NodeList<ExprPtr> args, ExprPtr device,
                         TypePtr result_type, Span span) {
  ExprAttrList attrs;
  if (device) attrs.emplace_back("device", std::move(device));
  return WithSpan(MakeNode<Call>(WithSpan(MakeNode<GlobalVar>(std::move(callee)), span),
                                 std::move(args), KwargList{}, std::move(attrs),
                                 result_type ? std::move(result_type) : UnknownType::Get()),
                  span);
}

StmtPtr Assign(VarPtr var, ExprPtr value, Span span) {
  return WithSpan(MakeNode<AssignStmt>(std::move(var), std::move(value)), span);
}
StmtPtr Eval(ExprPtr e, Span span) { return WithSpan(MakeNode<EvalStmt>(std::move(e)), span); }
StmtPtr Return(NodeList<ExprPtr> values, Span span) {
  return WithSpan(MakeNode<ReturnStmt>(std::move(values)), span);
}
SeqStmtsPtr Seq(NodeList<StmtPtr> stmts, Span span) {
  return WithSpan(MakeNode<SeqStmts>(std::move(stmts)), span);
}
StmtPtr For(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step, StmtPtr body, Span span) {
  return WithSpan(MakeNode<ForStmt>(std::move(loop_var), std::move(start), std::move(stop),
                                    std::move(step), std::move(body)),
                  span);
}
StmtPtr While(ExprPtr cond, StmtPtr body, Span span) {
  return WithSpan(MakeNode<WhileStmt>(std::move(cond), std::move(body)), span);
}
StmtPtr If(ExprPtr cond, StmtPtr then_body, StmtPtr else_body, Span span) {
  return WithSpan(MakeNode<IfStmt>(std::move(cond), std::move(then_body), std::move(else_body)),
                  span);
}

std::vector<StmtPtr> Flatten(const StmtPtr& body) {
  if (!body) return {};
  if (body->kind() == NodeKind::kSeqStmts)
    return static_cast<const SeqStmts&>(*body).stmts.ToVector();
  return {body};
}

}  // namespace cds::ir
