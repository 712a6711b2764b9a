#pragma once

#include <cstdint>

#include "ir/node.h"

namespace cds::ir {

// Consistent with StructuralEqual: equal IRs hash equal. Order-sensitive; a
// Var-like node is hashed by its first-sight index (plus, at first sight, its
// fields), never by address or name.
uint64_t StructuralHash(const NodePtr& node);

}  // namespace cds::ir
