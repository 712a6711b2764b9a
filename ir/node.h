#pragma once

// Base of every IR object, the node-kind list, and the field-table machinery.
//
// Each concrete node describes its fields exactly once, in a static Fields()
// table: name, member pointer and role (definition / usual / ignored). The
// visitor, the mutator, structural equality, structural hashing and the
// difference-path reporter are all derived from these tables, so adding a field
// to a node cannot leave one of them behind (the class of bug behind PyPTO's
// issues #2412 and #2446, where a type field was missing from the hash).

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "ir/node_arena.h"
#include "ir/span.h"

namespace cds::ir {

#define CDS_TYPE_NODES(X)  \
  X(ScalarType)            \
  X(PtrType)               \
  X(TensorType)            \
  X(DistributedTensorType) \
  X(TileType)              \
  X(TupleType)             \
  X(UnknownType)

// Var-like nodes (definitions compared through a bijective mapping) come first.
#define CDS_EXPR_NODES(X) CDS_VAR_NODES(X) CDS_VALUE_NODES(X)
#define CDS_VAR_NODES(X) \
  X(Var)                 \
  X(IterArg)             \
  X(WindowBuffer)
// The expressions that are not Var-like.
#define CDS_VALUE_NODES(X) \
  X(GlobalVar)             \
  X(ConstInt)              \
  X(ConstFloat)            \
  X(ConstBool)             \
  X(ConstString)           \
  X(BinaryExpr)            \
  X(UnaryExpr)             \
  X(MakeTuple)             \
  X(TupleGetItem)          \
  X(Slice)                 \
  X(Subscript)             \
  X(Call)

#define CDS_STMT_NODES(X) \
  X(AssignStmt)           \
  X(UnpackAssignStmt)     \
  X(SubscriptAssignStmt)  \
  X(EvalStmt)             \
  X(ReturnStmt)           \
  X(YieldStmt)            \
  X(SeqStmts)             \
  X(ForStmt)              \
  X(WhileStmt)            \
  X(IfStmt)               \
  X(CommDomainScopeStmt)  \
  X(ScopeStmt)

#define CDS_OTHER_NODES(X) \
  X(Op)                    \
  X(Function)              \
  X(Program)

#define CDS_ALL_NODES(X) CDS_TYPE_NODES(X) CDS_EXPR_NODES(X) CDS_STMT_NODES(X) CDS_OTHER_NODES(X)

enum class NodeKind : uint8_t {
#define CDS_ENUM_ENTRY(N) k##N,
  CDS_ALL_NODES(CDS_ENUM_ENTRY)
#undef CDS_ENUM_ENTRY
};

std::string_view NodeKindName(NodeKind kind);

inline bool IsTypeKind(NodeKind k) {
  return k >= NodeKind::kScalarType && k <= NodeKind::kUnknownType;
}
inline bool IsExprKind(NodeKind k) { return k >= NodeKind::kVar && k <= NodeKind::kCall; }
inline bool IsStmtKind(NodeKind k) {
  return k >= NodeKind::kAssignStmt && k <= NodeKind::kScopeStmt;
}
inline bool IsVarLikeKind(NodeKind k) {
  return k >= NodeKind::kVar && k <= NodeKind::kWindowBuffer;
}

// Immutable after construction by convention: nodes are shared through
// NodeRef<const T>; a pass builds new nodes and reuses untouched subtrees.
//
// Nodes have no virtual functions: dispatch goes through kind(), and a node is
// destroyed by DestroyNode, which switches on the kind to run the concrete
// destructor. Without a vtable pointer every node is 8 bytes smaller, which
// matters to walks over programs too large for the cache. The destructor is
// protected so that deleting a node through a Node* does not compile.
//
// The node header is 16 bytes: the position (line, column and the file's id),
// the kind and the reference count (node_ref.h says why the
// count lives here). A Span holds the same three numbers; nodes keep them
// unpacked instead of a Span member so that the file id and the kind share one
// word. Every node carries one, and a parsed program is mostly small nodes: the
// header is a third of a ConstInt and a large share of the bytes a parse writes
// and a pass reads.
class Node {
 public:
  NodeKind kind() const { return kind_; }
  // Not part of structural equality or hashing. Returned as const so that
  // `node->span() = s` (a no-op on a temporary) does not compile: use set_span.
  const Span span() const { return Span{file_, line_, column_}; }
  void set_span(const Span& s) {
    line_ = s.line;
    column_ = s.column;
    file_ = s.file < kMaxFileIds ? s.file : kOverflowFileId;
  }

 protected:
  explicit Node(NodeKind kind) : kind_(kind), file_(0) {}
  ~Node() = default;
  // A copy is a new node: its count starts at zero.
  Node(const Node& o) : line_(o.line_), column_(o.column_), kind_(o.kind_), file_(o.file_) {}

 private:
  friend struct NodeAccess;
  int32_t line_ = 0;
  int32_t column_ = 0;
  NodeKind kind_ : 8;
  uint32_t file_ : 23;
  mutable std::atomic<uint32_t> refs_{0};
};
static_assert(sizeof(Node) == 16);
using NodePtr = NodeRef<const Node>;

struct NodeAccess {
  static std::atomic<uint32_t>& Refs(const Node* n) { return n->refs_; }
};

inline void RetainNode(const Node* node) noexcept {
  NodeAccess::Refs(node).fetch_add(1, std::memory_order_relaxed);
}

inline bool ReleaseNode(const Node* node) noexcept {
  std::atomic<uint32_t>& refs = NodeAccess::Refs(node);
  // The sole owner may skip the atomic decrement: nobody else can add a
  // reference without holding one. Most nodes have exactly one owner.
  if (refs.load(std::memory_order_acquire) == 1) return true;
  return refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

inline long NodeUseCount(const Node* node) noexcept {
  return static_cast<long>(NodeAccess::Refs(node).load(std::memory_order_relaxed));
}

template <typename T, typename... Args>
NodeRef<T> MakeNode(Args&&... args) {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_base_of_v<Node, U>, "MakeNode makes IR nodes");
  static_assert(alignof(U) <= node_arena::kMaxAlign, "node alignment too large");
  void* mem = node_arena::Allocate(sizeof(U), alignof(U));
  U* node;
  try {
    node = new (mem) U(std::forward<Args>(args)...);
  } catch (...) {
    node_arena::Release(mem, sizeof(U));
    throw;
  }
  // NodeRef relies on the Node being at the object's address (node_ref.h,
  // AsNode). Node classes are not standard-layout, so this cannot be a
  // static_assert; the offset is a constant and the check folds away.
  if (static_cast<void*>(static_cast<Node*>(node)) != mem) __builtin_trap();
  return NodeRef<T>(node);
}

// ---------------------------------------------------------------------------
// Field tables

enum class FieldRole : uint8_t {
  kDef,      // introduces Vars (assign LHS, params, loop vars): mapped, not compared by address
  kUsual,    // compared / hashed / visited by value (Var uses follow the mapping)
  kIgnored,  // carried but invisible to equality and hashing (name hints)
};

template <typename C, typename M>
struct FieldDesc {
  std::string_view name;
  M C::*member;
  FieldRole role;
};

template <typename C, typename M>
constexpr FieldDesc<C, M> DefField(std::string_view name, M C::*m) {
  return {name, m, FieldRole::kDef};
}
template <typename C, typename M>
constexpr FieldDesc<C, M> UsualField(std::string_view name, M C::*m) {
  return {name, m, FieldRole::kUsual};
}
template <typename C, typename M>
constexpr FieldDesc<C, M> IgnoredField(std::string_view name, M C::*m) {
  return {name, m, FieldRole::kIgnored};
}

// Calls f(name, value, role) for each field of `node` in table order. Through a
// mutable node (one under construction: the mutator's copy) f gets mutable values.
template <typename T, typename F>
void ForEachField(T& node, F&& f) {
  std::apply([&](const auto&... fd) { (f(fd.name, node.*(fd.member), fd.role), ...); },
             std::remove_const_t<T>::Fields());
}

// Calls f(name, lhs_value, rhs_value, role) for each field; stops when f returns false.
template <typename T, typename F>
bool ForEachFieldPair(const T& lhs, const T& rhs, F&& f) {
  return std::apply(
      [&](const auto&... fd) {
        return (f(fd.name, lhs.*(fd.member), rhs.*(fd.member), fd.role) && ...);
      },
      T::Fields());
}

}  // namespace cds::ir
