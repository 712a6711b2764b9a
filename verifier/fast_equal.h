#pragma once

#include "ir/node.h"

namespace cds::verify {

// Structural equality with the semantics of ir::StructuralEqual (Var-likes matched
// through a bijection, spans and name hints ignored) but without building a
// difference path, which makes it several times faster on large programs. Callers
// use ir::StructuralEqualWhere only once this says "different", to get the path.
// With `ignore_window_buffers`, DistributedTensorType.window_buffer is skipped: the
// same verdict as comparing after erasing every back-reference, without rewriting.
bool FastStructuralEqual(const ir::NodePtr& a, const ir::NodePtr& b,
                         bool ignore_window_buffers = false);

}  // namespace cds::verify
