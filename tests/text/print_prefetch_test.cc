// The printer's arena sweep (ir/print_prefetch.h): how far it runs ahead, that it
// stays inside the chunk of the node it follows, and where it starts again after a
// jump. Prefetching has no visible effect, so these tests read where the sweep's
// next prefetch goes; the printed text is covered by the round-trip tests.

#include "ir/print_prefetch.h"

#include <cstdint>
#include <cstdlib>

#include <gtest/gtest.h>

namespace cds::ir::print_detail {
namespace {

using node_arena::kChunkBytes;
constexpr uintptr_t kAhead = ArenaSweep::kAhead;
constexpr uintptr_t kStepBytes = ArenaSweep::kMaxLinesPerStep * ArenaSweep::kLine;

// Two chunk-aligned chunks of real memory, so that every address handed to the
// sweep is one a node could have.
struct Chunks {
  Chunks() : base(static_cast<char*>(std::aligned_alloc(kChunkBytes, 2 * kChunkBytes))) {}
  ~Chunks() { std::free(base); }
  const void* at(uintptr_t offset) const { return base + offset; }
  uintptr_t addr(uintptr_t offset) const { return reinterpret_cast<uintptr_t>(base) + offset; }
  char* base;
};

TEST(ArenaSweepTest, AStepPrefetchesAtMostItsShareOfLines) {
  Chunks c;
  ArenaSweep sweep;
  sweep.Step(c.at(4096 + 10));  // starts at the node's line
  EXPECT_EQ(sweep.swept_to(), c.addr(4096) + kStepBytes);
  sweep.Step(c.at(4096 + 20));  // continues where the last step stopped
  EXPECT_EQ(sweep.swept_to(), c.addr(4096) + 2 * kStepBytes);
}

TEST(ArenaSweepTest, RunsNoFurtherThanItsDistanceAhead) {
  Chunks c;
  ArenaSweep sweep;
  for (int i = 0; i < 100; ++i) sweep.Step(c.at(4096));
  EXPECT_EQ(sweep.swept_to(), c.addr(4096) + kAhead);
  sweep.Step(c.at(4096 + 128));  // the node moves on: so does the sweep, by as much
  EXPECT_EQ(sweep.swept_to(), c.addr(4096) + 128 + kAhead);
}

TEST(ArenaSweepTest, StaysInsideTheNodesChunk) {
  Chunks c;
  ArenaSweep sweep;
  const uintptr_t near_end = kChunkBytes - 1024;
  for (int i = 0; i < 100; ++i) sweep.Step(c.at(near_end));
  EXPECT_EQ(sweep.swept_to(), c.addr(kChunkBytes));
}

TEST(ArenaSweepTest, StartsAgainAtTheNodeAfterAJump) {
  Chunks c;
  ArenaSweep sweep;
  sweep.Step(c.at(4096));
  // Forward past what was swept.
  sweep.Step(c.at(kChunkBytes / 2 + 10));
  EXPECT_EQ(sweep.swept_to(), c.addr(kChunkBytes / 2) + kStepBytes);
  // Into the next chunk, then back to the first one: the sweep is ahead of the
  // node's chunk, so it starts again at the node.
  sweep.Step(c.at(kChunkBytes + 64));
  EXPECT_EQ(sweep.swept_to(), c.addr(kChunkBytes + 64) + kStepBytes);
  sweep.Step(c.at(8192));
  EXPECT_EQ(sweep.swept_to(), c.addr(8192) + kStepBytes);
}

}  // namespace
}  // namespace cds::ir::print_detail
