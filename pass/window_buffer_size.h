#pragma once

// The size of the WindowBuffer an alloc makes, as an IR expression in bytes.

#include "ir/expr.h"

namespace cds::pass {

// `pld.tensor.alloc_window_buffer(size)`: its size argument, as written.
// `pld.tensor.alloc_window_buffer([d0, d1, ...], dtype=T)`: d0 * d1 * ... * bytes(T),
// the product built left to right (`(d0 * d1) * bytes(T)`; just bytes(T) for an
// empty shape), bytes(T) an INT64 constant.
// Null when `alloc` is no alloc, has no argument, or has a shape and no dtype.
// Throws cds::ValueError (no span) when a dimension is not a scalar.
ir::ExprPtr WindowBufferSizeBytes(const ir::Call& alloc);

}  // namespace cds::pass
