#include "ir/op_registry.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/error.h"
#include "ir/structural_equal.h"

namespace cds::ir {

namespace {

using Args = std::span<const ExprPtr>;
using KwargSpan = std::span<const Kwarg>;

const DistributedTensorType* AsDist(const ExprPtr& e) {
  if (!HasTypeKind(e, NodeKind::kDistributedTensorType)) return nullptr;
  return static_cast<const DistributedTensorType*>(e->type.get());
}

// The kinds of value a collective's argument may be, as PyPTO's type deduction
// states them (the same wherever the call stands: host orchestrator, chip
// orchestrator or kernel). An argument of unknown type (the result of an opaque
// call in a whole program) is let through.
enum class Accepts {
  kWindow,       // a pld.DistributedTensor (a window view, or a parameter of that type)
  kInt32Window,  // the same, with INT32 elements (signals, receive counts)
  kTensor,       // a pl.Tensor or a pld.DistributedTensor (a local input)
  kInt32Tensor,  // the same, with INT32 elements (send counts)
};

// The argument's element type; none when its type is unknown.
std::optional<DataType> RequireArg(std::string_view op, const char* role, const ExprPtr& e,
                                   const Span& span, Accepts accepts) {
  if (HasTypeKind(e, NodeKind::kUnknownType)) return std::nullopt;
  const NodeKind k = e->type->kind();
  const bool local_ok = accepts == Accepts::kTensor || accepts == Accepts::kInt32Tensor;
  DataType dtype;
  if (k == NodeKind::kDistributedTensorType) {
    dtype = static_cast<const DistributedTensorType&>(*e->type).dtype;
  } else if (local_ok && k == NodeKind::kTensorType) {
    dtype = static_cast<const TensorType&>(*e->type).dtype;
  } else {
    throw ValueError(fmt::format("{}: {} must be {}", op, role,
                                 local_ok ? "a pl.Tensor or a pld.DistributedTensor"
                                          : "a pld.DistributedTensor window view"),
                     span);
  }
  const bool int32 = accepts == Accepts::kInt32Window || accepts == Accepts::kInt32Tensor;
  if (int32 && dtype != DataType::kInt32) {
    throw ValueError(fmt::format("{}: {} must be an INT32 {}, got {}", op, role,
                                 local_ok ? "pl.Tensor or pld.DistributedTensor" : "window view",
                                 DataTypeName(dtype)),
                     span);
  }
  return dtype;
}

// PyPTO's allreduce deducer takes FP16 and FP32 data only, wherever it is called.
void RequireReducibleData(std::string_view op, std::optional<DataType> data, const Span& span) {
  if (data && *data != DataType::kFP16 && *data != DataType::kFP32) {
    throw ValueError(fmt::format("{}: data must be FP16 or FP32, got {}", op, DataTypeName(*data)),
                     span);
  }
}

// allgather and all_to_all(_v) copy the input into the target element for element.
void RequireSameDType(std::string_view op, std::optional<DataType> input,
                      std::optional<DataType> target, const Span& span) {
  if (input && target && *input != *target) {
    throw ValueError(fmt::format("{}: target dtype {} must match input dtype {}", op,
                                 DataTypeName(*target), DataTypeName(*input)),
                     span);
  }
}

using Dims = NodeList<ExprPtr>;

// The shape of a tensor or window argument; null when its type is unknown.
const Dims* ShapeOf(const ExprPtr& e) {
  switch (e->type->kind()) {
    case NodeKind::kTensorType:
      return &static_cast<const TensorType&>(*e->type).shape;
    case NodeKind::kDistributedTensorType:
      return &static_cast<const DistributedTensorType&>(*e->type).shape;
    default:
      return nullptr;
  }
}

std::optional<int64_t> ConstDim(const ExprPtr& d) {
  if (d && d->kind() == NodeKind::kConstInt) return static_cast<const ConstInt&>(*d).value;
  return std::nullopt;
}

void Require2D(std::string_view op, const char* role, const Dims* shape, const char* form,
               const Span& span) {
  if (shape && shape->size() != 2) {
    throw ValueError(
        fmt::format("{}: {} must be 2-D {}, got {} dims", op, role, form, shape->size()), span);
  }
}

// The element count of a row (dim 1) is the same on both sides of the copy.
void RequireSameSize(std::string_view op, const Dims* input, const Dims* target, const Span& span) {
  if (input && target && input->size() == 2 && target->size() == 2 &&
      !DimsEqual((*input)[1], (*target)[1])) {
    throw ValueError(fmt::format("{}: target SIZE (dim 1) must equal input SIZE", op), span);
  }
}

// PyPTO's parser rejects one expression passed as both input and target: the op
// copies from one buffer into another.
void RequireDistinctBuffers(std::string_view op, Args a, const Span& span) {
  if (a[0].get() == a[1].get()) {
    throw ValueError(
        fmt::format("{}: input and target must be different buffers, got the same one twice", op),
        span);
  }
}

// A signal of one slot per rank: [NR, 1], or [NR] where `rank1_ok`. Returns NR when
// it is a constant.
std::optional<int64_t> RequireRowsSignal(std::string_view op, const char* role, const ExprPtr& e,
                                         const Span& span, bool rank1_ok) {
  const Dims* shape = ShapeOf(e);
  if (!shape) return std::nullopt;
  if (shape->size() == 1 && rank1_ok) return ConstDim((*shape)[0]);
  if (shape->size() != 2) {
    throw ValueError(fmt::format("{}: {} must be {}[NR, 1], got {} dims", op, role,
                                 rank1_ok ? "[NR] or " : "2-D ", shape->size()),
                     span);
  }
  const auto second = ConstDim((*shape)[1]);
  if (!second || *second != 1) {
    throw ValueError(fmt::format("{}: {} second dim must be 1", op, role), span);
  }
  return ConstDim((*shape)[0]);
}

// allgather, all_to_all and all_to_all_v copy rows of SIZE elements from a local
// input (a tensor or a window) into a target window: both 2-D, of one SIZE and one
// element type.
struct CopyOperands {
  const Dims* input = nullptr;  // null when the type is unknown
  const Dims* target = nullptr;
};
CopyOperands RequireCopyOperands(std::string_view op, Args a, const char* input_form,
                                 const char* target_form, const Span& span) {
  const auto input = RequireArg(op, "input", a[0], span, Accepts::kTensor);
  const auto target = RequireArg(op, "target", a[1], span, Accepts::kWindow);
  const CopyOperands c{ShapeOf(a[0]), ShapeOf(a[1])};
  Require2D(op, "input", c.input, input_form, span);
  Require2D(op, "target", c.target, target_form, span);
  RequireSameDType(op, input, target, span);
  RequireSameSize(op, c.input, c.target, span);
  return c;
}

// The signal's rank count NR is the first dim of the rows it synchronizes, checked
// where both are constants (each side often takes NR from its own world_size()).
void RequireSignalRanks(std::string_view op, std::optional<int64_t> signal_ranks, const Dims* rows,
                        const char* role, const Span& span) {
  if (!signal_ranks || !rows || rows->size() != 2) return;
  const auto ranks = ConstDim((*rows)[0]);
  if (ranks && *ranks != *signal_ranks) {
    throw ValueError(fmt::format("{}: signal first dim {} must equal {} first dim {} (NR)", op,
                                 *signal_ranks, role, *ranks),
                     span);
  }
}

// all_to_all_v's counts: one INT32 count per rank, NR a constant equal to the
// signal's.
void RequireCountsOfRanks(std::string_view op, const char* role, const ExprPtr& e, int64_t ranks,
                          bool rank1_ok, const Span& span) {
  if (!ShapeOf(e)) return;
  const auto rows = RequireRowsSignal(op, role, e, span, rank1_ok);
  if (!rows || *rows != ranks) {
    throw ValueError(
        fmt::format("{}: {} first dim must be the constant NR = {} (the signal's first dim)", op,
                    role, ranks),
        span);
  }
}

DataType RequireDTypeKwarg(std::string_view op, std::span<const Kwarg> kwargs, const Span& span) {
  const AttrValue* v = FindKwarg(kwargs, "dtype");
  if (!v || !std::holds_alternative<DataType>(*v)) {
    throw ValueError(fmt::format("{}: dtype= must be a data type such as pl.FP32", op), span);
  }
  return std::get<DataType>(*v);
}

const MakeTuple* RequireShape(std::string_view op, const ExprPtr& e, const Span& span) {
  if (!e || e->kind() != NodeKind::kMakeTuple) {
    throw ValueError(fmt::format("{}: expected a shape list such as [256]", op), span);
  }
  const auto* shape = static_cast<const MakeTuple*>(e.get());
  for (const auto& d : shape->elements) {
    if (!d || d->type->kind() != NodeKind::kScalarType ||
        !IsInteger(static_cast<const ScalarType&>(*d->type).dtype)) {
      throw ValueError(fmt::format("{}: shape dimensions must be integer scalars", op), span);
    }
  }
  return shape;
}

// An enum kwarg, when given, names one of `members` (the last part of its
// qualified name: pld.ReduceOp.Sum is Sum).
void RequireEnumKwarg(std::string_view op, std::span<const Kwarg> kwargs, const char* name,
                      std::initializer_list<std::string_view> members, const char* what,
                      const Span& span) {
  const AttrValue* v = FindKwarg(kwargs, name);
  if (!v) return;
  if (!std::holds_alternative<EnumAttr>(*v)) {
    throw ValueError(fmt::format("{}: {}= must be an enum value, {}", op, name, what), span);
  }
  const std::string& q = std::get<EnumAttr>(*v).qualified;
  const std::string_view member = std::string_view(q).substr(q.rfind('.') + 1);
  if (std::find(members.begin(), members.end(), member) == members.end()) {
    throw ValueError(fmt::format("{}: {}= must be {}, got {}", op, name, what, q), span);
  }
}

}  // namespace

OpRegistry::OpRegistry() {
  auto add = [this](OpInfo info, decltype(OpInfo::deduce) deduce) {
    info.deduce = std::move(deduce);
    OpInfo& added = *infos_.emplace_back(std::make_unique<OpInfo>(std::move(info)));
    added.op = MakeNode<const Op>(added.name, &added);
  };
  add({std::string(ops::kAllocWindowBuffer), 1, 1, {"name", "dtype"}, {}},
      [](std::string_view op, Args a, KwargSpan kw, const Span& span) -> TypePtr {
        if (a[0]->kind() == NodeKind::kMakeTuple) {
          RequireShape(op, a[0], span);
          RequireDTypeKwarg(op, kw, span);
        } else {
          if (FindKwarg(kw, "dtype")) {
            throw ValueError(fmt::format("{}: dtype= is only allowed with a shape list", op), span);
          }
          const auto* t = a[0]->type->kind() == NodeKind::kScalarType
                              ? static_cast<const ScalarType*>(a[0]->type.get())
                              : nullptr;
          if (!t || !IsInteger(t->dtype)) {
            throw ValueError(fmt::format("{}: size must be an integer scalar (bytes)", op), span);
          }
        }
        const AttrValue* name = FindKwarg(kw, "name");
        if (name && !std::holds_alternative<std::string>(*name)) {
          throw ValueError(fmt::format("{}: name= must be a string", op), span);
        }
        return PtrType::Get();
      });
  add({std::string(ops::kWindow), 2, 2, {"dtype"}, {"dtype"}},
      [](std::string_view op, Args a, KwargSpan kw, const Span& span) -> TypePtr {
        if (!HasTypeKind(a[0], NodeKind::kUnknownType) &&
            a[0]->type->kind() != NodeKind::kPtrType) {
          throw ValueError(
              fmt::format("{}: first argument must be a window buffer pointer (pl.Ptr)", op), span);
        }
        const MakeTuple* shape = RequireShape(op, a[1], span);
        return DistTensorTy(shape->elements, RequireDTypeKwarg(op, kw, span));
      });
  add({std::string(ops::kWorldSize), 0, 0, {}, {}},
      [](std::string_view, Args, KwargSpan, const Span&) -> TypePtr {
        return ScalarTy(DataType::kIndex);
      });
  // mode= ("ring", "mesh") picks PyPTO's algorithm; it does not change the type.
  add({std::string(ops::kAllReduce), 1, 2, {"op", "core_num", "mode"}, {}},
      [](std::string_view op, Args a, KwargSpan kw, const Span& span) -> TypePtr {
        RequireReducibleData(op, RequireArg(op, "data", a[0], span, Accepts::kWindow), span);
        if (a.size() == 2) RequireArg(op, "signal", a[1], span, Accepts::kInt32Window);
        RequireEnumKwarg(op, kw, "op", {"Sum", "Max", "Min", "Prod"},
                         "pld.ReduceOp.Sum, Max, Min or Prod", span);
        const AttrValue* cn = FindKwarg(kw, "core_num");
        if (cn && (!std::holds_alternative<int64_t>(*cn) || std::get<int64_t>(*cn) <= 0)) {
          throw ValueError(fmt::format("{}: core_num= must be a positive integer", op), span);
        }
        return a[0]->type;
      });
  add({std::string(ops::kBroadcast), 2, 2, {"root"}, {"root"}},
      [](std::string_view op, Args a, KwargSpan kw, const Span& span) -> TypePtr {
        RequireArg(op, "data", a[0], span, Accepts::kWindow);
        RequireArg(op, "signal", a[1], span, Accepts::kInt32Window);
        const AttrValue* root = FindKwarg(kw, "root");
        if (!std::holds_alternative<int64_t>(*root) || std::get<int64_t>(*root) < 0) {
          throw ValueError(fmt::format("{}: root= must be a non-negative integer", op), span);
        }
        return a[0]->type;
      });
  add({std::string(ops::kReduceScatter), 2, 2, {"op"}, {}},
      [](std::string_view op, Args a, KwargSpan kw, const Span& span) -> TypePtr {
        RequireArg(op, "data", a[0], span, Accepts::kWindow);
        RequireArg(op, "signal", a[1], span, Accepts::kInt32Window);
        // PyPTO lowers the sum only (Max, Min and Prod are not implemented there).
        RequireEnumKwarg(op, kw, "op", {"Sum"}, "pld.ReduceOp.Sum", span);
        if (const auto* t = AsDist(a[0]); t && t->shape.size() != 2) {
          throw ValueError(fmt::format("{}: data must be a 2-D window view", op), span);
        }
        return a[0]->type;
      });
  // The signal comes back, so that `signal = pld.tensor.barrier(signal)` rebinds it.
  add({std::string(ops::kBarrier), 1, 1, {}, {}},
      [](std::string_view op, Args a, KwargSpan, const Span& span) -> TypePtr {
        RequireArg(op, "signal", a[0], span, Accepts::kInt32Window);
        return a[0]->type;
      });
  // allgather, all_to_all and all_to_all_v take (input, target, signal), the last
  // then (send_counts, recv_counts). The input is this rank's local data: a
  // pl.Tensor in a kernel, a staging window on the host. Their operands are 2-D
  // rows of SIZE elements, as PyPTO's deducers state them (src/ir/op/distributed/
  // collective.cpp at e2d0f78), whose DSL takes no keyword argument on them.
  add({std::string(ops::kAllGather), 3, 3, {}, {}},
      [](std::string_view op, Args a, KwargSpan, const Span& span) -> TypePtr {
        RequireDistinctBuffers(op, a, span);
        const CopyOperands c =
            RequireCopyOperands(op, a, "[1, SIZE] (this rank's one chunk)", "[NR, SIZE]", span);
        if (c.input) {
          const auto rows = ConstDim((*c.input)[0]);
          if (rows && *rows != 1) {
            throw ValueError(fmt::format("{}: input must be [1, SIZE] (this rank's one chunk), got "
                                         "first dim {}",
                                         op, *rows),
                             span);
          }
        }
        RequireArg(op, "signal", a[2], span, Accepts::kInt32Window);
        // The barrier has one slot per rank of the target.
        RequireSignalRanks(op, RequireRowsSignal(op, "signal", a[2], span, /*rank1_ok=*/true),
                           c.target, "target", span);
        return a[1]->type;
      });
  add({std::string(ops::kAllToAll), 3, 3, {}, {}},
      [](std::string_view op, Args a, KwargSpan, const Span& span) -> TypePtr {
        RequireDistinctBuffers(op, a, span);
        const CopyOperands c = RequireCopyOperands(op, a, "[NR, SIZE]", "[NR, SIZE]", span);
        if (c.input && c.target) {
          const auto in_rows = ConstDim((*c.input)[0]);
          const auto tg_rows = ConstDim((*c.target)[0]);
          if (in_rows && tg_rows && *in_rows != *tg_rows) {
            throw ValueError(fmt::format("{}: target first dim {} must equal input first dim {}",
                                         op, *tg_rows, *in_rows),
                             span);
          }
        }
        RequireArg(op, "signal", a[2], span, Accepts::kInt32Window);
        RequireSignalRanks(op, RequireRowsSignal(op, "signal", a[2], span, /*rank1_ok=*/true),
                           c.input, "input", span);
        return a[1]->type;
      });
  add({std::string(ops::kAllToAllV), 5, 5, {}, {}},
      [](std::string_view op, Args a, KwargSpan, const Span& span) -> TypePtr {
        const Dims* tg =
            RequireCopyOperands(op, a, "[NR*MAX_RECV, SIZE]", "[NR*MAX_RECV, SIZE]", span).target;
        RequireArg(op, "signal", a[2], span, Accepts::kInt32Window);
        RequireArg(op, "send_counts", a[3], span, Accepts::kInt32Tensor);
        RequireArg(op, "recv_counts", a[4], span, Accepts::kInt32Window);
        // The rank count NR is the signal's first dim, a constant: the target holds
        // NR blocks, and each rank sends and receives one count per rank.
        const auto ranks = RequireRowsSignal(op, "signal", a[2], span, /*rank1_ok=*/false);
        if (!ranks && ShapeOf(a[2])) {
          throw ValueError(
              fmt::format("{}: signal first dim (NR) must be a positive integer constant", op),
              span);
        }
        if (ranks && *ranks <= 0) {
          throw ValueError(
              fmt::format("{}: signal first dim (NR) must be positive, got {}", op, *ranks), span);
        }
        if (ranks) {
          if (tg) {
            const auto rows = ConstDim((*tg)[0]);
            if (!rows) {
              throw ValueError(
                  fmt::format("{}: target first dim (NR*MAX_RECV) must be an integer constant", op),
                  span);
            }
            if (*rows % *ranks != 0) {
              throw ValueError(fmt::format("{}: signal first dim {} (NR) must divide target first "
                                           "dim {}",
                                           op, *ranks, *rows),
                               span);
            }
          }
          RequireCountsOfRanks(op, "send_counts", a[3], *ranks, /*rank1_ok=*/true, span);
          RequireCountsOfRanks(op, "recv_counts", a[4], *ranks, /*rank1_ok=*/false, span);
        }
        return a[1]->type;
      });
  // layout= (ND, DN, NZ, MX_A_ZZ, MX_B_NN: pl.ND or pl.TensorLayout.ND) stamps the
  // result's layout, manual_dep= opts it out of dependency tracking, init_value=
  // pre-fills it; none of them changes what the passes see.
  add({std::string(ops::kTensorCreate),
       1,
       1,
       {"dtype", "layout", "manual_dep", "init_value"},
       {"dtype"}},
      [](std::string_view op, Args a, KwargSpan kw, const Span& span) -> TypePtr {
        RequireEnumKwarg(op, kw, "layout", {"ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN"},
                         "pl.ND, pl.DN, pl.NZ, pl.MX_A_ZZ or pl.MX_B_NN", span);
        const AttrValue* dep = FindKwarg(kw, "manual_dep");
        if (dep && !std::holds_alternative<bool>(*dep)) {
          throw ValueError(fmt::format("{}: manual_dep= must be True or False", op), span);
        }
        const AttrValue* init = FindKwarg(kw, "init_value");
        if (init && !std::holds_alternative<int64_t>(*init) &&
            !std::holds_alternative<double>(*init)) {
          throw ValueError(fmt::format("{}: init_value= must be a number", op), span);
        }
        const MakeTuple* shape = RequireShape(op, a[0], span);
        return TensorTy(shape->elements, RequireDTypeKwarg(op, kw, span));
      });
  for (std::string_view name : {ops::kTensorAdd, ops::kTensorSub, ops::kTensorMul}) {
    add({std::string(name), 2, 2, {}, {}},
        [](std::string_view op, Args a, KwargSpan, const Span& span) -> TypePtr {
          for (const auto& x : a) {
            NodeKind k = x->type->kind();
            if (k != NodeKind::kTensorType && k != NodeKind::kDistributedTensorType &&
                k != NodeKind::kUnknownType) {
              throw ValueError(fmt::format("{}: operands must be tensors", op), span);
            }
          }
          return a[0]->type;
        });
  }
}

const OpRegistry& OpRegistry::Get() {
  static const OpRegistry registry;
  return registry;
}

const OpInfo* OpRegistry::Find(std::string_view name) const {
  for (const auto& info : infos_) {
    if (info->name == name) return info.get();
  }
  return nullptr;
}

OpPtr OpRegistry::GetOp(std::string_view name) const {
  const OpInfo* info = Find(name);
  return info ? info->op : MakeNode<const Op>(std::string(name), nullptr);
}

namespace {

TypePtr CheckAndDeduce(const OpInfo& info, std::span<const ExprPtr> args,
                       std::span<const Kwarg> kwargs, const Span& span) {
  const int n = static_cast<int>(args.size());
  if (n < info.min_args || n > info.max_args) {
    std::string expected = info.min_args == info.max_args
                               ? fmt::format("{}", info.min_args)
                               : fmt::format("{} to {}", info.min_args, info.max_args);
    throw ValueError(fmt::format("{} takes {} positional argument{}, got {}", info.name, expected,
                                 info.max_args == 1 ? "" : "s", n),
                     span);
  }
  for (const auto& a : args) {
    if (!a) throw ValueError(fmt::format("{}: missing argument", info.name), span);
  }
  for (size_t i = 0; i < kwargs.size(); ++i) {
    const std::string& k = kwargs[i].first;
    if (std::find(info.allowed_kwargs.begin(), info.allowed_kwargs.end(), k) ==
        info.allowed_kwargs.end()) {
      throw ValueError(fmt::format("{} got an unexpected keyword argument '{}'", info.name, k),
                       span);
    }
    for (size_t j = 0; j < i; ++j) {
      if (kwargs[j].first == k)
        throw ValueError(fmt::format("{}: keyword argument '{}' repeated", info.name, k), span);
    }
  }
  for (const auto& k : info.required_kwargs) {
    if (!FindKwarg(kwargs, k))
      throw ValueError(fmt::format("{} requires keyword argument '{}='", info.name, k), span);
  }
  return info.deduce(info.name, args, kwargs, span);
}

}  // namespace

CallPtr MakeOpCall(std::string_view op_name, NodeList<ExprPtr> args, Kwargs kwargs, Span span) {
  const OpInfo* info = OpRegistry::Get().Find(op_name);
  if (!info) throw ValueError(fmt::format("unknown op '{}'", op_name), span);
  TypePtr t = CheckAndDeduce(*info, args, kwargs, span);
  return WithSpan(
      MakeNode<Call>(info->op, std::move(args), std::move(kwargs), ExprAttrList{}, std::move(t)),
      span);
}

CallPtr MakeOpCallWithType(std::string_view op_name, NodeList<ExprPtr> args, Kwargs kwargs,
                           TypePtr result_type, Span span, ExprAttrs attrs) {
  const OpInfo* info = OpRegistry::Get().Find(op_name);
  if (info) CheckAndDeduce(*info, args, kwargs, span);
  return WithSpan(MakeNode<Call>(OpRegistry::Get().GetOp(op_name), std::move(args),
                                 std::move(kwargs), std::move(attrs), std::move(result_type)),
                  span);
}

TypePtr DeduceCallType(const Call& call) {
  if (!call.op || call.op->kind() != NodeKind::kOp) return nullptr;
  const auto& op = static_cast<const Op&>(*call.op);
  if (!op.info) return nullptr;
  return CheckAndDeduce(*op.info, call.args, call.kwargs, call.span());
}

}  // namespace cds::ir
