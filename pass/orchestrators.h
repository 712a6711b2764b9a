#pragma once

// Which functions the passes work on and which calls are dispatches: the host and
// chip orchestrators, decided from a function's declared type, level and role.

#include <optional>

#include "ir/function.h"

namespace cds::pass {

// The level a function runs at: the declared one, else the one its type implies
// (Orchestration and Graph run on a chip, InCore on a chip die, AIC, AIV and Group
// on their own level). Other types declare no level and imply none.
std::optional<ir::Level> LevelOf(const ir::Function& f);

// A host orchestrator runs at HOST level and orchestrates (role Orchestrator, or
// type Orchestration). Both passes rewrite host orchestrators only.
bool IsHostOrchestrator(const ir::Function& f);

// A chip orchestrator runs at CHIP level and orchestrates, and is not a Graph
// function. A host call of one (with device=) is a dispatch.
bool IsChipOrchestrator(const ir::Function& f);

}  // namespace cds::pass
