#pragma once

#include <string>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"

namespace cds::ir::testing {

// parse(print(P)) equals P with an equal hash, and printing is a fixed point.
inline ::testing::AssertionResult RoundTrips(const ProgramPtr& p) {
  std::string text = PrintProgram(p);
  ProgramPtr back;
  try {
    back = ParseProgram(text, ParseOptions{});
  } catch (const cds::ValueError& e) {
    return ::testing::AssertionFailure() << "reparse failed: " << e.Format() << "\n" << text;
  }
  EqualityResult eq = StructuralEqualWhere(p, back);
  if (!eq.equal) {
    return ::testing::AssertionFailure() << "not equal at " << eq.path << ": " << eq.reason << "\n"
                                         << text;
  }
  if (StructuralHash(p) != StructuralHash(back))
    return ::testing::AssertionFailure() << "hash differs\n" << text;
  std::string again = PrintProgram(back);
  if (again != text) {
    return ::testing::AssertionFailure() << "not a fixed point:\n--- first\n"
                                         << text << "--- second\n"
                                         << again;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace cds::ir::testing
