#pragma once

// Compares a pipeline output with the model's expectation, reading the output
// with no rule of the pass: the host orchestrators are the functions the model
// made hosts (by name), a scope's devices are the IR's plain list, and a
// WindowBuffer's size is evaluated by the comparison itself.

#include <string>

#include "fuzz/gen/expect.h"
#include "ir/function.h"

namespace cds::fuzz {

// Empty when the output carries exactly the expected scopes: in every host the
// model made, the comm-domain scopes in pre-order with their names, devices,
// slots (alloc name and LHS variable) and WindowBuffer byte sizes (evaluated at
// two world sizes); and no scope in any other function. Otherwise one paragraph
// per function that differs, with both sides.
std::string ModelMismatch(const Expectation& expect, const ir::Program& output);

}  // namespace cds::fuzz
