#include "verifier/byte_size.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "ir/dtype.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

ByteSize Opaque(const ExprPtr& e) { return ByteSize{1, {e}}; }

ByteSize Constant(int64_t v) { return ByteSize{v, {}}; }

std::optional<int64_t> FoldConstants(BinaryOp op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case BinaryOp::kAdd:
      if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
      return r;
    case BinaryOp::kSub:
      if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
      return r;
    case BinaryOp::kMul:
      if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
      return r;
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod: {
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return op == BinaryOp::kFloorDiv ? q : a - q * b;
    }
    case BinaryOp::kMin:
      return std::min(a, b);
    case BinaryOp::kMax:
      return std::max(a, b);
    default:
      return std::nullopt;  // comparisons, logic and true division are not sizes
  }
}

// Vars by identity: a size must use the very Vars its alloc's argument uses.
bool SameFactor(const ExprPtr& a, const ExprPtr& b) {
  if (a.get() == b.get()) return true;
  if (!a || !b || IsVarLikeKind(a->kind()) || IsVarLikeKind(b->kind())) return false;
  return StructuralEqual(a, b);
}

}  // namespace

ByteSize FoldByteSize(const ExprPtr& e) {
  if (!e) return Opaque(e);
  if (e->kind() == NodeKind::kConstInt) return Constant(static_cast<const ConstInt&>(*e).value);
  if (e->kind() == NodeKind::kUnaryExpr) {
    const auto& u = static_cast<const UnaryExpr&>(*e);
    ByteSize x = FoldByteSize(u.operand);
    if (u.op == UnaryOp::kNeg && x.factors.empty() &&
        x.constant != std::numeric_limits<int64_t>::min()) {
      return Constant(-x.constant);
    }
    return Opaque(e);
  }
  if (e->kind() != NodeKind::kBinaryExpr) return Opaque(e);
  const auto& b = static_cast<const BinaryExpr&>(*e);
  ByteSize l = FoldByteSize(b.lhs);
  ByteSize r = FoldByteSize(b.rhs);
  if (b.op == BinaryOp::kMul) {
    ByteSize out;
    if (__builtin_mul_overflow(l.constant, r.constant, &out.constant)) return Opaque(e);
    if (out.constant == 0) return Constant(0);
    out.factors = std::move(l.factors);
    out.factors.insert(out.factors.end(), r.factors.begin(), r.factors.end());
    return out;
  }
  if (l.factors.empty() && r.factors.empty()) {
    if (auto v = FoldConstants(b.op, l.constant, r.constant)) return Constant(*v);
  }
  return Opaque(e);
}

std::optional<ByteSize> AllocByteSize(const Call& alloc, std::string* why) {
  if (alloc.args.empty() || !alloc.args[0]) {
    *why = "the alloc has no size argument";
    return std::nullopt;
  }
  const ExprPtr& arg = alloc.args[0];
  if (arg->kind() != NodeKind::kMakeTuple) return FoldByteSize(arg);
  const AttrValue* dtype = FindKwarg(alloc.kwargs, "dtype");
  if (dtype == nullptr || !std::holds_alternative<DataType>(*dtype)) {
    *why = "the shape-form alloc has no dtype=";
    return std::nullopt;
  }
  ByteSize size = Constant(DataTypeBytes(std::get<DataType>(*dtype)));
  for (const ExprPtr& dim : static_cast<const MakeTuple&>(*arg).elements) {
    ByteSize d = FoldByteSize(dim);
    if (__builtin_mul_overflow(size.constant, d.constant, &size.constant)) {
      *why = "the shape's byte count overflows 64 bits";
      return std::nullopt;
    }
    size.factors.insert(size.factors.end(), d.factors.begin(), d.factors.end());
  }
  if (size.constant == 0) size.factors.clear();
  return size;
}

bool SameByteSize(const ByteSize& a, const ByteSize& b) {
  if (a.constant != b.constant || a.factors.size() != b.factors.size()) return false;
  std::vector<bool> used(b.factors.size(), false);
  for (const ExprPtr& f : a.factors) {
    bool found = false;
    for (size_t i = 0; i < b.factors.size() && !found; ++i) {
      if (!used[i] && SameFactor(f, b.factors[i])) used[i] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

std::string ByteSizeText(const ByteSize& size) {
  std::string s = fmt::format("{}", size.constant);
  for (const ExprPtr& f : size.factors) {
    const bool compound = f && f->kind() == NodeKind::kBinaryExpr;
    s += compound ? fmt::format(" * ({})", PrintNode(f)) : " * " + PrintNode(f);
  }
  return s;
}

}  // namespace cds::verify
