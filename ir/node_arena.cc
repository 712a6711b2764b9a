#include "ir/node_arena.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#ifndef CDS_NODE_ARENA_ASAN
#include <pthread.h>
#include <sys/mman.h>

#include <condition_variable>
#include <system_error>
#include <thread>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL, which is ignored
#endif
#endif

namespace cds::ir::node_arena {

constinit thread_local Cursor tls_cursor;

extern const bool enabled = [] {
  const char* v = std::getenv("CDS_NODE_ARENA");
  return v == nullptr || std::strcmp(v, "off") != 0;
}();

const bool populate_enabled = [] {
  const char* v = std::getenv("CDS_POPULATE");
  return v == nullptr || std::strcmp(v, "off") != 0;
}();

const bool prefault_enabled = [] {
  const char* v = std::getenv("CDS_PREFAULT");
  return populate_enabled && (v == nullptr || std::strcmp(v, "off") != 0);
}();

#ifdef CDS_NODE_ARENA_ASAN
void PopulateForWrite(void*, size_t) noexcept {}
void PopulateAhead(void*, size_t) noexcept {}
#else
void PopulateForWrite(void* begin, size_t bytes) noexcept {
  if (!populate_enabled) return;
  const uintptr_t page = 4096;
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t last = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(page - 1);
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
}
#endif

namespace {

// Large enough that the owner's count of placed nodes never reaches it, so the
// chunk cannot be freed while the owner may still place nodes in it.
constexpr int64_t kOwnerBias = int64_t{1} << 50;
// Dead chunks kept for the next ones taken: a program freed and rebuilt (a
// pass's output, the next fuzz input) reuses memory that is already mapped and
// faulted in. 256 MiB holds the whole output of the pipeline on 10^6 statements
// (with 32 chunks it went back to the OS and was faulted in again each run, 4x
// the page faults); a larger freed program still goes back to the OS.
constexpr size_t kCachedChunksMax = 128;

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
// From the sanitizer's heap: LeakSanitizer scans heap blocks reachable from a
// root (a node pointer into the block is enough) for the pointers the nodes
// hold, which it would not do for an mmap'ed chunk.
void* MapAligned(size_t bytes) { return ::operator new(bytes, std::align_val_t(kChunkBytes)); }
void Unmap(ChunkHeader* chunk, size_t) noexcept {
  ::operator delete(chunk, std::align_val_t(kChunkBytes));
}
#else
// A process that has mapped this much is building a large IR: from then on a
// fresh mapping is filled in one madvise call instead of one page fault per 4 KiB
// page as nodes are bumped into it (PopulateForWrite). Below the threshold nothing
// is populated, so a small program (a cds-opt run, a fuzz input) does not pay for
// chunk pages it never touches.
constexpr size_t kPopulateAfterBytes = size_t{32} << 20;
std::atomic<size_t> mapped_total{0};

void* MapAlignedUnpopulated(size_t bytes) {
  // Over-map by one chunk and trim both ends to get the alignment.
  size_t span = bytes + kChunkBytes;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = RoundUp(start, kChunkBytes);
  if (aligned > start) munmap(raw, aligned - start);
  uintptr_t tail = start + span - (aligned + bytes);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  return reinterpret_cast<void*>(aligned);
}

// Fresh chunks for a process building a large IR, mapped and faulted in ahead of
// need by a helper thread. Populating a chunk is kernel work (a zeroed page, page
// tables and accounting for each of its 512 pages), about a sixth of a 100 MB
// parse when the parsing thread does it; done here, it runs on another core while
// the parser fills the previous chunk (docs/ir.md, "Node memory"). The helper
// starts only once a process has mapped kPopulateAfterBytes of chunks, keeps at
// most kStock chunks ready, and never makes a taker wait: TryTake gives a ready
// chunk or nothing, and the taker then maps its own. CDS_PREFAULT=off turns it
// off (as does CDS_POPULATE=off).
class Prefaulter {
 public:
  static Prefaulter& Get() {
    static Prefaulter* p = new Prefaulter();  // never destroyed: the helper may still wait on it
    return *p;
  }

  void StartOnce() {
    if (started_.load(std::memory_order_acquire)) return;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || started_.load(std::memory_order_relaxed)) return;
    try {
      std::thread([this] { Run(); }).detach();
      started_.store(true, std::memory_order_release);
    } catch (const std::system_error&) {
      // No thread to be had: chunks are mapped by their takers, as before.
    }
  }

  // Hands [begin, begin + bytes) to the helper to fault in; false when there is no
  // helper (or it is busy with the mutex), and the caller should do it itself. A
  // range freed and reused before the helper gets to it is harmless: populating
  // does not change what memory holds.
  bool TryPopulate(void* begin, size_t bytes) {
    if (!started_.load(std::memory_order_acquire)) return false;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || pending_bytes_ != 0) return false;
    pending_begin_ = begin;
    pending_bytes_ = bytes;
    wanted_.notify_one();
    return true;
  }

  void* TryTake() {
    if (!started_.load(std::memory_order_acquire)) return nullptr;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || count_ == 0) return nullptr;
    void* chunk = ready_[--count_];
    wanted_.notify_one();
    return chunk;
  }

  int Ready() {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_;
  }

  // In a forked child there is no helper, and the mutex may have been held by it
  // at the fork: start afresh. The chunks that were ready are dropped (at most
  // kStock chunks of address space in the child).
  void ResetInChild() {
    new (&mutex_) std::mutex();
    new (&wanted_) std::condition_variable();
    count_ = 0;
    pending_bytes_ = 0;
    started_.store(false, std::memory_order_relaxed);
  }

 private:
  static constexpr int kStock = 2;

  Prefaulter() {
    pthread_atfork(nullptr, nullptr, [] { Get().ResetInChild(); });
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wanted_.wait(lock, [this] { return count_ < kStock || pending_bytes_ != 0; });
      if (pending_bytes_ != 0) {
        void* begin = pending_begin_;
        const size_t bytes = pending_bytes_;
        lock.unlock();
        PopulateForWrite(begin, bytes);
        lock.lock();
        pending_bytes_ = 0;
        continue;
      }
      lock.unlock();
      void* chunk = nullptr;
      try {
        chunk = MapAlignedUnpopulated(kChunkBytes);
        PopulateForWrite(chunk, kChunkBytes);
      } catch (const std::bad_alloc&) {
        chunk = nullptr;  // out of address space: leave it to the takers, who will throw
      }
      lock.lock();
      if (!chunk) {
        started_.store(false, std::memory_order_release);
        return;
      }
      ready_[count_++] = chunk;
    }
  }

  std::mutex mutex_;
  std::condition_variable wanted_;
  void* ready_[kStock] = {};
  int count_ = 0;
  void* pending_begin_ = nullptr;
  size_t pending_bytes_ = 0;  // a range to populate, 0: none
  std::atomic<bool> started_{false};
};

}  // namespace

void PopulateAhead(void* begin, size_t bytes) noexcept {
  if (prefault_enabled && Prefaulter::Get().TryPopulate(begin, bytes)) return;
  PopulateForWrite(begin, bytes);
}

namespace {

void* MapAligned(size_t bytes) {
  const bool large_ir = mapped_total.fetch_add(bytes, std::memory_order_relaxed) >= kPopulateAfterBytes;
  if (large_ir && bytes == kChunkBytes && prefault_enabled) {
    Prefaulter& prefaulter = Prefaulter::Get();
    prefaulter.StartOnce();
    if (void* chunk = prefaulter.TryTake()) return chunk;
  }
  void* chunk = MapAlignedUnpopulated(bytes);
  if (large_ir) PopulateForWrite(chunk, bytes);
  return chunk;
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
  size_t offset = RoundUp(sizeof(ChunkHeader), align);
  ChunkHeader* chunk = TakeChunk(RoundUp(offset + bytes, kChunkBytes), 1);
  void* p = reinterpret_cast<char*>(chunk) + offset;
#ifdef CDS_NODE_ARENA_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);  // a reused chunk keeps its dead nodes' poison
#endif
  return p;
}

// Set once the thread's exit hook has retired its chunk: nodes made later in
// the thread's teardown (by other thread_local destructors) get a mapping of
// their own, since nothing would retire a new chunk.
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
  int64_t delta = cursor.placed - kOwnerBias;
  cursor = Cursor{};
  if (chunk->live.fetch_add(delta, std::memory_order_acq_rel) + delta == 0) FreeChunk(chunk);
}

void FreeChunk(ChunkHeader* chunk) noexcept {
  chunks_in_use.fetch_sub(1, std::memory_order_relaxed);
  size_t bytes = chunk->mapped_bytes;
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
#ifndef CDS_NODE_ARENA_ASAN
  s.chunks_prefaulted = prefault_enabled ? Prefaulter::Get().Ready() : 0;
#else
  s.chunks_prefaulted = 0;
#endif
  return s;
}

}  // namespace cds::ir::node_arena
