#pragma once

// Memory for IR nodes and their lists: MakeNode<T>(args...) places a node in the
// calling thread's current chunk (docs/ir.md, "Node memory").
//
// Why: a pass over a program of 10^6 statements is bound by the loads of its
// nodes. From malloc, consecutive nodes land wherever the free lists had room, so
// a walk in program order touches scattered lines and pages, and malloc's own
// bookkeeping shows up in the profile. Bumping nodes one after the other places
// them in creation order, which is the order walks visit them in.
//
// How: a chunk is kChunkBytes, aligned to its size, with a header that counts its
// live nodes; freeing a node finds the header by masking the address, so a node
// needs no pointer back to its chunk. Nodes may die on any thread, so the count is
// atomic; the owning thread does not touch it per node but holds a large bias
// until it moves on to another chunk (or exits), then replaces the bias by the
// number of nodes it placed. A chunk is reused only once all its nodes are dead:
// dead chunks go to a small global cache, then back to the OS.
//
// Under AddressSanitizer each node's bytes are poisoned when it dies, so a use
// after free is still reported ("use-after-poison"), and the chunks come from the
// sanitizer's heap so that LeakSanitizer sees what nodes point to.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "ir/node_ref.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CDS_NODE_ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(CDS_NODE_ARENA_ASAN)
#define CDS_NODE_ARENA_ASAN 1
#endif
#ifdef CDS_NODE_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace cds::ir {

namespace node_arena {

// 2 MiB: large enough that taking a chunk is rare next to bumping (a chunk holds
// thousands of nodes), small enough that a few long-lived nodes pin little memory.
inline constexpr size_t kChunkBytes = size_t{2} << 20;
// Objects above this get a mapping of their own instead of ending a chunk early.
inline constexpr size_t kLargeObjectBytes = kChunkBytes / 8;
// Masking an address inside a dedicated mapping must still land on its header.
inline constexpr size_t kMaxAlign = 4096;

struct alignas(64) ChunkHeader {
  // Live nodes, plus a bias while a thread still places nodes here.
  std::atomic<int64_t> live;
  size_t mapped_bytes;  // kChunkBytes, or more for a large object's own mapping
};

// Where the next node goes: the thread's own stream, or a NodeStream's while its
// Make runs.
struct Cursor {
  uintptr_t next = 0;
  uintptr_t end = 0;
  ChunkHeader* chunk = nullptr;
  int64_t placed = 0;  // nodes placed in `chunk`; owner thread only
};

extern constinit thread_local Cursor tls_cursor;

void* AllocateSlow(size_t bytes, size_t align);
// The cursor's owner is done with its chunk: from now on the last node frees it.
void Retire(Cursor& cursor) noexcept;
void FreeChunk(ChunkHeader* chunk) noexcept;

// Memory for one node or one node list, from the thread's current chunk.
inline void* Allocate(size_t bytes, size_t align) {
  Cursor& c = tls_cursor;
  uintptr_t p = (c.next + (align - 1)) & ~static_cast<uintptr_t>(align - 1);
  if (p + bytes > c.end) [[unlikely]]
    return AllocateSlow(bytes, align);
  c.next = p + bytes;
  ++c.placed;
#ifdef CDS_NODE_ARENA_ASAN
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(p), bytes);
#endif
  return reinterpret_cast<void*>(p);
}

inline void Release(void* p, size_t bytes) noexcept {
  auto* chunk = reinterpret_cast<ChunkHeader*>(reinterpret_cast<uintptr_t>(p) &
                                               ~static_cast<uintptr_t>(kChunkBytes - 1));
#ifdef CDS_NODE_ARENA_ASAN
  // Before the decrement: once it is done another thread may free the chunk.
  ASAN_POISON_MEMORY_REGION(p, bytes);
#else
  (void)bytes;
#endif
  if (chunk->live.fetch_sub(1, std::memory_order_acq_rel) == 1) FreeChunk(chunk);
}

// For tests.
struct Stats {
  int64_t chunks_in_use;  // taken by a thread or holding live nodes (large objects included)
  int64_t chunks_cached;  // dead, kept for reuse
};
Stats GetStats();

}  // namespace node_arena

// Makes a node of class T (const or not) in the thread's current chunk. Defined in
// node.h, after Node.
template <typename T, typename... Args>
NodeRef<T> MakeNode(Args&&... args);

// Nodes made through one stream are packed together, apart from the thread's
// other nodes (the parser keeps Function nodes apart so that sorting them stays
// within a few pages). A stream is used by one thread at a time; its nodes may
// outlive it.
class NodeStream {
 public:
  NodeStream() = default;
  ~NodeStream() { node_arena::Retire(cursor_); }
  NodeStream(const NodeStream&) = delete;
  NodeStream& operator=(const NodeStream&) = delete;

  template <typename T, typename... Args>
  NodeRef<T> Make(Args&&... args) {
    Redirect redirect(cursor_);
    return MakeNode<T>(std::forward<Args>(args)...);
  }

 private:
  // Swaps the stream's cursor in as the thread's for the duration of one Make.
  struct Redirect {
    explicit Redirect(node_arena::Cursor& c) : stream(c) {
      std::swap(stream, node_arena::tls_cursor);
    }
    ~Redirect() { std::swap(stream, node_arena::tls_cursor); }
    node_arena::Cursor& stream;
  };
  node_arena::Cursor cursor_;
};

}  // namespace cds::ir
