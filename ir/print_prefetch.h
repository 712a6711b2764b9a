#pragma once

// The printer's prefetcher (ir/printer.cc).
//
// On a program larger than the caches nearly every node the printer reaches is a
// cache miss, and a tree walk takes them one after another. The parser places nodes
// in the arena in text order (ir/node_arena.h), so what the printer reads next lies
// a little further along the chunk of the node it is printing: ArenaSweep prefetches
// that memory a fixed distance ahead, by address, one step per statement printed.
// Where nodes are not in text order (a pass's output) the prefetched lines are
// merely useless. Prefetches never change what is printed.

#include <algorithm>
#include <cstdint>

#include "ir/node_arena.h"

namespace cds::ir::print_detail {

class ArenaSweep {
 public:
  // How far ahead of the current node the sweep runs: all of L1 on these machines,
  // less than L2 (further ahead evicts what is about to be read).
  static constexpr uintptr_t kAhead = uintptr_t{32} << 10;
  // Lines prefetched at most per step, so that a restart does not issue hundreds
  // of prefetches at once.
  static constexpr uintptr_t kMaxLinesPerStep = 64;
  static constexpr uintptr_t kLine = 64;

  // Called with each node about to be printed: prefetches the arena up to kAhead
  // past it, within its chunk (the memory known to hold nodes placed after it),
  // continuing where the previous step stopped.
  void Step(const void* node) {
    const auto p = reinterpret_cast<uintptr_t>(node);
    const uintptr_t chunk_end = (p & ~(node_arena::kChunkBytes - 1)) + node_arena::kChunkBytes;
    const uintptr_t line = p & ~(kLine - 1);
    // Behind the node, or in another chunk: start again at the node.
    if (next_ < line || next_ > chunk_end) next_ = line;
    const uintptr_t to = std::min({chunk_end, p + kAhead, next_ + kMaxLinesPerStep * kLine});
    // Into L2 (prefetcht1): filling L1 would evict what is being read now.
    for (; next_ < to; next_ += kLine)
      __builtin_prefetch(reinterpret_cast<const void*>(next_), 0, 2);
  }

  // For tests: where the next prefetch goes.
  uintptr_t swept_to() const { return next_; }

 private:
  uintptr_t next_ = 0;
};

}  // namespace cds::ir::print_detail
