#pragma once

// How often the generator picks each construct: relative weights, compared only
// within one table. docs/generators.md quotes these tables; changing a number
// changes the program of every seed.

#include <array>

namespace cds::fuzz {

// Generator::Step: one action per statement, each weighed while its condition holds
// (an action whose condition fails has weight 0). X(field, weight); the condition
// of each is stated where it is used (Generator::ActionWeights) and in
// docs/generators.md, whose table the test GenWeights.DocsQuoteTheStepTable
// compares with this one.
#define CDS_GEN_STEP_WEIGHTS(X) \
  X(first_alloc, 40)            \
  X(alloc, 6)                   \
  X(dispatch, 14)               \
  X(view, 6)                    \
  X(collective, 10)             \
  X(alias, 4)                   \
  X(rebind, 4)                  \
  X(top_loop, 10)               \
  X(nested_loop, 10)            \
  X(while_loop, 3)              \
  X(if_else, 4)                 \
  X(tensor, 3)                  \
  X(scalar, 3)                  \
  X(name_collision, 3)          \
  X(scope, 4)                   \
  X(opaque_call, 3)             \
  X(subscript_read, 3)          \
  X(subscript_assign, 3)        \
  X(unpack, 3)                  \
  X(tuple, 4)                   \
  X(constant, 1)

struct StepWeights {
#define CDS_GEN_STEP_WEIGHT_FIELD(F, W) int F = W;
  CDS_GEN_STEP_WEIGHTS(CDS_GEN_STEP_WEIGHT_FIELD)
#undef CDS_GEN_STEP_WEIGHT_FIELD
};
inline constexpr StepWeights kStepWeights{};

// Generator::GenDispatch: the callee of a dispatch.
inline constexpr int kChipCalleeWeight = 6;  // a chip orchestrator
inline constexpr int kGraphOrInCoreCalleeWeight = 2;

// Generator::MakeCollectiveKernel: each collective call of an InCore kernel, in
// the order all_to_all, all_to_all_v (needs the count parameters), allgather,
// allreduce, reduce_scatter, broadcast, barrier.
inline constexpr std::array<int, 7> kKernelCollectiveWeights = {3, 3, 2, 1, 1, 1, 1};

// Generator::TupleExpr: each element of a tuple, in the order view, scalar or tensor,
// tuple value, constant, nested tuple (above the innermost level only).
inline constexpr std::array<int, 5> kTupleElementWeights = {3, 2, 1, 2, 1};

}  // namespace cds::fuzz
