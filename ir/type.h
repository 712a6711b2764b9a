#pragma once

#include <memory>
#include <vector>

#include "ir/dtype.h"
#include "ir/node.h"
#include "ir/node_list.h"

namespace cds::ir {

class Expr;
class WindowBuffer;
using ExprPtr = NodeRef<const Expr>;
using WindowBufferPtr = NodeRef<const WindowBuffer>;

class Type : public Node {
 protected:
  using Node::Node;
};
using TypePtr = NodeRef<const Type>;

class ScalarType final : public Type {
 public:
  explicit ScalarType(DataType dt) : Type(NodeKind::kScalarType), dtype(dt) {}
  // One shared instance per dtype.
  static NodeRef<const Type> Get(DataType dt);
  DataType dtype;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("dtype", &ScalarType::dtype));
  }
};

// One shared instance: every pointer-typed Var (an alloc's LHS) has this type.
class PtrType final : public Type {
 public:
  PtrType() : Type(NodeKind::kPtrType) {}
  static NodeRef<const PtrType> Get();
  static constexpr auto Fields() { return std::tuple<>(); }
};

// A type nobody could deduce (an opaque call without an annotation).
class UnknownType final : public Type {
 public:
  UnknownType() : Type(NodeKind::kUnknownType) {}
  static NodeRef<const UnknownType> Get();
  static constexpr auto Fields() { return std::tuple<>(); }
};

class TensorType final : public Type {
 public:
  TensorType(NodeList<ExprPtr> s, DataType dt, ExprPtr mr = nullptr, ExprPtr tv = nullptr)
      : Type(NodeKind::kTensorType),
        shape(std::move(s)),
        dtype(dt),
        memref(std::move(mr)),
        tensor_view(std::move(tv)) {}
  NodeList<ExprPtr> shape;
  DataType dtype;
  ExprPtr memref;       // optional
  ExprPtr tensor_view;  // optional
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("shape", &TensorType::shape),
                           UsualField("dtype", &TensorType::dtype),
                           UsualField("memref", &TensorType::memref),
                           UsualField("tensor_view", &TensorType::tensor_view));
  }
};

// The type of a window view. window_buffer is the back-reference the pass fills
// in; all views of one alloc point at one shared WindowBuffer object.
class DistributedTensorType final : public Type {
 public:
  DistributedTensorType(NodeList<ExprPtr> s, DataType dt, ExprPtr mr = nullptr,
                        ExprPtr tv = nullptr, WindowBufferPtr wb = nullptr)
      : Type(NodeKind::kDistributedTensorType),
        shape(std::move(s)),
        dtype(dt),
        memref(std::move(mr)),
        tensor_view(std::move(tv)),
        window_buffer(std::move(wb)) {}
  NodeList<ExprPtr> shape;
  DataType dtype;
  ExprPtr memref;
  ExprPtr tensor_view;
  WindowBufferPtr window_buffer;  // optional back-reference
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("shape", &DistributedTensorType::shape),
                           UsualField("dtype", &DistributedTensorType::dtype),
                           UsualField("memref", &DistributedTensorType::memref),
                           UsualField("tensor_view", &DistributedTensorType::tensor_view),
                           UsualField("window_buffer", &DistributedTensorType::window_buffer));
  }
};

// pl.Tile[[shape], dtype]: kernel-side tiles, kept so whole programs parse.
class TileType final : public Type {
 public:
  TileType(NodeList<ExprPtr> s, DataType dt)
      : Type(NodeKind::kTileType), shape(std::move(s)), dtype(dt) {}
  NodeList<ExprPtr> shape;
  DataType dtype;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("shape", &TileType::shape),
                           UsualField("dtype", &TileType::dtype));
  }
};

class TupleType final : public Type {
 public:
  explicit TupleType(NodeList<TypePtr> t) : Type(NodeKind::kTupleType), types(std::move(t)) {}
  NodeList<TypePtr> types;
  static constexpr auto Fields() { return std::make_tuple(UsualField("types", &TupleType::types)); }
};

}  // namespace cds::ir
