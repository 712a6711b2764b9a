#pragma once

#include <cstdint>

#include "ir/node.h"

namespace cds::ir {

// Consistent with StructuralEqual: equal IRs hash equal. Order-sensitive; a
// Var-like node is hashed by its first-sight index (plus, at first sight, its
// fields), never by address or name.
uint64_t StructuralHash(const NodePtr& node);

// StructuralEqual(lhs, rhs) and, when they are equal, StructuralHash(lhs) and
// StructuralHash(rhs), in one simultaneous walk over both IRs (each node is loaded
// once instead of three times). Both hashes are really computed, each from its own
// side's nodes and its own first-sight indices, with the very function
// StructuralHash uses: an equal verdict with different hashes still exposes a hash
// that is inconsistent with equality. The hashes are unspecified when !equal (the
// walk stops at the first difference; call StructuralEqualWhere for its path).
struct EqualAndHashes {
  bool equal = false;
  uint64_t lhs_hash = 0;
  uint64_t rhs_hash = 0;
};
EqualAndHashes StructuralEqualAndHash(const NodePtr& lhs, const NodePtr& rhs);

}  // namespace cds::ir
