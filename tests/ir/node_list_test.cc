// NodeList (ir/node_list.h): a node's list owns its elements exactly once,
// whichever way it was built, copied, moved or edited, and sits in the arena
// next to the node being built.

#include "ir/node_list.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/structural_equal.h"

namespace cds::ir {
namespace {

VarPtr IntVar(const char* name) { return MakeVar(name, ScalarTy(DataType::kInt64)); }

TEST(NodeListTest, BuildsFromVectorsSpansAndBraces) {
  VarPtr x = IntVar("x"), y = IntVar("y");
  std::vector<ExprPtr> v{x, y};
  NodeList<ExprPtr> copied(v);
  EXPECT_EQ(x.use_count(), 3);  // x, v, copied
  NodeList<ExprPtr> moved(std::move(v));
  EXPECT_EQ(x.use_count(), 3);  // the vector's reference moved over
  NodeList<ExprPtr> from_span{std::span<const ExprPtr>(copied)};
  NodeList<ExprPtr> braced{x};
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0], x);
  EXPECT_EQ(moved.back(), y);
  EXPECT_TRUE(copied == moved);
  EXPECT_TRUE(from_span == moved);
  EXPECT_FALSE(braced == moved);
  EXPECT_EQ(x.use_count(), 5);
}

TEST(NodeListTest, CopiesAreDeepAndMovesSteal) {
  VarPtr x = IntVar("x");
  NodeList<ExprPtr> a{x, x};
  NodeList<ExprPtr> b = a;
  EXPECT_NE(a.data(), b.data());
  EXPECT_EQ(x.use_count(), 5);
  const ExprPtr* storage = a.data();
  NodeList<ExprPtr> c = std::move(a);
  EXPECT_EQ(c.data(), storage);
  EXPECT_TRUE(a.empty());
  b = c;  // copy-assign releases b's old elements
  EXPECT_EQ(x.use_count(), 5);
  b = NodeList<ExprPtr>();
  c.clear();
  EXPECT_EQ(x.use_count(), 1);
}

TEST(NodeListTest, EditsKeepCountsRight) {
  VarPtr x = IntVar("x"), y = IntVar("y");
  NodeList<ExprPtr> l{x};
  l.push_back(y);
  l.emplace_back(x);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(x.use_count(), 3);
  ExprPtr* after = l.erase(l.begin());
  EXPECT_EQ(*after, y);
  l.insert(l.begin() + 1, Int(4));
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], y);
  EXPECT_EQ(l[2], x);
  l.pop_back();
  EXPECT_EQ(x.use_count(), 1);
  EXPECT_THROW((void)l.at(2), std::out_of_range);
  std::vector<ExprPtr> out = l.ToVector();
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(y.use_count(), 3);
}

TEST(NodeListTest, GenerateBuildsEachElementFromItsIndex) {
  VarPtr x = IntVar("x");
  auto l = NodeList<ExprPtr>::Generate(3, [&](size_t i) -> ExprPtr {
    if (i == 1) return x;
    return Int(static_cast<int64_t>(i));
  });
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[1], x);
  EXPECT_EQ(x.use_count(), 2);
  EXPECT_TRUE(StructuralEqual(l[2], Int(2)));
  EXPECT_TRUE(NodeList<ExprPtr>::Generate(0, [](size_t) { return ExprPtr(); }).empty());
  // The TupleType of a tuple literal is generated from its elements' types.
  ExprPtr t = Tuple({x, Int(1)});
  const auto& types = static_cast<const TupleType&>(*t->type).types;
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0], x->type);
}

// Elements that are not node pointers (kwargs: strings and variants) are built
// and destroyed in place too.
TEST(NodeListTest, HoldsNonTrivialElements) {
  VarPtr x = IntVar("x");
  Kwargs kw{{"op", EnumAttr{"pld.ReduceOp.Sum"}},
            {"value", ExprPtr(x)},
            {"a long name that does not fit the small-string buffer", int64_t{7}}};
  Kwargs copy = kw;
  EXPECT_EQ(x.use_count(), 3);
  EXPECT_TRUE(copy == kw);
  ASSERT_NE(FindKwarg(copy, "value"), nullptr);
  EXPECT_EQ(
      std::get<int64_t>(*FindKwarg(kw, "a long name that does not fit the small-string buffer")),
      7);
  kw = Kwargs();
  copy.erase(copy.begin() + 1);
  EXPECT_EQ(x.use_count(), 1);
}

// A list is one pointer, null when empty: an empty list takes no memory, and
// the count lives in front of the elements.
TEST(NodeListTest, IsOnePointerAndEmptyListsAllocateNothing) {
  static_assert(sizeof(NodeList<ExprPtr>) == sizeof(void*));
  static_assert(sizeof(Kwargs) == sizeof(void*));
  NodeList<ExprPtr> empty(std::vector<ExprPtr>{});
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.begin(), empty.end());
  EXPECT_EQ(std::span<const ExprPtr>(empty).size(), 0u);
  std::vector<ExprPtr> many;
  for (int i = 0; i < 1000; ++i) many.push_back(Int(i));
  NodeList<ExprPtr> list(many);
  ASSERT_EQ(list.size(), 1000u);
  EXPECT_EQ(list.end() - list.begin(), 1000);
  EXPECT_EQ(list.back(), many.back());
  NodeList<ExprPtr> moved(std::move(list));
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(moved.size(), 1000u);
  moved.pop_back();
  EXPECT_EQ(moved.size(), 999u);
  EXPECT_EQ(many.back().use_count(), 1);
}

// A VectorTail hands over the top of a scratch stack: the elements from `from` on
// move into the list (no reference is added) and leave the vector, which keeps
// what lies below.
TEST(NodeListTest, TakesTheTailOfAVector) {
  VarPtr x = IntVar("x"), y = IntVar("y"), z = IntVar("z");
  std::vector<ExprPtr> scratch{x, y, z, x};
  NodeList<ExprPtr> tail(VectorTail<ExprPtr>{&scratch, 1});
  ASSERT_EQ(tail.size(), 3u);
  EXPECT_EQ(tail[0], y);
  EXPECT_EQ(tail[2], x);
  ASSERT_EQ(scratch.size(), 1u);
  EXPECT_EQ(scratch[0], x);
  EXPECT_EQ(x.use_count(), 3);  // x, scratch[0], tail[2]
  EXPECT_EQ(y.use_count(), 2);  // moved, not copied
  NodeList<ExprPtr> nothing(VectorTail<ExprPtr>{&scratch, 1});
  EXPECT_TRUE(nothing.empty());
  EXPECT_EQ(scratch.size(), 1u);
}

// A node's lists come from the chunk the node is placed in, next to it: the
// point of NodeList. A builder converts the vector just before making the node,
// so here the list sits right before the Call (and its GlobalVar).
TEST(NodeListTest, ANodesListFollowsIt) {
  VarPtr x = IntVar("x");
  std::vector<ExprPtr> args{x, Int(1), Int(2)};
  CallPtr call = MakeFunctionCall("f", std::move(args), nullptr, UnknownType::Get());
  const auto node = reinterpret_cast<uintptr_t>(call.get());
  const auto list = reinterpret_cast<uintptr_t>(call->args.data());
  EXPECT_LT(node > list ? node - list : list - node, 512u);
}

}  // namespace
}  // namespace cds::ir
