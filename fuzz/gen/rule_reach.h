#pragma once

// Which rules and errors of docs/pass.md a generated program exercises: the
// measure behind the rule-coverage table of docs/generators.md (`cds-gen --rules`).
// It reads the program's model and its expectation; it judges nothing.

#include <bitset>
#include <string_view>

#include "fuzz/gen/generate.h"

namespace cds::fuzz {

// X(enum name, the rule as docs/pass.md states it). Errors are the invalid kinds'
// rows of docs/pass.md's error tables, in CDS_GEN_INVALID_KINDS order.
#define CDS_GEN_RULES(X)                                                                      \
  X(DeviceAbsent, "device= absent: no coverage, no error")                                    \
  X(DeviceConstant, "device=N: {N}")                                                          \
  X(DeviceWorldSizeLoop, "device= a pl.range(pld.world_size()) variable: ALL")                \
  X(DeviceConstantRange, "device= a pl.range(a, b) variable: {a..b-1}")                       \
  X(DeviceEmptyRange, "device= a variable of an empty range: no device")                      \
  X(DeviceOuterLoopVar, "device= the variable of an enclosing, not the innermost, loop")      \
  X(DispatchNotChipOrchestrator, "a call of a Graph or InCore function adds no coverage")     \
  X(SizeLiteral, "window buffer size: an integer literal")                                    \
  X(SizeBytes, "window buffer size: N * pl.DT.get_byte()")                                    \
  X(SizeWorldSize, "window buffer size: a product with the world size")                       \
  X(SizeShapeConstant, "window buffer size: a shape of constant dims times the element size") \
  X(SizeShapeSymbolic, "window buffer size: a shape with a non-constant dim")                 \
  X(MergeUnion, "coverage merge: the union of two device sets")                               \
  X(MergeAllAbsorbs, "coverage merge: ALL absorbs a device set")                              \
  X(InheritAllReduce, "hand-over: allreduce data -> signal")                                  \
  X(InheritBroadcast, "hand-over: broadcast data -> signal")                                  \
  X(InheritReduceScatter, "hand-over: reduce_scatter data -> signal")                         \
  X(InheritAllGather, "hand-over: allgather target -> signal")                                \
  X(InheritAllToAll, "hand-over: all_to_all target -> signal")                                \
  X(InheritAllToAllV, "hand-over: all_to_all_v target -> signal and recv_counts")             \
  X(OnlyInherited, "an alloc whose coverage is only inherited")                               \
  X(BarrierKeepsOwn, "barrier: the signal keeps its own coverage")                            \
  X(ClusterSharedScope, "clustering: two allocs of one device set share a scope")             \
  X(ClusterSeveralScopes, "clustering: several scopes in one host")                           \
  X(ScopeNamesPerHost, "scope names restart in each host orchestrator")                       \
  X(ViewAlias, "an alias w = v is a view of v's alloc")                                       \
  X(ViewMany, "several views of one alloc share its WindowBuffer")                            \
  X(ViewInPlaceResult, "an in-place collective result is a view of its alloc")                \
  X(ViewRebound, "a view name bound again")                                                   \
  X(ViewInLoopInit, "an element of a view in init_values is rewritten")                       \
  X(ViewInOpaqueCall, "views inside an opaque call add no coverage")                          \
  X(ViewInTuple, "views inside a tuple add no coverage")                                      \
  X(CollectiveInScope, "a synthesized signal inside a generic scope")                         \
  X(ChipCollectiveUntouched, "collectives in a chip orchestrator are left alone")             \
  X(KernelCollectiveUntouched, "collectives in an InCore kernel are left alone")              \
  X(SynthesizeSignal, "SynthesizeAllReduceSignals: a signal-less allreduce gets a signal")    \
  X(SynthesizeCoreNum, "SynthesizeAllReduceSignals: the signal is sized by core_num=")        \
  X(SynthesizeReturnLifted, "SynthesizeAllReduceSignals: return allreduce(...) is lifted")    \
  X(SynthesizeNumbering, "SynthesizeAllReduceSignals: numbering across hosts in name order")  \
  X(SynthesizeNameTaken, "SynthesizeAllReduceSignals: a synthesized name already taken")

enum class Rule : uint8_t {
#define CDS_GEN_RULE_ENUM(N, S) k##N,
  CDS_GEN_RULES(CDS_GEN_RULE_ENUM)
#undef CDS_GEN_RULE_ENUM
      kCount
};
inline constexpr size_t kNumRules = static_cast<size_t>(Rule::kCount);
using RuleSet = std::bitset<kNumRules>;

std::string_view RuleText(Rule r);

// The rules a valid program exercises (none for an invalid one, whose error is its
// kind).
RuleSet RulesReached(const GeneratedProgram& p);

}  // namespace cds::fuzz
