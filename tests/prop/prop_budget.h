#pragma once

// Per-property case counts for the pipeline properties.
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
//
// The reproduce string is keyed by the test id (Suite/Name[/variant]), so a
// failure printed by one property replays only that property.

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

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
  const TestResult result = checkTestable(std::forward<Testable>(testable), metadata, params);
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
    ADD_FAILURE() << metadata.id << ": " << msg.str();
  }
}

}  // namespace cds::prop
