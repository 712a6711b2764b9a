#pragma once

// Delta debugging on the IR (docs/reducer.md). Every candidate is a whole program
// printed with PrintProgram; a candidate whose text does not parse back is
// skipped, so the result is always a valid `.pyir` file.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "ir/function.h"

namespace cds::reduce {

// Decides whether a candidate program text still shows the behaviour of interest.
using Interesting = std::function<bool(const std::string& text)>;

struct ReduceOptions {
  // Called after every reduction step: step name, current line count, tests run.
  std::function<void(std::string_view step, size_t lines, size_t tests)> progress;
  size_t max_rounds = 50;  // full rounds of all steps; reduction stops earlier at a fixpoint
  size_t max_tests = 100000;
};

struct ReduceResult {
  std::string text;  // the smallest interesting program found (printed form)
  size_t tests = 0;  // interestingness tests run (cache hits and unparsable candidates excluded)
  size_t rounds = 0;
  bool start_interesting = false;  // the printed input itself was interesting
};

// Steps, each to a fixpoint within a round: remove functions; ddmin over every
// statement list (outer lists first); replace loops / ifs / with-scopes by their
// bodies (a for loop's variable becomes its start value); inline aliases and
// constant temporaries; remove call arguments, keyword arguments and attributes
// (a cross-function call loses an argument only together with the callee's parameter);
// call a same-signature function of an earlier name instead;
// shrink integer constants (never inside shapes or types).
ReduceResult Reduce(const ir::ProgramPtr& program, const Interesting& interesting,
                    const ReduceOptions& options = {});

size_t CountLines(std::string_view text);

}  // namespace cds::reduce
