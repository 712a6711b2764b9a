#pragma once

#include <string>
#include <vector>

#include "ir/function.h"

namespace cds::fuzz::testing {

// Problems of a generated IR: a Var used outside the scope of its definition, or
// an op call whose recorded type differs from the registry's deduction (or that
// the registry rejects). Empty when the program is well formed.
std::vector<std::string> WellFormedProblems(const ir::ProgramPtr& program);

}  // namespace cds::fuzz::testing
