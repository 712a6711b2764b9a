#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expr.h"

namespace cds::ir {

// What the registry knows about one modelled op: arity, keyword arguments and
// how to deduce the result type. Anything else named pl.* / pld.* is an opaque op.
struct OpInfo {
  std::string name;
  int min_args = 0;
  int max_args = 0;
  std::vector<std::string> allowed_kwargs;
  std::vector<std::string> required_kwargs;
  // Deduces the result type from checked arguments; throws ValueError(span) when
  // argument types are wrong. `op` is the op's name, for the messages.
  std::function<TypePtr(std::string_view op, std::span<const ExprPtr> args,
                        std::span<const Kwarg> kwargs, const Span& span)>
      deduce = nullptr;
  OpPtr op = nullptr;  // the one Op node of this op, set by the registry
};

// Op names used across the project.
namespace ops {
inline constexpr std::string_view kAllocWindowBuffer = "pld.tensor.alloc_window_buffer";
inline constexpr std::string_view kWindow = "pld.tensor.window";
inline constexpr std::string_view kWorldSize = "pld.system.world_size";
inline constexpr std::string_view kAllReduce = "pld.tensor.allreduce";
inline constexpr std::string_view kBroadcast = "pld.tensor.broadcast";
inline constexpr std::string_view kReduceScatter = "pld.tensor.reduce_scatter";
inline constexpr std::string_view kBarrier = "pld.tensor.barrier";
inline constexpr std::string_view kAllGather = "pld.tensor.allgather";
inline constexpr std::string_view kAllToAll = "pld.tensor.all_to_all";
inline constexpr std::string_view kAllToAllV = "pld.tensor.all_to_all_v";
inline constexpr std::string_view kTensorCreate = "pl.tensor.create";
inline constexpr std::string_view kTensorAdd = "pl.tensor.add";
inline constexpr std::string_view kTensorSub = "pl.tensor.sub";
inline constexpr std::string_view kTensorMul = "pl.tensor.mul";
}  // namespace ops

class OpRegistry {
 public:
  static const OpRegistry& Get();
  const OpInfo* Find(std::string_view name) const;
  // The shared Op node of a registered op, or a fresh opaque Op for any other name.
  OpPtr GetOp(std::string_view name) const;

 private:
  OpRegistry();
  std::vector<std::unique_ptr<OpInfo>> infos_;
};

// Builds a call of a registered op: checks arity, unknown and missing kwargs and
// argument types, and deduces the result type. Throws ValueError at `span`.
CallPtr MakeOpCall(std::string_view op_name, NodeList<ExprPtr> args, Kwargs kwargs = {},
                   Span span = {});

// Same checks, but keeps `result_type` as recorded (pl._dump.call and the pass's
// re-minted calls), and takes the call's attrs.
CallPtr MakeOpCallWithType(std::string_view op_name, NodeList<ExprPtr> args, Kwargs kwargs,
                           TypePtr result_type, Span span = {}, ExprAttrs attrs = {});

// Re-deduces the result type of an op call from its current args and kwargs.
// Null for opaque ops and cross-function calls; throws ValueError on bad types.
TypePtr DeduceCallType(const Call& call);

}  // namespace cds::ir
