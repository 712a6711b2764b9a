#pragma once

// NodeRef<T>: the owning pointer to an IR node (docs/ir.md, "Node memory").
//
// Why not std::shared_ptr: a shared_ptr is two words (object and control block)
// and the control block adds 16 bytes to every node. IR nodes hold most of
// their fields as pointers to other nodes, so both costs multiply: a program of
// 10^6 statements is bound by the memory its walks load. Nodes carry their own
// count in the node header instead, so a NodeRef is one word and there is no
// control block.
//
// The interface is the subset of shared_ptr the project uses, so that code reads
// the same; casts go through PtrCast<T>(ref) (ir::As in dispatch.h checks
// nothing either; TryAs checks the kind).

#include <cstddef>
#include <type_traits>
#include <utility>

namespace cds::ir {

class Node;
// Runs the concrete destructor of a node whose count reached zero and returns
// its memory to where MakeNode took it from (ir/node_arena.cc).
void DestroyNode(const Node* node) noexcept;
// Count operations; defined inline in node.h (Node is incomplete here).
inline void RetainNode(const Node* node) noexcept;
// True when this was the last reference.
inline bool ReleaseNode(const Node* node) noexcept;
inline long NodeUseCount(const Node* node) noexcept;

template <typename T>
class NodeRef {
 public:
  using element_type = T;

  constexpr NodeRef() noexcept = default;
  constexpr NodeRef(std::nullptr_t) noexcept {}
  // Adopts a node that is already counted elsewhere or freshly made: takes one
  // more reference. Nodes are only ever made by MakeNode, so any live node may
  // be wrapped again (unlike a raw pointer given to shared_ptr twice).
  explicit NodeRef(T* p) noexcept : p_(p) {
    if (p_) RetainNode(AsNode(p_));
  }
  NodeRef(const NodeRef& o) noexcept : p_(o.p_) {
    if (p_) RetainNode(AsNode(p_));
  }
  NodeRef(NodeRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  NodeRef(const NodeRef<U>& o) noexcept : p_(o.get()) {
    if (p_) RetainNode(AsNode(p_));
  }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  NodeRef(NodeRef<U>&& o) noexcept : p_(o.release()) {}
  ~NodeRef() {
    if (p_ && ReleaseNode(AsNode(p_))) DestroyNode(AsNode(p_));
  }

  // Copy, move, converting and null assignment alike: the argument is built by
  // the matching constructor and swapped in, and the old node goes with it.
  NodeRef& operator=(NodeRef o) noexcept {
    swap(o);
    return *this;
  }

  T* get() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  T* operator->() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

  // References to the node, this one included (0 when null). For tests and
  // assertions: another thread may change it at any time.
  long use_count() const noexcept { return p_ ? NodeUseCount(AsNode(p_)) : 0; }

  void reset() noexcept { NodeRef().swap(*this); }
  void swap(NodeRef& o) noexcept { std::swap(p_, o.p_); }
  // Gives up ownership without dropping the count (the caller takes it over).
  [[nodiscard]] T* release() noexcept {
    T* p = p_;
    p_ = nullptr;
    return p;
  }

  // Takes over a count the caller already holds (the inverse of release()).
  static NodeRef Adopt(T* p) noexcept {
    NodeRef r;
    r.p_ = p;
    return r;
  }

 private:
  // Like shared_ptr, a NodeRef may be copied and destroyed where T is only
  // declared (a header that names ExprPtr fields without including expr.h), so
  // the upcast cannot be a static_cast. Node is the first and only base of every
  // node class and none has virtual functions, so the Node is at the object's
  // address; MakeNode checks this for each class it makes.
  static const Node* AsNode(T* p) noexcept {
    return static_cast<const Node*>(static_cast<const void*>(p));
  }

  T* p_ = nullptr;
};

template <typename T, typename U>
bool operator==(const NodeRef<T>& a, const NodeRef<U>& b) noexcept {
  return a.get() == b.get();
}
template <typename T>
bool operator==(const NodeRef<T>& a, std::nullptr_t) noexcept {
  return !a;
}

// static_pointer_cast for NodeRef; the rvalue overload moves the count along.
template <typename T, typename U>
NodeRef<T> PtrCast(const NodeRef<U>& r) noexcept {
  return NodeRef<T>(static_cast<T*>(r.get()));
}
template <typename T, typename U>
NodeRef<T> PtrCast(NodeRef<U>&& r) noexcept {
  return NodeRef<T>::Adopt(static_cast<T*>(r.release()));
}

}  // namespace cds::ir
