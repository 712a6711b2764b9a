#pragma once

// Memory for the nodes one parse builds (parser-internal).
//
// A parse of a large program builds millions of small nodes, each a
// make_shared allocation: malloc's bookkeeping and the page faults on its fresh
// memory were a third of the parser's time on a 100 MB input, and freeing the
// previous program left fragmented free lists that the next parse's large
// requests had to consolidate. Nodes are instead placed (object and shared_ptr
// control block together, via std::allocate_shared) in large chunks bumped one
// after the other, and the chunks of a finished arena are kept (up to a cap)
// for the next parse.
//
// Lifetime: a NodeArena counts its live nodes. deallocate() of a node only
// decrements the count; the chunks are returned when the last node built in
// them is gone (nodes outlive the parser and may be released on any thread, so
// the count is atomic). During the parse the count carries a large bias so that
// nodes discarded while parsing cannot bring it to zero; Finish() replaces the
// bias with the number of nodes allocated.
//
// Under AddressSanitizer nodes are ordinary make_shared allocations, so that a
// use after free of a node is still reported.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CDS_PARSE_ARENA_DISABLED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CDS_PARSE_ARENA_DISABLED 1
#endif

namespace cds::ir::parse {

class NodeArena {
 public:
  // `size_hint`: the input size in bytes, to size the first chunk.
  static NodeArena* Create(size_t size_hint);

  void* Allocate(size_t bytes, size_t align) {
    uintptr_t p = (cur_ + (align - 1)) & ~static_cast<uintptr_t>(align - 1);
    if (p + bytes > end_) return AllocateSlow(bytes, align);
    cur_ = p + bytes;
    ++allocated_;
    return reinterpret_cast<void*>(p);
  }
  // One node released (any thread).
  void Release() {
    if (live_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy();
  }
  // The parser is done allocating: from now on the arena lives as long as its nodes.
  void Finish() {
    int64_t delta = allocated_ - kBias;
    if (live_.fetch_add(delta, std::memory_order_acq_rel) + delta == 0) Destroy();
  }

 private:
  static constexpr int64_t kBias = int64_t{1} << 60;
  struct Chunk {
    Chunk* next;
    size_t size;
  };
  NodeArena() = default;
  void* AllocateSlow(size_t bytes, size_t align);
  void AddChunk(size_t min_bytes);
  void Destroy();

  uintptr_t cur_ = 0;
  uintptr_t end_ = 0;
  int64_t allocated_ = 0;  // parser thread only
  size_t next_chunk_ = 0;
  Chunk* chunks_ = nullptr;
  std::atomic<int64_t> live_{kBias};
};

template <typename T>
class ArenaAllocator {
 public:
  using value_type = T;
  explicit ArenaAllocator(NodeArena* a) noexcept : arena_(a) {}
  template <typename U>
  ArenaAllocator(const ArenaAllocator<U>& o) noexcept : arena_(o.arena()) {}
  T* allocate(size_t n) { return static_cast<T*>(arena_->Allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T*, size_t) noexcept { arena_->Release(); }
  NodeArena* arena() const { return arena_; }
  template <typename U>
  bool operator==(const ArenaAllocator<U>& o) const {
    return arena_ == o.arena();
  }
  template <typename U>
  bool operator!=(const ArenaAllocator<U>& o) const {
    return arena_ != o.arena();
  }

 private:
  NodeArena* arena_;
};

// The parser's handle: makes nodes, and hands the arena over to its nodes when
// the parser goes away.
class NodeFactory {
 public:
  explicit NodeFactory(size_t size_hint) {
#ifndef CDS_PARSE_ARENA_DISABLED
    arena_ = NodeArena::Create(size_hint);
#else
    (void)size_hint;
#endif
  }
  ~NodeFactory() {
    if (arena_) arena_->Finish();
  }
  NodeFactory(const NodeFactory&) = delete;
  NodeFactory& operator=(const NodeFactory&) = delete;

  template <typename T, typename... Args>
  std::shared_ptr<T> Make(Args&&... args) {
#ifndef CDS_PARSE_ARENA_DISABLED
    return std::allocate_shared<T>(ArenaAllocator<T>(arena_), std::forward<Args>(args)...);
#else
    return std::make_shared<T>(std::forward<Args>(args)...);
#endif
  }

 private:
  NodeArena* arena_ = nullptr;
};

}  // namespace cds::ir::parse
