#pragma once

// Calls f(const T&) with the node downcast to its concrete class.

#include "ir/error.h"
#include "ir/function.h"

namespace cds::ir {

template <typename F>
decltype(auto) DispatchNode(const Node& node, F&& f) {
  switch (node.kind()) {
#define CDS_DISPATCH_ENTRY(N) \
  case NodeKind::k##N:        \
    return f(static_cast<const N&>(node));
    CDS_ALL_NODES(CDS_DISPATCH_ENTRY)
#undef CDS_DISPATCH_ENTRY
  }
  CDS_CHECK(false, "unknown node kind");
  __builtin_unreachable();
}

template <typename T>
NodeRef<const T> As(const NodePtr& n) {
  return PtrCast<const T>(n);
}

// Downcast helpers that check the kind; return null on mismatch.
template <typename T>
NodeRef<const T> TryAs(const NodePtr& n, NodeKind kind) {
  if (!n || n->kind() != kind) return nullptr;
  return PtrCast<const T>(n);
}

inline VarPtr AsVar(const NodePtr& n) {
  if (!n || !IsVarLikeKind(n->kind())) return nullptr;
  return PtrCast<const Var>(n);
}

}  // namespace cds::ir
