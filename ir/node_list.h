#pragma once

// NodeList<T>: the list fields of IR nodes (call arguments, shapes, statement
// lists, kwargs, ...), a fixed-size array placed in the node arena
// (docs/ir.md, "Node memory").
//
// Why not std::vector: a node's list is written once, when the node is built,
// and never grows. A vector member is 24 bytes and its elements are a separate
// malloc block (16 bytes of malloc header, rounded up, wherever the free lists
// had room), so walking a Call meant a second, unrelated cache line and, under
// ASan, a trip through the sanitizer's allocator for every list of every node.
// A NodeList is one pointer (null for an empty list) and takes its elements,
// behind an 8-byte header with their count, from the same per-thread chunk as
// the node being built, right after it.
//
// Lists are built from a std::vector (moved or copied), the tail of one
// (VectorTail), an initializer list or an iterator range; code that edits a list
// copies it out with ToVector(), edits, and builds a new node. Element access is
// that of a contiguous range, so loops, indexing and std::span<const T> work
// unchanged. The mutator is the only writer of elements, on a node copy it has
// not shared yet.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/node_arena.h"

namespace cds::ir {

// The elements of a vector from index `from` on, to be moved into the NodeList
// of a node when the node is built, and then erased from the vector. A parser
// collects lists on scratch stacks; handing the top of the stack over this way
// builds the node's list in place, with no vector of its own in between (one
// malloc and free per call, tuple and block otherwise).
template <typename T>
struct VectorTail {
  std::vector<T>* vec;
  size_t from;
};

template <typename T>
class NodeList {
 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  NodeList() noexcept = default;
  NodeList(std::vector<T>&& v) { Fill(std::make_move_iterator(v.begin()), v.size()); }
  NodeList(const std::vector<T>& v) { Fill(v.begin(), v.size()); }
  NodeList(std::initializer_list<T> v) { Fill(v.begin(), v.size()); }
  NodeList(std::span<const T> v) { Fill(v.begin(), v.size()); }
  NodeList(VectorTail<T> tail) {
    const auto first = tail.vec->begin() + static_cast<std::ptrdiff_t>(tail.from);
    Fill(std::make_move_iterator(first), tail.vec->size() - tail.from);
    tail.vec->erase(first, tail.vec->end());
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  NodeList(It first, It last) {
    Fill(first, static_cast<size_t>(std::distance(first, last)));
  }
  NodeList(const NodeList& o) { Fill(o.begin(), o.size()); }
  NodeList(NodeList&& o) noexcept : data_(o.data_) { o.data_ = nullptr; }
  // Copy and move assignment alike: the argument is built, then swapped in.
  NodeList& operator=(NodeList o) noexcept {
    swap(o);
    return *this;
  }
  ~NodeList() { Clear(); }

  size_t size() const noexcept { return data_ ? HeaderOf(data_)->size : 0; }
  bool empty() const noexcept { return data_ == nullptr; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size(); }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size(); }
  T& operator[](size_t i) noexcept { return data_[i]; }
  const T& operator[](size_t i) const noexcept { return data_[i]; }
  T& front() noexcept { return data_[0]; }
  T& back() noexcept { return data_[size() - 1]; }
  const T& front() const noexcept { return data_[0]; }
  const T& back() const noexcept { return data_[size() - 1]; }

  const T& at(size_t i) const {
    if (i >= size()) throw std::out_of_range("NodeList::at");
    return data_[i];
  }

  // A list of n elements, element i constructed from make(i), with no vector in
  // between.
  template <typename Make>
  static NodeList Generate(size_t n, Make&& make) {
    NodeList list;
    list.Build(n, make);
    return list;
  }

  operator std::span<const T>() const noexcept { return {data_, size()}; }
  std::vector<T> ToVector() const { return std::vector<T>(begin(), end()); }

  // Editing, for code that builds a node from a copy of another (tests, the
  // reducer, the text mutator): vector-like, but each call rebuilds the array,
  // so a loop of edits is quadratic. Hot paths build a std::vector and convert
  // once.
  void push_back(T v) {
    Edit([&](std::vector<T>& vec) { vec.push_back(std::move(v)); });
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    Edit([&](std::vector<T>& vec) { vec.emplace_back(std::forward<Args>(args)...); });
    return data_[size() - 1];
  }
  void pop_back() {
    Edit([](std::vector<T>& vec) { vec.pop_back(); });
  }
  T* insert(const T* pos, T v) {
    const size_t at = static_cast<size_t>(pos - data_);
    Edit([&](std::vector<T>& vec) {
      vec.insert(vec.begin() + static_cast<ptrdiff_t>(at), std::move(v));
    });
    return data_ + at;
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }
  T* erase(const T* first, const T* last) {
    const auto from = first - data_, to = last - data_;
    Edit([&](std::vector<T>& vec) { vec.erase(vec.begin() + from, vec.begin() + to); });
    return data_ + from;
  }
  void clear() noexcept { Clear(); }

  void swap(NodeList& o) noexcept { std::swap(data_, o.data_); }

  friend bool operator==(const NodeList& a, const NodeList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  template <typename F>
  void Edit(F&& edit) {
    std::vector<T> vec(std::make_move_iterator(begin()), std::make_move_iterator(end()));
    edit(vec);
    *this = NodeList(std::move(vec));
  }

  template <typename It>
  void Fill(It first, size_t n) {
    Build(n, [&first](size_t) -> decltype(auto) { return *first++; });
  }

  // The element count sits just before the first element, so that a list is one
  // pointer (null when empty): most calls have no kwargs and no attrs, and the
  // parsed program is mostly small nodes.
  struct alignas(8) Header {
    uint32_t size;
  };
  static_assert(alignof(T) <= alignof(Header) && sizeof(Header) % alignof(T) == 0,
                "elements must start right after the header");
  static Header* HeaderOf(T* data) noexcept { return reinterpret_cast<Header*>(data) - 1; }
  static const Header* HeaderOf(const T* data) noexcept {
    return reinterpret_cast<const Header*>(data) - 1;
  }

  // Element i is constructed from make(i).
  template <typename Make>
  void Build(size_t n, Make&& make) {
    if (n == 0) return;
    if (n > UINT32_MAX) throw std::length_error("NodeList: more than 2^32 - 1 elements");
    const size_t bytes = sizeof(Header) + n * sizeof(T);
    void* mem = node_arena::Allocate(bytes, alignof(Header));
    auto* header = new (mem) Header{static_cast<uint32_t>(n)};
    T* out = reinterpret_cast<T*>(header + 1);
    size_t built = 0;
    try {
      for (; built < n; ++built) new (out + built) T(make(built));
    } catch (...) {
      std::destroy_n(out, built);
      node_arena::Release(mem, bytes);
      throw;
    }
    data_ = out;
  }

  void Clear() noexcept {
    if (!data_) return;
    Header* header = HeaderOf(data_);
    const size_t n = header->size;
    std::destroy_n(data_, n);
    node_arena::Release(header, sizeof(Header) + n * sizeof(T));
    data_ = nullptr;
  }

  T* data_ = nullptr;
};

}  // namespace cds::ir
