#pragma once

// An alloc's byte size as the verifier evaluates it, independently of how the
// pass builds a WindowBuffer's size: both sides are folded to one normal form,
// a constant times the factors that do not fold (a Var such as world_size's, a
// call, any other expression), and compared there. `256 * 4`, `1024` and
// `4 * 256` are one size; `n * 4` and `m * 4` are two.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace cds::verify {

struct ByteSize {
  int64_t constant = 1;
  std::vector<ir::ExprPtr> factors;  // in the order met; compared as a multiset
};

// The normal form of an integer expression.
ByteSize FoldByteSize(const ir::ExprPtr& size);

// What a `pld.tensor.alloc_window_buffer` call asks for: its size argument, or
// for the shape form the product of the dims times the byte width of its dtype=.
// nullopt (with `why` set) when the call has no size the verifier can read.
std::optional<ByteSize> AllocByteSize(const ir::Call& alloc, std::string* why);

bool SameByteSize(const ByteSize& a, const ByteSize& b);

// "1024" or "4 * n" (the constant first), for messages.
std::string ByteSizeText(const ByteSize& size);

}  // namespace cds::verify
