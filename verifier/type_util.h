#pragma once

// Small type helpers shared by the checks. They never throw and accept null or
// ill-formed types, since the verifier must survive any output.

#include <string>

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

// "DistributedTensor[[256], FP32, window_buffer=buf]" for messages.
std::string DescribeType(const ir::TypePtr& type);
std::string DescribeExpr(const ir::ExprPtr& expr);

}  // namespace cds::verify
