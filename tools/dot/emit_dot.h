#pragma once

// Graphviz pictures of a materialized program (docs/pictures.md): allocs -> views
// -> dispatches (with their device descriptors) and collectives, one cluster per
// comm-domain scope, one outer cluster per host orchestrator.

#include <string>

#include "ir/function.h"

namespace cds::dot {

// The DOT text for `materialized` (the output of MaterializeCommDomainScopes).
// Functions without allocs and scopes are left out. An unmaterialized program is
// drawn too, with its allocs outside any scope, which makes a missing scope
// visible rather than an error.
std::string EmitDot(const ir::ProgramPtr& materialized);

}  // namespace cds::dot
