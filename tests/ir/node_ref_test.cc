// NodeRef (ir/node_ref.h): the count in the node follows every way a reference
// is made, moved, cast and dropped; a copied node starts a count of its own; the
// last reference destroys the node whatever static type it is held through.

#include "ir/node_ref.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/dispatch.h"

namespace cds::ir {
namespace {

VarPtr IntVar(const char* name) { return MakeVar(name, ScalarTy(DataType::kInt64)); }

TEST(NodeRefTest, CopiesCountAndDropsUncount) {
  VarPtr x = IntVar("x");
  EXPECT_EQ(x.use_count(), 1);
  {
    VarPtr copy = x;
    ExprPtr as_expr = x;  // converting copy
    EXPECT_EQ(x.use_count(), 3);
  }
  EXPECT_EQ(x.use_count(), 1);
  ExprPtr sum = Add(x, Int(1));  // a field of the BinaryExpr holds one more
  EXPECT_EQ(x.use_count(), 2);
  sum.reset();  // the BinaryExpr dies and releases its field
  EXPECT_EQ(x.use_count(), 1);
}

TEST(NodeRefTest, MovesAndRvalueCastsKeepTheCount) {
  VarPtr x = IntVar("x");
  ExprPtr moved = std::move(x);
  EXPECT_FALSE(x);
  EXPECT_EQ(moved.use_count(), 1);
  VarPtr back = PtrCast<const Var>(std::move(moved));
  EXPECT_FALSE(moved);
  EXPECT_EQ(back.use_count(), 1);
  VarPtr again = PtrCast<const Var>(ExprPtr(back));  // from a temporary copy
  EXPECT_EQ(back.use_count(), 2);
  EXPECT_EQ(again, back);
  NodePtr as_node = back;
  EXPECT_EQ(As<Var>(as_node).get(), back.get());
  EXPECT_EQ(back.use_count(), 3);  // back, again, as_node; As<> returned a temporary
}

TEST(NodeRefTest, AssignmentReleasesTheOldTarget) {
  VarPtr x = IntVar("x");
  VarPtr y = IntVar("y");
  VarPtr r = x;
  EXPECT_EQ(x.use_count(), 2);
  r = y;
  EXPECT_EQ(x.use_count(), 1);
  EXPECT_EQ(y.use_count(), 2);
  VarPtr& same = r;
  r = same;  // self-assignment keeps the node alive
  EXPECT_EQ(y.use_count(), 2);
  r = nullptr;
  EXPECT_EQ(y.use_count(), 1);
}

// Copying a node (the passes rebuild nodes this way) must not copy its count:
// a copy made while the original had three owners would otherwise never die.
TEST(NodeRefTest, ACopiedNodeStartsItsOwnCount) {
  VarPtr x = IntVar("x");
  VarPtr a = x, b = x;
  auto copy = MakeNode<Var>(*x);
  EXPECT_EQ(copy.use_count(), 1);
  EXPECT_EQ(x.use_count(), 3);
  EXPECT_NE(copy.get(), x.get());
}

// The destructor that runs is the concrete class's even when the last reference
// is typed as a base: the Call's argument list (and the argument's count) must be
// released through a NodePtr.
TEST(NodeRefTest, TheLastReferenceThroughABaseDestroysTheConcreteNode) {
  VarPtr x = IntVar("x");
  NodePtr call = MakeFunctionCall("f", {x, x}, nullptr, UnknownType::Get());
  EXPECT_EQ(x.use_count(), 3);
  call.reset();
  EXPECT_EQ(x.use_count(), 1);
}

TEST(NodeRefTest, EqualityFollowsTheAddress) {
  VarPtr x = IntVar("x");
  VarPtr y = IntVar("y");
  ExprPtr x_as_expr = x;
  EXPECT_TRUE(x == x_as_expr);
  EXPECT_FALSE(x == y);
  EXPECT_TRUE(VarPtr() == nullptr);
}

// Threads copy and drop references to shared nodes concurrently (the fuzzers'
// and the arena test's pattern); the count must come back exactly.
TEST(NodeRefTest, ConcurrentCopiesBalance) {
  VarPtr x = IntVar("x");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&x] {
      for (int i = 0; i < 20000; ++i) {
        ExprPtr e = Add(x, x);
        VarPtr copy = x;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(x.use_count(), 1);
}

}  // namespace
}  // namespace cds::ir
