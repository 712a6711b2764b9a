#include "ir/node_arena.h"

#include <cstdlib>
#include <mutex>
#include <new>

#ifndef CDS_NODE_ARENA_ASAN
#include <sys/mman.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#endif

namespace cds::ir::node_arena {

constinit thread_local Cursor tls_cursor;

namespace {

// Large enough that the owner's count of placed nodes never reaches it, so the
// chunk cannot be freed while the owner may still place nodes in it.
constexpr int64_t kOwnerBias = int64_t{1} << 50;
// Dead chunks kept for the next ones taken: a program freed and rebuilt (a pass's
// output, the next fuzz input) reuses memory that is already mapped and faulted
// in. 1 GiB holds the IR of a 100 MB program; a larger freed program goes back to
// the OS.
constexpr size_t kCachedChunksMax = 512;

std::atomic<int64_t> chunks_in_use{0};

struct ChunkCache {
  std::mutex mutex;
  ChunkHeader* chunks[kCachedChunksMax];
  size_t count = 0;
};
// Never destroyed: nodes held by statics may die after it would have been.
ChunkCache& Cache() {
  static ChunkCache* cache = new ChunkCache();
  return *cache;
}

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

#ifdef CDS_NODE_ARENA_ASAN
// From the sanitizer's heap: LeakSanitizer scans heap blocks reachable from a root
// (a node pointer into the block is enough) for the pointers the nodes hold, which
// it would not do for an mmap'ed chunk.
void* MapAligned(size_t bytes) { return ::operator new(bytes, std::align_val_t(kChunkBytes)); }
void Unmap(ChunkHeader* chunk, size_t) noexcept {
  ::operator delete(chunk, std::align_val_t(kChunkBytes));
}
#else
// A process that fills its first chunk is building a large IR, and will fill every
// chunk it maps after it: from then on a fresh mapping is backed by huge pages where
// the kernel has them (a chunk is aligned to 2 MiB: one fault, one page-table entry
// and one TLB entry instead of 512) and faulted in with one call instead of one trap
// per page as nodes are bumped into it (on a paravirtualized guest a trap costs
// several microseconds). The first chunk is left alone, so a small program (a lit test, a fuzz
// input) does not pay for chunk pages it never touches.
constexpr size_t kPopulateAfterBytes = kChunkBytes;
std::atomic<size_t> mapped_total{0};

void* MapAligned(size_t bytes) {
  // Over-map by one chunk and trim both ends to get the alignment.
  const size_t span = bytes + kChunkBytes;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(start, kChunkBytes);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t tail = start + span - (aligned + bytes);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  if (mapped_total.fetch_add(bytes, std::memory_order_relaxed) >= kPopulateAfterBytes) {
    // Hints: a kernel without them (MADV_POPULATE_WRITE is 5.14) answers EINVAL.
    (void)madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
    (void)madvise(reinterpret_cast<void*>(aligned), bytes, MADV_POPULATE_WRITE);
  }
  return reinterpret_cast<void*>(aligned);
}
void Unmap(ChunkHeader* chunk, size_t bytes) noexcept { munmap(chunk, bytes); }
#endif

ChunkHeader* TakeChunk(size_t bytes, int64_t initial_live) {
  ChunkHeader* chunk = nullptr;
  if (bytes == kChunkBytes) {
    ChunkCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (cache.count > 0) chunk = cache.chunks[--cache.count];
  }
  if (!chunk) chunk = new (MapAligned(bytes)) ChunkHeader;
  chunk->mapped_bytes = bytes;
  chunk->live.store(initial_live, std::memory_order_relaxed);
  chunks_in_use.fetch_add(1, std::memory_order_relaxed);
  return chunk;
}

// A large object sits alone in its own mapping, right after the header, so that
// masking its address still finds the header.
void* AllocateAlone(size_t bytes, size_t align) {
  const size_t offset = RoundUp(sizeof(ChunkHeader), align);
  ChunkHeader* chunk = TakeChunk(RoundUp(offset + bytes, kChunkBytes), 1);
  void* p = reinterpret_cast<char*>(chunk) + offset;
#ifdef CDS_NODE_ARENA_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);  // a reused chunk keeps its dead nodes' poison
#endif
  return p;
}

// Set once the thread's exit hook has retired its chunk: nodes made later in the
// thread's teardown (by other thread_local destructors) get a mapping of their
// own, since nothing would retire a new chunk.
constinit thread_local bool tls_exited = false;

struct RetireAtThreadExit {
  ~RetireAtThreadExit() {
    Retire(tls_cursor);
    tls_exited = true;
  }
};

}  // namespace

void Retire(Cursor& cursor) noexcept {
  ChunkHeader* chunk = cursor.chunk;
  if (!chunk) return;
  const int64_t delta = cursor.placed - kOwnerBias;
  cursor = Cursor{};
  if (chunk->live.fetch_add(delta, std::memory_order_acq_rel) + delta == 0) FreeChunk(chunk);
}

void FreeChunk(ChunkHeader* chunk) noexcept {
  chunks_in_use.fetch_sub(1, std::memory_order_relaxed);
  const size_t bytes = chunk->mapped_bytes;
  if (bytes == kChunkBytes) {
    ChunkCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (cache.count < kCachedChunksMax) {
      cache.chunks[cache.count++] = chunk;
      return;
    }
  }
  Unmap(chunk, bytes);
}

void* AllocateSlow(size_t bytes, size_t align) {
  if (bytes + align > kLargeObjectBytes || tls_exited) return AllocateAlone(bytes, align);
  // Constructed (and its destructor registered) on the thread's first chunk.
  static thread_local RetireAtThreadExit retire_at_exit;
  (void)retire_at_exit;
  Cursor& c = tls_cursor;
  Retire(c);
  ChunkHeader* chunk = TakeChunk(kChunkBytes, kOwnerBias);
  c.chunk = chunk;
  c.next = reinterpret_cast<uintptr_t>(chunk) + sizeof(ChunkHeader);
  c.end = reinterpret_cast<uintptr_t>(chunk) + kChunkBytes;
  c.placed = 0;
  return Allocate(bytes, align);
}

Stats GetStats() {
  Stats s;
  s.chunks_in_use = chunks_in_use.load(std::memory_order_relaxed);
  ChunkCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  s.chunks_cached = static_cast<int64_t>(cache.count);
  return s;
}

}  // namespace cds::ir::node_arena
