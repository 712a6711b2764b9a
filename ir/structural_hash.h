#pragma once

#include <cstdint>

#include "ir/node.h"

namespace cds::ir {

// Consistent with StructuralEqual: equal IRs hash equal. Order-sensitive; a
// Var-like node is hashed by its first-sight index (plus, at first sight, its
// fields), never by address or name.
uint64_t StructuralHash(const NodePtr& node);

// StructuralEqual(lhs, rhs) and, when they are equal, the StructuralHash of each
// side (the round trip's check that equal IRs hash equal). The hashes are 0 when
// !equal.
struct EqualAndHashes {
  bool equal = false;
  uint64_t lhs_hash = 0;
  uint64_t rhs_hash = 0;
};
EqualAndHashes StructuralEqualAndHash(const NodePtr& lhs, const NodePtr& rhs);

}  // namespace cds::ir
