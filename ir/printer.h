#pragma once

// The printer of the one text format (docs/text-format.md): the PyPTO DSL subset
// plus the private pl._dump extension for materialized state.

#include <string>

#include "ir/function.h"

namespace cds::ir {

// A whole program as a `.pyir` file. For a self-contained program P,
// ParseProgram(PrintProgram(P)) is structurally equal to P with an equal hash, and
// printing is a fixed point.
//
// `expected_bytes`, the caller's guess of the text's size, is reserved up front:
// grown by doubling, a large text is copied once more and faulted in twice. A
// generous guess costs address space only (pages are touched as the text reaches
// them); one too small costs a doubling at the end.
std::string PrintProgram(const ProgramPtr& program, size_t expected_bytes = 0);

// Any node as text, for messages and debugging (fragments need not reparse).
std::string PrintNode(const NodePtr& node);

}  // namespace cds::ir
