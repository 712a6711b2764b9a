#pragma once

// Per-property case counts and a shrink time budget for the RapidCheck properties
// (tests/prop, tests/ir).
//
// RapidCheck has a single global RC_PARAMS for the whole binary, so a cheap
// property and an expensive one would get the same max_success. Instead each
// property names its own base count and runs through CheckProperty, which hands
// RapidCheck explicit TestParams (rc::detail::checkTestable with params is the
// library's own entry point; rc::check and RC_GTEST_PROP only add the defaults).
//
//   cases = base x CDS_PROP_SCALE        (environment at run time; else the CMake
//                                         cache value CDS_PROP_SCALE, default 1)
//   RC_PARAMS="max_success=N"            overrides the count for every property
//   RC_PARAMS="seed=S" / "reproduce=..." work unchanged (read from configuration())
//   CDS_PROP_SHRINK_SECONDS=S            how long shrinking may run after the test's
//                                         first failure (default 60; 0 = until it ends)
//
// Shrinking re-runs the pipeline for every candidate. Under a fault that fails
// every case (a broken parser) it would run for tens of minutes, and ctest's
// per-test timeout would then report the property without any counterexample.
// Once the budget is spent every further candidate counts as passing, so
// RapidCheck ends the shrink with the smallest failing case found so far. The
// budget is one per run of a gtest test: a test that checks a property per
// invalid kind (23 of them) would otherwise spend it 23 times.
//
// The reproduce string is keyed by the test id (Suite/Name[/variant]), so a
// failure printed by one property replays only that property.

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace cds::prop {

#ifndef CDS_PROP_SCALE_DEFAULT
#define CDS_PROP_SCALE_DEFAULT 1
#endif

// The environment wins over the configure-time default (-DCDS_PROP_SCALE=N).
inline int PropScale() {
  const char* env = std::getenv("CDS_PROP_SCALE");
  const int v = env != nullptr ? std::atoi(env) : CDS_PROP_SCALE_DEFAULT;
  return v > 0 ? v : 1;
}

inline bool RcParamsSetMaxSuccess() {
  const char* env = std::getenv("RC_PARAMS");
  return env != nullptr && std::string(env).find("max_success") != std::string::npos;
}

inline int CasesFor(int base) { return base * PropScale(); }

inline std::chrono::seconds ShrinkBudget() {
  const char* env = std::getenv("CDS_PROP_SHRINK_SECONDS");
  return std::chrono::seconds(env != nullptr ? std::atoi(env) : 60);
}

// What WithShrinkBudget keeps across the calls RapidCheck makes (it calls the
// property as const).
struct ShrinkState {
  std::optional<std::chrono::steady_clock::time_point> first_failure;  // in this gtest test
  bool failed = false;  // this property has failed: it is shrinking
  bool cut = false;     // the budget ended this property's shrink
};

inline ShrinkState& ShrinkStateOfCurrentTest() {
  // A run of a test is its TestInfo and its start time: --gtest_repeat runs the
  // same TestInfo again, and that run gets a budget of its own.
  using Run = std::pair<const ::testing::TestInfo*, ::testing::TimeInMillis>;
  static Run current{nullptr, 0};
  static ShrinkState state;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const Run run{info, info != nullptr ? info->result()->start_timestamp() : 0};
  if (run != current) {
    current = run;
    state = {};
  }
  state.failed = state.cut = false;
  return state;
}

inline void MarkFailed(ShrinkState* state, std::chrono::steady_clock::time_point now) {
  state->failed = true;
  if (!state->first_failure) state->first_failure = now;
}

// `property` with its shrink cut off ShrinkBudget() after the test's first failure.
template <typename Property>
auto WithShrinkBudget(Property& property, ShrinkState* state) {
  return [&property, state, budget = ShrinkBudget()] {
    const auto now = std::chrono::steady_clock::now();
    // Only a shrink is cut: a later property of the test still runs every case.
    if (state->failed && budget.count() > 0 && now - *state->first_failure > budget) {
      state->cut = true;
      return;
    }
    try {
      property();
    } catch (const rc::detail::CaseResult& r) {
      if (r.type == rc::detail::CaseResult::Type::Failure) MarkFailed(state, now);
      throw;
    } catch (const rc::GenerationFailure&) {
      throw;  // a discarded case, not a failure
    } catch (...) {
      MarkFailed(state, now);
      throw;
    }
  };
}

// Runs `testable` as a property of the current gtest test with `base` cases
// (scaled). `variant` distinguishes several properties checked inside one TEST.
template <typename Testable>
void CheckProperty(int base, Testable&& testable, const std::string& variant = {}) {
  using namespace rc::detail;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  if (!variant.empty()) metadata.id += "/" + variant;
  metadata.description = metadata.id;
  TestParams params = configuration().testParams;
  if (!RcParamsSetMaxSuccess()) params.maxSuccess = CasesFor(base);
  ShrinkState& shrink = ShrinkStateOfCurrentTest();
  const TestResult result = checkTestable(WithShrinkBudget(testable, &shrink), metadata, params);
  std::ostringstream msg;
  printResultMessage(result, msg);
  if (result.template is<SuccessResult>()) {
    // A reproduce= run stops after the one replayed case; otherwise all must run.
    if (configuration().reproduce.empty()) {
      EXPECT_GE(result.template get<SuccessResult>().numSuccess, params.maxSuccess)
          << metadata.id << ": " << msg.str();
    }
    std::cout << metadata.id << ": " << msg.str() << std::endl;
  } else {
    ADD_FAILURE() << metadata.id << ": " << msg.str()
                  << (shrink.cut ? "(shrinking stopped after CDS_PROP_SHRINK_SECONDS=" +
                                       std::to_string(ShrinkBudget().count()) +
                                       "; the counterexample may not be minimal)"
                                 : "");
  }
}

}  // namespace cds::prop
