#include "verifier/type_util.h"

#include "ir/expr.h"
#include "ir/printer.h"
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
      return x.dtype == y.dtype && ShapesEqual(x.shape, y.shape) && DimsEqual(x.memref, y.memref) &&
             DimsEqual(x.tensor_view, y.tensor_view);
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

std::string TypeText(const TypePtr& type) { return type ? PrintNode(type) : "<no type>"; }

std::string ExprText(const ExprPtr& expr) { return expr ? PrintNode(expr) : "<none>"; }

std::string CalleeText(const Call& call) {
  if (auto gv = call.Callee()) return "self." + gv->name;
  return call.OpName();
}

}  // namespace cds::verify
