// ir::PtrTable, the address-keyed map behind structural equality and hashing.

#include "ir/ptr_table.h"

#include <vector>

#include <gtest/gtest.h>

namespace cds::ir {
namespace {

TEST(PtrTable, BehavesLikeAMap) {
  std::vector<int> objects(5000);
  PtrTable<size_t> t;
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.Find(&objects[0]), nullptr);
  EXPECT_EQ(t.Find(nullptr), nullptr);
  for (size_t i = 0; i < objects.size(); i += 2) t.Set(&objects[i], i);
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
  t.Set(&objects[0], 42);  // overwrite
  EXPECT_EQ(*t.Find(&objects[0]), 42u);
  EXPECT_EQ(t.size(), objects.size() / 2);
}

// Keys with a regular stride larger than the table (nodes of a generated program)
// must all stay findable.
TEST(PtrTable, StridedKeys) {
  std::vector<char> arena(1 << 22);
  PtrTable<size_t> t;
  const size_t stride = 4096 + 48;
  size_t n = 0;
  for (size_t off = 0; off + stride < arena.size(); off += stride, ++n) t.Set(&arena[off], off);
  EXPECT_EQ(t.size(), n);
  for (size_t off = 0, k = 0; k < n; off += stride, ++k) {
    ASSERT_NE(t.Find(&arena[off]), nullptr);
    EXPECT_EQ(*t.Find(&arena[off]), off);
  }
}

}  // namespace
}  // namespace cds::ir
