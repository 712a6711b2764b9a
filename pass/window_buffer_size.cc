#include "pass/window_buffer_size.h"

#include <variant>

#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"

namespace cds::pass {

ir::ExprPtr WindowBufferSizeBytes(const ir::Call& alloc) {
  if (alloc.OpName() != ir::ops::kAllocWindowBuffer || alloc.args.empty()) return nullptr;
  const ir::ExprPtr& size_or_shape = alloc.args[0];
  if (size_or_shape->kind() != ir::NodeKind::kMakeTuple) return size_or_shape;
  const ir::AttrValue* dtype = ir::FindKwarg(alloc.kwargs, "dtype");
  if (dtype == nullptr || !std::holds_alternative<ir::DataType>(*dtype)) return nullptr;
  ir::ExprPtr elements;
  for (const auto& dim : static_cast<const ir::MakeTuple&>(*size_or_shape).elements) {
    elements = elements ? ir::Mul(elements, dim) : dim;
  }
  ir::ExprPtr element_bytes = ir::Int(ir::DataTypeBytes(std::get<ir::DataType>(*dtype)));
  return elements ? ir::Mul(elements, element_bytes) : element_bytes;
}

}  // namespace cds::pass
