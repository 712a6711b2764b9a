// RapidCheck property: random printable host programs round trip exactly.
// Each case checks kProgramsPerCase programs, so the default 100 cases give
// 300 programs; CDS_PROP_SCALE (env) multiplies that for nightly runs.

#include <cstdlib>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "tests/text/random_program.h"

namespace cds::ir {
namespace {

constexpr int kProgramsPerCase = 3;

int Scale() {
  const char* s = std::getenv("CDS_PROP_SCALE");
  int v = s ? std::atoi(s) : 1;
  return v > 0 ? v : 1;
}

void CheckRoundTrip(uint64_t seed, bool materialized) {
  testing::RandomProgramOptions opt;
  opt.materialized = materialized;
  ProgramPtr p = testing::RandomProgram(seed, opt);
  std::string text = PrintProgram(p);
  ProgramPtr back;
  try {
    back = ParseProgram(text);
  } catch (const cds::ValueError& e) {
    RC_FAIL(e.Format() + "\n" + text);
  }
  EqualityResult eq = StructuralEqualWhere(p, back);
  if (!eq.equal) RC_FAIL(eq.path + ": " + eq.reason + "\n" + text);
  RC_ASSERT(StructuralHash(p) == StructuralHash(back));
  if (PrintProgram(back) != text) RC_FAIL("not a fixed point:\n" + text);
}

RC_GTEST_PROP(TextProperty, RandomHostProgramsRoundTrip, ()) {
  const auto seed = *rc::gen::arbitrary<uint64_t>();
  const int n = kProgramsPerCase * Scale();
  for (int i = 0; i < n; ++i) CheckRoundTrip(seed * 7919u + static_cast<uint64_t>(i), i % 3 != 0);
}

}  // namespace
}  // namespace cds::ir
