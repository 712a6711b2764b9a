#pragma once

// Small type helpers shared by the checks, and the text of expressions and types
// in messages. They never throw and accept null types, since the verifier must
// survive any output.

#include <string>

#include "ir/expr.h"
#include "ir/type.h"

namespace cds::verify {

// The back-reference of a DistributedTensorType, null for any other type.
const ir::WindowBuffer* WindowBufferOf(const ir::TypePtr& type);

// Whether a window_buffer appears anywhere in the type (tuple elements included).
bool ContainsWindowBuffer(const ir::TypePtr& type);

// Structural type equality where back-references must be pointer-equal. Structural
// equality alone maps two distinct but equal-looking WindowBuffers onto each other,
// which is exactly the sharing bug this has to see.
bool TypesAgree(const ir::TypePtr& a, const ir::TypePtr& b);

// Types and expressions in messages, as the text format writes them
// (`pld.DistributedTensor[[256], pl.FP32]`, `256 * 4`), by the printer.
std::string TypeText(const ir::TypePtr& type);
std::string ExprText(const ir::ExprPtr& expr);
// What a call calls: "self.chip_orch" or "pld.tensor.allreduce".
std::string CalleeText(const ir::Call& call);

}  // namespace cds::verify
