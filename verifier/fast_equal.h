#pragma once

#include "ir/node.h"

namespace cds::verify {

// ir::StructuralEqual, optionally skipping DistributedTensorType.window_buffer: the
// same verdict as comparing after erasing every back-reference, without rewriting.
bool FastStructuralEqual(const ir::NodePtr& a, const ir::NodePtr& b,
                         bool ignore_window_buffers = false);

}  // namespace cds::verify
