// The node arena (ir/node_arena.h): chunks go back when their last node dies,
// whichever thread frees it; large objects; NodeStream; populating; use after
// free under ASan.
//
// Chunk counts are process-wide, so each test compares against a baseline taken
// after this thread has moved on from its current chunk (see FreshChunk).

#include "ir/node_arena.h"

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ir/builder.h"

namespace cds::ir {
namespace {

using node_arena::GetStats;
using node_arena::kChunkBytes;

// A sixteenth of a chunk: a handful fill one, and each stays below the size that
// gets a mapping of its own.
struct alignas(64) Block {
  char bytes[kChunkBytes / 16];
};

// Blocks and the large objects below are not nodes: they take arena memory
// directly, as MakeNode does underneath.
template <typename T>
std::shared_ptr<T> Place() {
  static_assert(alignof(T) <= node_arena::kMaxAlign);
  T* p = new (node_arena::Allocate(sizeof(T), alignof(T))) T;
  return std::shared_ptr<T>(p, [](T* q) {
    q->~T();
    node_arena::Release(q, sizeof(T));
  });
}

int64_t InUse() { return GetStats().chunks_in_use; }

uintptr_t ChunkOf(const void* p) { return reinterpret_cast<uintptr_t>(p) / kChunkBytes; }

// Makes Blocks until one lands in a fresh chunk; returns with that chunk as this
// thread's current one, holding only that (live) Block.
std::shared_ptr<Block> MoveToFreshChunk(std::vector<std::shared_ptr<Block>>& keep) {
  keep.push_back(Place<Block>());
  const uintptr_t first = ChunkOf(keep.back().get());
  for (;;) {
    auto b = Place<Block>();
    if (ChunkOf(b.get()) != first) return b;
    keep.push_back(std::move(b));
  }
}

// A thread that only makes `count` nodes and hands them over: when it returns,
// it has exited, so its last chunk is retired too.
std::vector<ExprPtr> MakeOnAnotherThread(int count) {
  std::vector<ExprPtr> nodes;
  std::thread([&] {
    for (int i = 0; i < count; ++i) nodes.push_back(Int(i));
  }).join();
  return nodes;
}

class NodeArenaTest : public ::testing::Test {
 protected:
  // The shared type nodes are made on first use and never die: have them made
  // here, not on a test's thread whose chunk they would then keep alive.
  void SetUp() override { (void)Add(Int(0), Int(1)); }
};

TEST_F(NodeArenaTest, NodesAreUsableAndPacked) {
  auto a = MakeNode<ConstInt>(1, DataType::kInt64);
  auto b = MakeNode<ConstInt>(2, DataType::kInt64);
  EXPECT_EQ(a->value, 1);
  EXPECT_EQ(b->value, 2);
  // Bumped one after the other in the same chunk.
  EXPECT_LT(reinterpret_cast<uintptr_t>(b.get()) - reinterpret_cast<uintptr_t>(a.get()), 256u);
}

TEST_F(NodeArenaTest, ChunksFreedOnAnotherThreadGoBack) {
  const int64_t before = InUse();
  const int count = static_cast<int>(4 * kChunkBytes / sizeof(ConstInt));  // several chunks
  std::vector<ExprPtr> nodes = MakeOnAnotherThread(count);
  EXPECT_GE(InUse() - before, 4);
  nodes.clear();
  EXPECT_EQ(InUse(), before);
}

TEST_F(NodeArenaTest, NodesOutliveTheirThreadAndDieHere) {
  const int64_t before = InUse();
  std::vector<ExprPtr> nodes = MakeOnAnotherThread(100);
  // The thread has exited: its only chunk is held by the nodes alone.
  EXPECT_EQ(InUse(), before + 1);
  nodes.resize(1);  // one live node keeps the chunk
  EXPECT_EQ(InUse(), before + 1);
  nodes.clear();
  EXPECT_EQ(InUse(), before);
}

TEST_F(NodeArenaTest, OwnerKeepsItsChunkUntilItMovesOn) {
  std::vector<std::shared_ptr<Block>> keep;
  auto block = MoveToFreshChunk(keep);
  keep.clear();
  block.reset();
  auto node = MakeNode<ConstInt>(1, DataType::kInt64);
  const uintptr_t node_chunk = ChunkOf(node.get());
  const int64_t in_use = InUse();
  node.reset();
  // Every node of the chunk is dead, but this thread may still place nodes there.
  EXPECT_EQ(InUse(), in_use);
  // Moving on retires it, and since it is dead it goes back (the new chunk replaces it).
  block = MoveToFreshChunk(keep);
  keep.clear();
  EXPECT_NE(ChunkOf(block.get()), node_chunk);
  EXPECT_EQ(InUse(), in_use);
}

TEST_F(NodeArenaTest, LargeObjectsGetTheirOwnMapping) {
  struct Huge {
    char bytes[3 * kChunkBytes + 100];
  };
  // Fits no chunk that already holds a node.
  struct Big {
    char bytes[kChunkBytes - kChunkBytes / 32];
  };
  struct alignas(4096) Aligned {
    char bytes[kChunkBytes / 4];
  };
  std::vector<std::shared_ptr<Block>> keep;
  auto block = MoveToFreshChunk(keep);
  keep.clear();
  const int64_t before = InUse();
  auto huge = Place<Huge>();
  std::memset(huge->bytes, 0x5a, sizeof(huge->bytes));
  auto big = Place<Big>();
  std::memset(big->bytes, 0x5a, sizeof(big->bytes));
  EXPECT_EQ(InUse(), before + 2);
  // Neither ended the thread's chunk: small nodes still go next to `block`.
  auto small = MakeNode<ConstInt>(1, DataType::kInt64);
  EXPECT_EQ(ChunkOf(small.get()), ChunkOf(block.get()));
  // Large but fits what is left: placed in the chunk, aligned.
  auto aligned = Place<Aligned>();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned.get()) % 4096, 0u);
  EXPECT_EQ(ChunkOf(aligned.get()), ChunkOf(block.get()));
  std::memset(aligned->bytes, 0x5a, sizeof(aligned->bytes));
  huge.reset();
  big.reset();
  aligned.reset();
  EXPECT_EQ(InUse(), before);
}

TEST_F(NodeArenaTest, ManyThreadsFreeEachOthersNodes) {
  const int64_t before = InUse();
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  constexpr int kPerRound = 5000;
  // Each round, thread t makes new nodes and frees the ones its neighbour made
  // the round before, so chunks die on threads other than their owner's while
  // that owner is still placing nodes elsewhere.
  std::vector<std::vector<ExprPtr>> previous(kThreads);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::vector<ExprPtr>> made(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<ExprPtr>& neighbours = previous[(t + 1) % kThreads];
        for (int i = 0; i < kPerRound; ++i) {
          made[t].push_back(Add(Int(i), Int(t)));
          if (!neighbours.empty()) neighbours.pop_back();
        }
        neighbours.clear();
      });
    }
    for (auto& th : threads) th.join();
    previous = std::move(made);
  }
  for (const auto& nodes : previous) {
    ASSERT_EQ(nodes.size(), static_cast<size_t>(kPerRound));
    for (const auto& e : nodes) ASSERT_EQ(e->kind(), NodeKind::kBinaryExpr);
  }
  previous.clear();
  EXPECT_EQ(InUse(), before);
}

TEST_F(NodeArenaTest, StreamNodesSitApartAndGoBack) {
  std::vector<std::shared_ptr<Block>> keep;
  auto block = MoveToFreshChunk(keep);  // so that the thread's next nodes share one chunk
  keep.clear();
  auto from_thread = MakeNode<ConstInt>(1, DataType::kInt64);
  const int64_t before = InUse();
  std::vector<ExprPtr> kept;
  {
    NodeStream stream;
    auto from_stream = stream.Make<ConstInt>(2, DataType::kInt64);
    auto next_from_thread = MakeNode<ConstInt>(3, DataType::kInt64);
    auto next_from_stream = stream.Make<ConstInt>(4, DataType::kInt64);
    EXPECT_NE(ChunkOf(from_stream.get()), ChunkOf(from_thread.get()));
    EXPECT_EQ(ChunkOf(from_stream.get()), ChunkOf(next_from_stream.get()));
    EXPECT_EQ(ChunkOf(from_thread.get()), ChunkOf(next_from_thread.get()));
    kept = {from_stream, next_from_stream};
    EXPECT_EQ(InUse(), before + 1);
  }
  // The stream is gone; its chunk lives as long as its nodes.
  EXPECT_EQ(InUse(), before + 1);
  kept.clear();
  EXPECT_EQ(InUse(), before);
}

#ifdef CDS_NODE_ARENA_ASAN
TEST(NodeArenaDeathTest, UseAfterFreeIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto node = MakeNode<ConstInt>(7, DataType::kInt64);
        const ConstInt* dangling = node.get();
        node.reset();
        volatile int64_t read = dangling->value;
        (void)read;
      },
      "use-after-poison");
}
#endif

}  // namespace
}  // namespace cds::ir
