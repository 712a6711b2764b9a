#pragma once

// Random well-formed IR for the structural equality/hash properties, and the
// transformations the properties compare against (renaming deep copy, a copy that
// breaks WindowBuffer sharing, a single-constant mutation).
//
// Programs are built from a vector of choices rather than from nested RapidCheck
// generators: shrinking the vector (shorter, smaller numbers) shrinks the program,
// and an exhausted vector always picks the smallest alternative, so every vector
// yields a finite, well-formed program.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/function.h"

namespace cds::ir::irgen {

class Choices {
 public:
  explicit Choices(std::vector<uint32_t> values) : values_(std::move(values)) {}
  // A value in [0, bound); 0 once the vector is used up.
  uint32_t Next(uint32_t bound);
  bool Coin() { return Next(2) == 1; }

 private:
  std::vector<uint32_t> values_;
  size_t pos_ = 0;
};

// A whole program: dynamic dims, one to three functions with typed params, and
// bodies mixing scalar code, allocs, views (sharing a WindowBuffer or not),
// dispatches, opaque calls, loops (with iter_args), ifs, whiles, scopes.
ProgramPtr GenProgram(Choices& c);
// One function body; for pairs of small IRs that are sometimes equal.
StmtPtr GenBody(Choices& c);

// A copy in which no node object is shared with the input, every Var-like object
// is replaced by a fresh one whose name hint starts with `prefix`, and two uses of
// one Var-like stay two uses of one (new) Var-like.
NodePtr RenamedCopy(const NodePtr& n, const std::string& prefix);
// Like RenamedCopy, but every occurrence of a WindowBuffer becomes its own object.
NodePtr UnsharedWindowsCopy(const NodePtr& n);
// Whether some WindowBuffer is reached twice by a walk that, like structural
// equality, descends into a Var-like's fields only the first time it meets it.
bool HasRepeatedWindowBuffer(const NodePtr& n);

// The number of ConstInt nodes an IRMutator reaches in `n`.
size_t CountReachableInts(const NodePtr& n);
// `n` with the k-th reachable ConstInt (mutator order) replaced by value + 1.
NodePtr BumpInt(const NodePtr& n, size_t k);

}  // namespace cds::ir::irgen
