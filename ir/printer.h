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
// `expected_bytes` is the caller's guess of the text's size (a tool knows its
// input's). The buffer is reserved for it up front, on huge pages where the
// kernel gives them on request: grown by doubling instead, a text of many
// megabytes is copied about once more and its pages are faulted in about twice.
// A generous guess costs address space only; pages are touched as the text
// reaches them. A guess too small costs one doubling at the end.
std::string PrintProgram(const ProgramPtr& program, size_t expected_bytes = 0);

// Any node as text, for messages and debugging (fragments need not reparse).
std::string PrintNode(const NodePtr& node);

}  // namespace cds::ir
