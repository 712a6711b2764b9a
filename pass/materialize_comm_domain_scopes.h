#pragma once

// MaterializeCommDomainScopes (docs/pass.md; output shape in docs/ir-conventions.md):
// traces alloc -> window view -> chip-orchestrator dispatch chains in every host
// orchestrator, builds one WindowBuffer per alloc, back-references it from every
// view type, and wraps the body in one CommDomainScopeStmt per device coverage.

#include "ir/function.h"

namespace cds::pass {

// Functions that are not host orchestrators, host orchestrators without allocs and
// host orchestrators already wrapped in a CommDomainScopeStmt come back as the same
// pointer; a program in which nothing changes comes back as the same pointer.
// Throws cds::ValueError (span of the alloc, dispatch or collective at fault).
ir::ProgramPtr MaterializeCommDomainScopes(const ir::ProgramPtr& program);

// Above this many devices a constant pl.range is rejected instead of enumerated.
inline constexpr int64_t kMaxEnumeratedDevices = 1 << 16;

}  // namespace cds::pass
