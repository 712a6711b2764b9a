// ir::PtrTable, the address-keyed map behind structural equality and hashing, the
// printer's names, the pass's Var tables and the verifier's self-check.

#include <gtest/gtest.h>

#include <vector>

#include "ir/ptr_table.h"

namespace cds::ir {
namespace {

TEST(PtrTable, BehavesLikeAMap) {
  std::vector<int> objects(5000);
  PtrTable<size_t> t;
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.Find(&objects[0]), nullptr);
  EXPECT_EQ(t.Find(nullptr), nullptr);
  for (size_t i = 0; i < objects.size(); i += 2) EXPECT_TRUE(t.Set(&objects[i], i));
  EXPECT_EQ(t.size(), objects.size() / 2);
  for (size_t i = 0; i < objects.size(); ++i) {
    const size_t* v = t.Find(&objects[i]);
    if (i % 2 == 0) {
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(*v, i);
    } else {
      EXPECT_EQ(v, nullptr);
    }
  }
  EXPECT_FALSE(t.Set(&objects[0], 42));  // overwrite
  EXPECT_EQ(*t.Find(&objects[0]), 42u);
  EXPECT_FALSE(t.Insert(&objects[2], 7));  // present: kept
  EXPECT_EQ(*t.Find(&objects[2]), 2u);
  EXPECT_TRUE(t.Insert(&objects[1], 7));
  EXPECT_EQ(*t.Find(&objects[1]), 7u);
  EXPECT_EQ(t.size(), objects.size() / 2 + 1);
}

TEST(PtrTable, FindOrInsertDefaultConstructsOnce) {
  int a = 0, b = 0;
  PtrTable<int> t;
  auto [va, fresh_a] = t.FindOrInsert(&a);
  EXPECT_TRUE(fresh_a);
  EXPECT_EQ(*va, 0);
  *va = 5;
  auto [va2, fresh_a2] = t.FindOrInsert(&a);
  EXPECT_FALSE(fresh_a2);
  EXPECT_EQ(*va2, 5);
  EXPECT_TRUE(t.FindOrInsert(&b).second);
  EXPECT_EQ(t.size(), 2u);
}

// Keys with a regular stride larger than the table (nodes of a generated program)
// must all stay findable, and ForEach must visit each exactly once.
TEST(PtrTable, StridedKeysAndForEach) {
  std::vector<char> arena(1 << 22);
  PtrTable<size_t> t;
  const size_t stride = 4096 + 48;
  size_t n = 0;
  for (size_t off = 0; off + stride < arena.size(); off += stride, ++n) t.Set(&arena[off], off);
  size_t seen = 0, sum = 0, expected_sum = 0;
  for (size_t off = 0, k = 0; k < n; off += stride, ++k) {
    ASSERT_NE(t.Find(&arena[off]), nullptr);
    EXPECT_EQ(*t.Find(&arena[off]), off);
    expected_sum += off;
  }
  t.ForEach([&](const void*, size_t& v) {
    ++seen;
    sum += v;
  });
  EXPECT_EQ(seen, n);
  EXPECT_EQ(sum, expected_sum);
}

TEST(PtrTable, ClearEmptiesAndStaysUsable) {
  std::vector<int> objects(3000);
  PtrTable<int> t;
  for (auto& o : objects) t.Set(&o, 1);
  t.Clear();
  EXPECT_TRUE(t.empty());
  for (auto& o : objects) EXPECT_EQ(t.Find(&o), nullptr);
  EXPECT_TRUE(t.Set(&objects[7], 3));
  EXPECT_EQ(*t.Find(&objects[7]), 3);
  EXPECT_EQ(t.size(), 1u);
}

}  // namespace
}  // namespace cds::ir
