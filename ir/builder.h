#pragma once

// Convenience constructors. Every function takes an optional span; nodes built
// in code (tests, generators) have an unknown span.

#include <string>
#include <vector>

#include "ir/function.h"
#include "ir/op_registry.h"

namespace cds::ir {

// `n`, a node just made, with its span set.
template <typename T>
NodeRef<T> WithSpan(NodeRef<T> n, const Span& span) {
  n->set_span(span);
  return n;
}

TypePtr ScalarTy(DataType dt);
TypePtr TensorTy(NodeList<ExprPtr> shape, DataType dt);
TypePtr DistTensorTy(NodeList<ExprPtr> shape, DataType dt, WindowBufferPtr wb = nullptr);
std::vector<ExprPtr> Shape(std::initializer_list<int64_t> dims);

VarPtr MakeVar(std::string name, TypePtr type, Span span = {});
ExprPtr Int(int64_t v, DataType dt = DataType::kInt64, Span span = {});
ExprPtr Float(double v, DataType dt = DataType::kFP32, Span span = {});
ExprPtr Bool(bool v, Span span = {});
ExprPtr Str(std::string v, Span span = {});
ExprPtr Tuple(NodeList<ExprPtr> elements, Span span = {});

// The result dtype of a scalar binary op: comparisons and And/Or give BOOL;
// a float operand wins; INDEX wins over other integers; else the wider operand.
DataType PromoteDataTypes(BinaryOp op, DataType a, DataType b);
// Throws ValueError if an operand is not a scalar.
ExprPtr Binary(BinaryOp op, ExprPtr a, ExprPtr b, Span span = {});
ExprPtr Unary(UnaryOp op, ExprPtr x, Span span = {});
inline ExprPtr Add(ExprPtr a, ExprPtr b) {
  return Binary(BinaryOp::kAdd, std::move(a), std::move(b));
}
inline ExprPtr Mul(ExprPtr a, ExprPtr b) {
  return Binary(BinaryOp::kMul, std::move(a), std::move(b));
}

// `self.callee(args..., device=device)`; result type is the callee's return type
// (Unknown when it returns nothing or several values are not known yet).
CallPtr MakeFunctionCall(std::string callee, NodeList<ExprPtr> args, ExprPtr device,
                         TypePtr result_type, Span span = {});

StmtPtr Assign(VarPtr var, ExprPtr value, Span span = {});
StmtPtr Eval(ExprPtr e, Span span = {});
StmtPtr Return(NodeList<ExprPtr> values, Span span = {});
SeqStmtsPtr Seq(NodeList<StmtPtr> stmts, Span span = {});
StmtPtr For(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step, StmtPtr body,
            Span span = {});
StmtPtr While(ExprPtr cond, StmtPtr body, Span span = {});
StmtPtr If(ExprPtr cond, StmtPtr then_body, StmtPtr else_body = nullptr, Span span = {});

// The statements of a body: the SeqStmts' children, or the single statement.
std::vector<StmtPtr> Flatten(const StmtPtr& body);

}  // namespace cds::ir
