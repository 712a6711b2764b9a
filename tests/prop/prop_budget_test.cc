// CheckProperty's shrink budget (tests/prop/prop_budget.h): a property whose shrink
// is slow stops shrinking once the budget is spent and reports what it has.

#include "tests/prop/prop_budget.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace cds::prop {
namespace {

// The tests below bound the CPU time of their own thread, not the wall time: the
// budget is wall time, so on a loaded machine it runs out after less work, and a
// bound on this thread's CPU time holds however busy the machine is.
std::chrono::nanoseconds ThreadCpuTime() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

void BurnThreadCpu(std::chrono::milliseconds amount) {
  const auto until = ThreadCpuTime() + amount;
  while (ThreadCpuTime() < until) {
  }
}

// Once RapidCheck's size grows, cases fail (200 values from [1, 1000) sum to about
// 100,000), and so do most shrink candidates: only a sum under 50,000 passes, so
// the shrinker lowers the values a few at a time. From the first failure on, every
// call burns 20 ms of this thread's CPU: the whole shrink would take over 30 s.
// `first_failure`, if given, receives when a case first failed.
void CheckSlowShrink(
    std::optional<std::chrono::steady_clock::time_point>* first_failure = nullptr) {
  bool shrinking = false;
  CheckProperty(100, [first_failure, &shrinking] {
    const auto values = *rc::gen::container<std::vector<int>>(200, rc::gen::inRange(1, 1000));
    const bool holds = std::accumulate(values.begin(), values.end(), 0) < 50000;
    if (!holds && !shrinking) {
      shrinking = true;
      if (first_failure != nullptr) *first_failure = std::chrono::steady_clock::now();
    }
    if (shrinking) BurnThreadCpu(std::chrono::milliseconds(20));
    RC_ASSERT(holds);
  });
}

// These tests need RapidCheck to shrink; RC_PARAMS="noshrink=1" (the bug hunt sets
// it) leaves them nothing to measure.
#define CDS_SKIP_UNLESS_SHRINKING()                                             \
  if (rc::detail::configuration().testParams.disableShrinking) {                \
    GTEST_SKIP() << "RC_PARAMS has noshrink: this test measures how shrinking " \
                    "ends, and no shrink runs";                                 \
  }

TEST(PropBudget, ShrinkingStopsWhenTheBudgetIsSpent) {
  CDS_SKIP_UNLESS_SHRINKING();
  ASSERT_EQ(setenv("CDS_PROP_SHRINK_SECONDS", "1", 1), 0);
  const auto start = ThreadCpuTime();
  EXPECT_NONFATAL_FAILURE(CheckSlowShrink(), "shrinking stopped after CDS_PROP_SHRINK_SECONDS=1");
  const auto spent = ThreadCpuTime() - start;
  unsetenv("CDS_PROP_SHRINK_SECONDS");
  // At most the budget's 1 s of burning; unbounded, the shrink burns over 30 s.
  EXPECT_LT(spent, std::chrono::seconds(10));
}

// One budget per gtest test: after the first property has spent it, the shrinks of
// the next ones end at once. The budget is 2 s of wall time: four properties burn
// about 2 s of CPU in all. With a budget per property they burn 8 s on an idle
// machine, and still over 5 s when another process halves this thread's share.
TEST(PropBudget, OneBudgetServesTheWholeTest) {
  CDS_SKIP_UNLESS_SHRINKING();
  ASSERT_EQ(setenv("CDS_PROP_SHRINK_SECONDS", "2", 1), 0);
  const auto start = ThreadCpuTime();
  for (int i = 0; i < 4; ++i) {
    EXPECT_NONFATAL_FAILURE(CheckSlowShrink(), "shrinking stopped after CDS_PROP_SHRINK_SECONDS=2");
  }
  const auto spent = ThreadCpuTime() - start;
  unsetenv("CDS_PROP_SHRINK_SECONDS");
  EXPECT_LT(spent, std::chrono::milliseconds(3500));
}

// Discarded cases are not failures: however long they take, the clock starts at
// the first failing case. Had the discards started it, the budget would be spent
// when the property first fails, and every later case would count as passing.
// RapidCheck discards a case two ways: RC_DISCARD (a CaseResult) and a generator
// that gives up (rc::GenerationFailure); each is caught on its own path.
void CheckSlowDiscardsThenFailure(void (*discard)()) {
  ASSERT_EQ(setenv("CDS_PROP_SHRINK_SECONDS", "1", 1), 0);
  int calls = 0;
  EXPECT_NONFATAL_FAILURE(
      CheckProperty(100,
                    [&calls, discard] {
                      if (calls++ < 15) {
                        // 1.5 s of discards in all
                        std::this_thread::sleep_for(std::chrono::milliseconds(100));
                        discard();
                      }
                      RC_FAIL("every case after the discards fails");
                    }),
      "every case after the discards fails");
  unsetenv("CDS_PROP_SHRINK_SECONDS");
}

TEST(PropBudget, DiscardsDoNotStartTheClock) {
  CheckSlowDiscardsThenFailure([] { RC_DISCARD("a slow discard"); });
}

TEST(PropBudget, GenerationFailuresDoNotStartTheClock) {
  CheckSlowDiscardsThenFailure(
      [] { *rc::gen::suchThat(rc::gen::just(0), [](int) { return false; }); });
}

// --gtest_repeat runs the same test again in one process: each run shrinks for the
// whole budget. Had the second run kept the first run's clock, its shrink would
// have been cut at once. The test runs itself twice in a child process.
TEST(PropBudget, EachRepeatOfATestHasItsOwnBudget) {
  CDS_SKIP_UNLESS_SHRINKING();
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (std::getenv("CDS_PROP_BUDGET_REPEAT_CHILD") != nullptr) {
    // The shrink, from the first failing case on, lasts the whole budget.
    std::optional<std::chrono::steady_clock::time_point> first_failure;
    EXPECT_NONFATAL_FAILURE(CheckSlowShrink(&first_failure),
                            "shrinking stopped after CDS_PROP_SHRINK_SECONDS=1");
    ASSERT_TRUE(first_failure.has_value());
    EXPECT_GE(std::chrono::steady_clock::now() - *first_failure, std::chrono::milliseconds(900));
    return;
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string log = ::testing::TempDir() + "prop_budget_repeat.log";
  const std::string command = fmt::format(
      "CDS_PROP_BUDGET_REPEAT_CHILD=1 CDS_PROP_SHRINK_SECONDS=1 '{}' --gtest_filter='{}.{}' "
      "--gtest_repeat=2 > '{}' 2>&1",
      self, info->test_suite_name(), info->name(), log);
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("Repeating all tests (iteration 2)"), std::string::npos) << output;
}

}  // namespace
}  // namespace cds::prop
