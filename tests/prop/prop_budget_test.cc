// CheckProperty's shrink budget (tests/prop/prop_budget.h): a property whose shrink
// is slow stops shrinking once the budget is spent and reports what it has.

#include "tests/prop/prop_budget.h"

#include <chrono>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace cds::prop {
namespace {

// Once RapidCheck's size grows, cases fail (200 values from [1, 1000) sum to about
// 100,000), and so do most shrink candidates: only a sum under 50,000 passes, so
// the shrinker lowers the values a few at a time. At 20 ms per candidate the whole
// shrink takes over 30 s.
void CheckSlowShrink() {
  CheckProperty(100, [] {
    const auto values = *rc::gen::container<std::vector<int>>(200, rc::gen::inRange(1, 1000));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    RC_ASSERT(std::accumulate(values.begin(), values.end(), 0) < 50000);
  });
}

TEST(PropBudget, ShrinkingStopsWhenTheBudgetIsSpent) {
  ASSERT_EQ(setenv("CDS_PROP_SHRINK_SECONDS", "1", 1), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NONFATAL_FAILURE(CheckSlowShrink(), "shrinking stopped after CDS_PROP_SHRINK_SECONDS=1");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  unsetenv("CDS_PROP_SHRINK_SECONDS");
  EXPECT_LT(elapsed, std::chrono::seconds(10));  // unbounded, the shrink takes over 30 s
}

// One budget per gtest test: after the first property has spent it, the shrinks of
// the next ones end at once. With a budget per property, four of them would take
// over 12 s.
TEST(PropBudget, OneBudgetServesTheWholeTest) {
  ASSERT_EQ(setenv("CDS_PROP_SHRINK_SECONDS", "2", 1), 0);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) {
    EXPECT_NONFATAL_FAILURE(CheckSlowShrink(), "shrinking stopped after CDS_PROP_SHRINK_SECONDS=2");
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  unsetenv("CDS_PROP_SHRINK_SECONDS");
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

}  // namespace
}  // namespace cds::prop
