#pragma once

// A small random generator of printable host programs for the text-format
// round-trip property: allocs, views, dispatches, collectives, scalar
// arithmetic, loops and branches, rebound names, and (optionally) the
// materialized state the pass leaves behind (shared WindowBuffers, windows
// sharing a base, nested comm-domain scopes).

#include <cstdint>

#include "ir/function.h"

namespace cds::ir::testing {

struct RandomProgramOptions {
  bool materialized = true;  // may wrap host bodies in scopes and type views with windows
  int max_stmts = 12;
  int max_depth = 3;
};

ProgramPtr RandomProgram(uint64_t seed, const RandomProgramOptions& options = {});

}  // namespace cds::ir::testing
