#pragma once

// What the two renderers of render.h (render_text.cc, render_ir.cc) must spell alike.

namespace cds::fuzz::detail {

// The reduction every generated allreduce and reduce_scatter names.
inline constexpr const char* kReduceSum = "pld.ReduceOp.Sum";

}  // namespace cds::fuzz::detail
