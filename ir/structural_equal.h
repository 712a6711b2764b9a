#pragma once

#include <span>
#include <string>
#include <vector>

#include "ir/node.h"
#include "ir/type.h"

namespace cds::ir {

// Where two IRs first differ, for readable test failures.
struct EqualityResult {
  bool equal = true;
  std::string path;    // e.g. "functions[host_orch].body.stmts[3].value.args[1]"
  std::string reason;  // e.g. "ConstInt.value: 256 vs 512"
  explicit operator bool() const { return equal; }
};

// Structural equality as TVM and PyPTO define it: Var-like nodes (Var, IterArg,
// WindowBuffer) are matched through a bijective mapping established where they
// are first seen (their definition, or first use for free variables); later
// occurrences must follow the mapping. Everything else compares by value; spans
// and name hints are ignored. Two views sharing one WindowBuffer therefore only
// equal two views that share one.
struct EqualOptions {
  // Skip DistributedTensorType.window_buffer: the verdict of comparing after erasing
  // every back-reference, without rewriting (the verifier's relational mode).
  bool ignore_window_buffers = false;
};
bool StructuralEqual(const NodePtr& lhs, const NodePtr& rhs, const EqualOptions& options = {});
EqualityResult StructuralEqualWhere(const NodePtr& lhs, const NodePtr& rhs,
                                    const EqualOptions& options = {});

// A type's dims (and memref / tensor_view exprs) compared structurally: the
// parser's annotation check and the verifier's type comparisons meet many
// constant dims, which are decided here without the general comparer's setup.
bool DimsEqual(const ExprPtr& a, const ExprPtr& b);
bool ShapesEqual(std::span<const ExprPtr> a, std::span<const ExprPtr> b);

}  // namespace cds::ir
