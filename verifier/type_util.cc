#include "verifier/type_util.h"

#include <fmt/format.h>

#include "ir/expr.h"
#include "ir/structural_equal.h"

namespace cds::verify {

using namespace cds::ir;

const WindowBuffer* WindowBufferOf(const TypePtr& type) {
  if (!type || type->kind() != NodeKind::kDistributedTensorType) return nullptr;
  return static_cast<const DistributedTensorType&>(*type).window_buffer.get();
}

bool ContainsWindowBuffer(const TypePtr& type) {
  if (!type) return false;
  if (type->kind() == NodeKind::kDistributedTensorType) {
    return static_cast<const DistributedTensorType&>(*type).window_buffer != nullptr;
  }
  if (type->kind() == NodeKind::kTupleType) {
    for (const auto& t : static_cast<const TupleType&>(*type).types) {
      if (ContainsWindowBuffer(t)) return true;
    }
  }
  return false;
}


bool TypesAgree(const TypePtr& a, const TypePtr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind() != b->kind()) return false;
  switch (a->kind()) {
    case NodeKind::kScalarType:
      return static_cast<const ScalarType&>(*a).dtype == static_cast<const ScalarType&>(*b).dtype;
    case NodeKind::kPtrType:
    case NodeKind::kUnknownType:
      return true;
    case NodeKind::kTensorType: {
      const auto& x = static_cast<const TensorType&>(*a);
      const auto& y = static_cast<const TensorType&>(*b);
      return x.dtype == y.dtype && ShapesEqual(x.shape, y.shape) &&
             DimsEqual(x.memref, y.memref) && DimsEqual(x.tensor_view, y.tensor_view);
    }
    case NodeKind::kDistributedTensorType: {
      const auto& x = static_cast<const DistributedTensorType&>(*a);
      const auto& y = static_cast<const DistributedTensorType&>(*b);
      return x.window_buffer == y.window_buffer && x.dtype == y.dtype &&
             ShapesEqual(x.shape, y.shape) && DimsEqual(x.memref, y.memref) &&
             DimsEqual(x.tensor_view, y.tensor_view);
    }
    case NodeKind::kTupleType: {
      const auto& x = static_cast<const TupleType&>(*a);
      const auto& y = static_cast<const TupleType&>(*b);
      if (x.types.size() != y.types.size()) return false;
      for (size_t i = 0; i < x.types.size(); ++i) {
        if (!TypesAgree(x.types[i], y.types[i])) return false;
      }
      return true;
    }
    default:
      return StructuralEqual(a, b);
  }
}

std::string DescribeExpr(const ExprPtr& e) {
  if (!e) return "<null>";
  switch (e->kind()) {
    case NodeKind::kConstInt:
      return fmt::format("{}", static_cast<const ConstInt&>(*e).value);
    case NodeKind::kVar:
    case NodeKind::kIterArg:
    case NodeKind::kWindowBuffer:
      return static_cast<const Var&>(*e).name_hint;
    case NodeKind::kBinaryExpr: {
      const auto& b = static_cast<const BinaryExpr&>(*e);
      return fmt::format("{}({}, {})", BinaryOpName(b.op), DescribeExpr(b.lhs),
                         DescribeExpr(b.rhs));
    }
    case NodeKind::kCall: {
      const auto& c = static_cast<const Call&>(*e);
      if (auto gv = c.Callee()) return fmt::format("self.{}(...)", gv->name);
      return fmt::format("{}(...)", c.OpName());
    }
    default:
      return std::string(NodeKindName(e->kind()));
  }
}

namespace {
std::string DescribeShape(std::span<const ExprPtr> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += DescribeExpr(shape[i]);
  }
  return s + "]";
}
}  // namespace

std::string DescribeType(const TypePtr& t) {
  if (!t) return "<null type>";
  switch (t->kind()) {
    case NodeKind::kScalarType:
      return fmt::format("Scalar[{}]", DataTypeName(static_cast<const ScalarType&>(*t).dtype));
    case NodeKind::kPtrType:
      return "Ptr";
    case NodeKind::kUnknownType:
      return "Unknown";
    case NodeKind::kTensorType: {
      const auto& x = static_cast<const TensorType&>(*t);
      return fmt::format("Tensor[{}, {}]", DescribeShape(x.shape), DataTypeName(x.dtype));
    }
    case NodeKind::kDistributedTensorType: {
      const auto& x = static_cast<const DistributedTensorType&>(*t);
      std::string wb = x.window_buffer ? fmt::format("window_buffer={}", x.window_buffer->name_hint)
                                       : std::string("no window_buffer");
      return fmt::format("DistributedTensor[{}, {}, {}]", DescribeShape(x.shape),
                         DataTypeName(x.dtype), wb);
    }
    case NodeKind::kTupleType: {
      const auto& x = static_cast<const TupleType&>(*t);
      std::string s = "Tuple[";
      for (size_t i = 0; i < x.types.size(); ++i) s += (i ? ", " : "") + DescribeType(x.types[i]);
      return s + "]";
    }
    default:
      return std::string(NodeKindName(t->kind()));
  }
}

}  // namespace cds::verify
