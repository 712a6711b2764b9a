#include "verifier/fast_equal.h"

#include "ir/structural_equal.h"

namespace cds::verify {

bool FastStructuralEqual(const ir::NodePtr& a, const ir::NodePtr& b, bool ignore_window_buffers) {
  ir::EqualOptions options;
  options.ignore_window_buffers = ignore_window_buffers;
  return ir::StructuralEqual(a, b, options);
}

}  // namespace cds::verify
