// The printer's arena sweep (ir/print_prefetch.h): when it engages, how far it
// runs ahead, that it stays inside the chunk of the node it follows, and when it
// reports a node as already prefetched (which is what lets the printer skip its
// tree prefetch). Prefetching has no visible effect, so these tests read the
// range the sweep reports; the printed text is covered by the round-trip tests.

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

TEST(ArenaSweepTest, EngagesOnlyAfterARunOfNearbyNodes) {
  Chunks c;
  ArenaSweep sweep(4);
  // The first node has no predecessor; the next three are near it, but the run
  // needs four near nodes in a row.
  for (uintptr_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(sweep.Step(c.at(4096 + i * 200)));
    EXPECT_EQ(sweep.swept_to(), 0u) << "swept before the run was long enough, node " << i;
  }
  EXPECT_FALSE(sweep.Step(c.at(4096 + 4 * 200))) << "the first swept node was not prefetched";
  EXPECT_GT(sweep.swept_to(), c.addr(4096 + 4 * 200));
}

TEST(ArenaSweepTest, AFarJumpEndsTheRun) {
  Chunks c;
  ArenaSweep sweep(4);
  for (uintptr_t i = 0; i < 6; ++i) sweep.Step(c.at(4096 + i * 200));
  const uintptr_t swept = sweep.swept_to();
  // A node in the other chunk, the way a pass's new statements sit apart from
  // the input's: the run starts over and nothing more is swept for a while.
  EXPECT_FALSE(sweep.Step(c.at(kChunkBytes + 4096)));
  EXPECT_FALSE(sweep.Step(c.at(kChunkBytes + 4296)));
  EXPECT_EQ(sweep.swept_to(), swept);
}

TEST(ArenaSweepTest, EngageAtSkipsTheRunAfterAJump) {
  Chunks c;
  ArenaSweep sweep(4);
  for (uintptr_t i = 0; i < 6; ++i) sweep.Step(c.at(4096 + i * 200));
  // A function's first statement far from the last one printed (functions print in
  // name order): told that a body starts there, the sweep engages at once.
  const uintptr_t body = kChunkBytes + 8192 + 16;
  sweep.EngageAt(c.at(body));
  EXPECT_FALSE(sweep.Step(c.at(body))) << "the first statement was not prefetched";
  EXPECT_EQ(sweep.swept_from(), c.addr(kChunkBytes + 8192));
  EXPECT_GT(sweep.swept_to(), c.addr(body));
  // And it stays engaged for the body's next statements, which it covered.
  EXPECT_TRUE(sweep.Step(c.at(body + 300)));
}

TEST(ArenaSweepTest, EngageAtHoldsOnlyForItsNode) {
  Chunks c;
  ArenaSweep sweep(4);
  sweep.EngageAt(c.at(4096));
  // The next node is somewhere else: an ordinary far jump, the run starts over.
  EXPECT_FALSE(sweep.Step(c.at(kChunkBytes + 4096)));
  EXPECT_EQ(sweep.swept_to(), 0u);
}

TEST(ArenaSweepTest, WithoutARunItSweepsFromTheFirstNode) {
  Chunks c;
  ArenaSweep sweep(0);
  EXPECT_FALSE(sweep.Step(c.at(8192 + 16)));
  EXPECT_EQ(sweep.swept_from(), c.addr(8192));
  EXPECT_GT(sweep.swept_to(), c.addr(8192 + 16));
}

TEST(ArenaSweepTest, AStepPrefetchesAtMostItsShareOfLines) {
  Chunks c;
  ArenaSweep sweep(0);
  sweep.Step(c.at(0));
  EXPECT_EQ(sweep.swept_to() - sweep.swept_from(), kStepBytes);
  uintptr_t before = sweep.swept_to();
  sweep.Step(c.at(64));
  EXPECT_EQ(sweep.swept_to() - before, kStepBytes);
}

TEST(ArenaSweepTest, RunsNoFurtherThanItsDistanceAhead) {
  Chunks c;
  ArenaSweep sweep(0);
  for (int i = 0; i < 1000; ++i) sweep.Step(c.at(4096));
  EXPECT_EQ(sweep.swept_to(), c.addr(4096) + kAhead);
  // Moving on moves the front by as much.
  sweep.Step(c.at(4096 + 640));
  EXPECT_EQ(sweep.swept_to(), c.addr(4096 + 640) + kAhead);
}

TEST(ArenaSweepTest, StaysInsideTheNodesChunk) {
  Chunks c;
  ArenaSweep sweep(0);
  // Past the end of a chunk lies whatever the OS mapped there, not later nodes.
  const uintptr_t near_end = kChunkBytes - 1024;
  for (int i = 0; i < 100; ++i) sweep.Step(c.at(near_end));
  EXPECT_EQ(sweep.swept_to(), c.addr(kChunkBytes));
  // Reaching the end is not leaving the chunk: the sweep does not start over.
  EXPECT_TRUE(sweep.Step(c.at(near_end + 512)));
  EXPECT_EQ(sweep.swept_from(), c.addr(near_end));
}

TEST(ArenaSweepTest, ReportsNodesItAlreadyPrefetched) {
  Chunks c;
  ArenaSweep sweep(0);
  for (int i = 0; i < 100; ++i) sweep.Step(c.at(4096));
  // Ahead of the current node, inside the swept range: already on its way.
  EXPECT_TRUE(sweep.Step(c.at(4096 + 8192)));
  // A node placed before its parent (a loop body before its ForStmt) lies behind
  // the current one but still inside the range.
  EXPECT_TRUE(sweep.Step(c.at(4096 + 4000)));
  // Beyond the front: the sweep restarts there and did not prefetch it.
  EXPECT_FALSE(sweep.Step(c.at(4096 + 8192 + kAhead + 4096)));
  // Behind the restart point: not prefetched either.
  EXPECT_FALSE(sweep.Step(c.at(4096 + 8192 + kAhead)));
}

}  // namespace
}  // namespace cds::ir::print_detail
