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
// A NodeList is 16 bytes and takes its elements from the same per-thread chunk
// as the node being built, right after it.
//
// Lists are built from a std::vector (moved or copied), an initializer list or
// an iterator range; code that edits a list copies it out with ToVector(), edits,
// and builds a new node. Element access is that of a contiguous range, so loops,
// indexing and std::span<const T> work unchanged. The mutator is the only writer
// of elements, on a node copy it has not shared yet.

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
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  NodeList(It first, It last) {
    Fill(first, static_cast<size_t>(std::distance(first, last)));
  }
  NodeList(const NodeList& o) { Fill(o.begin(), o.size()); }
  NodeList(NodeList&& o) noexcept : data_(o.data_), size_(o.size_), in_arena_(o.in_arena_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  NodeList& operator=(const NodeList& o) {
    if (this != &o) NodeList(o).swap(*this);
    return *this;
  }
  NodeList& operator=(NodeList&& o) noexcept {
    NodeList(std::move(o)).swap(*this);
    return *this;
  }
  ~NodeList() { Clear(); }

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& operator[](size_t i) noexcept { return data_[i]; }
  const T& operator[](size_t i) const noexcept { return data_[i]; }
  T& front() noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& front() const noexcept { return data_[0]; }
  const T& back() const noexcept { return data_[size_ - 1]; }

  const T& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("NodeList::at");
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

  operator std::span<const T>() const noexcept { return {data_, size_}; }
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
    return data_[size_ - 1];
  }
  void pop_back() {
    Edit([](std::vector<T>& vec) { vec.pop_back(); });
  }
  T* insert(const T* pos, T v) {
    const size_t at = static_cast<size_t>(pos - data_);
    Edit([&](std::vector<T>& vec) { vec.insert(vec.begin() + static_cast<ptrdiff_t>(at), std::move(v)); });
    return data_ + at;
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }
  T* erase(const T* first, const T* last) {
    const auto from = first - data_, to = last - data_;
    Edit([&](std::vector<T>& vec) { vec.erase(vec.begin() + from, vec.begin() + to); });
    return data_ + from;
  }
  void clear() noexcept { Clear(); }

  void swap(NodeList& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(in_arena_, o.in_arena_);
  }

  friend bool operator==(const NodeList& a, const NodeList& b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i) {
      if (!(a.data_[i] == b.data_[i])) return false;
    }
    return true;
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

  // Element i is constructed from make(i).
  template <typename Make>
  void Build(size_t n, Make&& make) {
    if (n == 0) return;
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "element alignment too large");
    const size_t bytes = n * sizeof(T);
    void* mem = node_arena::AllocateBlock(bytes, alignof(T), in_arena_);
    T* out = static_cast<T*>(mem);
    size_t built = 0;
    try {
      for (; built < n; ++built) new (out + built) T(make(built));
    } catch (...) {
      std::destroy_n(out, built);
      Free(mem, bytes);
      throw;
    }
    data_ = out;
    size_ = static_cast<uint32_t>(n);
  }

  void Clear() noexcept {
    if (!data_) return;
    std::destroy_n(data_, size_);
    Free(data_, size_ * sizeof(T));
    data_ = nullptr;
    size_ = 0;
  }

  void Free(void* mem, size_t bytes) noexcept { node_arena::ReleaseBlock(mem, bytes, in_arena_); }

  T* data_ = nullptr;
  uint32_t size_ = 0;
  bool in_arena_ = false;
};

}  // namespace cds::ir
