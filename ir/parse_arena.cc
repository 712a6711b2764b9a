#include "ir/parse_arena.h"

#include <algorithm>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include <sys/mman.h>

namespace cds::ir::parse {

namespace {
constexpr size_t kMinChunk = size_t{64} << 10;
constexpr size_t kMaxChunk = size_t{64} << 20;
// Chunks of finished arenas kept for the next parses, up to this many bytes.
constexpr size_t kPoolCap = size_t{2} << 30;

// Freed chunks, reused by later arenas: a parse then writes into memory that is
// already mapped instead of taking a page fault (and the kernel's zeroing) every
// 4 KiB. Pooled chunks are marked MADV_FREE, so under memory pressure the kernel
// may still take their pages back (a reused chunk is then simply faulted in again).
struct ChunkPool {
  std::mutex mutex;
  std::vector<std::pair<void*, size_t>> chunks;
  size_t bytes = 0;
};
ChunkPool& Pool() {
  static ChunkPool* pool = new ChunkPool();  // never destroyed: arenas may die at exit
  return *pool;
}

void* MapChunk(size_t size) {
  {
    ChunkPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    for (size_t i = pool.chunks.size(); i-- > 0;) {
      if (pool.chunks[i].second == size) {
        void* mem = pool.chunks[i].first;
        pool.chunks[i] = pool.chunks.back();
        pool.chunks.pop_back();
        pool.bytes -= size;
        return mem;
      }
    }
  }
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::bad_alloc();
  return mem;
}

void UnmapChunk(void* mem, size_t size) {
  {
    ChunkPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (pool.bytes + size <= kPoolCap) {
#ifdef MADV_FREE
      madvise(mem, size, MADV_FREE);
#endif
      pool.chunks.emplace_back(mem, size);
      pool.bytes += size;
      return;
    }
  }
  munmap(mem, size);
}
}  // namespace

NodeArena* NodeArena::Create(size_t size_hint) {
  auto* a = new NodeArena();
  // The nodes of a parsed program take about eight times its text: start at a
  // fraction of that and double, so that chunk sizes repeat from parse to parse
  // (the pool hands back chunks of exactly the size asked for).
  size_t first = kMinChunk;
  while (first < size_hint && first < kMaxChunk) first *= 2;
  a->next_chunk_ = first;
  return a;
}

void NodeArena::AddChunk(size_t min_bytes) {
  size_t size = next_chunk_;
  while (size < min_bytes + sizeof(Chunk)) size *= 2;
  next_chunk_ = std::min(size * 2, kMaxChunk);
  void* mem = MapChunk(size);
  auto* c = static_cast<Chunk*>(mem);
  c->next = chunks_;
  c->size = size;
  chunks_ = c;
  cur_ = reinterpret_cast<uintptr_t>(mem) + sizeof(Chunk);
  end_ = reinterpret_cast<uintptr_t>(mem) + size;
}

void* NodeArena::AllocateSlow(size_t bytes, size_t align) {
  AddChunk(bytes + align);
  return Allocate(bytes, align);
}

void NodeArena::Destroy() {
  for (Chunk* c = chunks_; c;) {
    Chunk* next = c->next;
    UnmapChunk(c, c->size);
    c = next;
  }
  delete this;
}

}  // namespace cds::ir::parse
