#pragma once

// Which functions the verifier treats as host and chip orchestrators. The
// verifier states this rule itself: a mistake in the pass's own reading of
// levels and roles must show up as a disagreement, not be shared. Oracle code
// outside verifier/ (replay, the fuzz glue) asks these instead of the IR.

#include <optional>

#include "ir/function.h"

namespace cds::verify {

// The level a function runs at: the declared one, else the one its type implies
// (Orchestration and Graph run at CHIP, InCore at CHIP_DIE, AIC at AIC, AIV at AIV,
// Group at CORE_GROUP); no level for the other types.
std::optional<ir::Level> LevelOf(const ir::Function& fn);

// HOST level and either the Orchestrator role or the Orchestration type.
bool IsHostOrchestrator(const ir::Function& fn);

// CHIP level, either the Orchestrator role or the Orchestration type, and not a
// Graph: a Graph callee is compiled as one unit and never takes a window view.
bool IsChipOrchestrator(const ir::Function& fn);

}  // namespace cds::verify
