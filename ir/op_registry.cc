#include "ir/op_registry.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/error.h"

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

void RequireEnumKwarg(std::string_view op, std::span<const Kwarg> kwargs, const char* name,
                      const Span& span) {
  const AttrValue* v = FindKwarg(kwargs, name);
  if (v && !std::holds_alternative<EnumAttr>(*v)) {
    throw ValueError(
        fmt::format("{}: {}= must be an enum value such as pld.ReduceOp.Sum", op, name), span);
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
        RequireEnumKwarg(op, kw, "op", span);
        const AttrValue* cn = FindKwarg(kw, "core_num");
        if (cn && !std::holds_alternative<int64_t>(*cn)) {
          throw ValueError(fmt::format("{}: core_num= must be an integer", op), span);
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
        RequireEnumKwarg(op, kw, "op", span);
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
  // pl.Tensor in a kernel, a staging window on the host. defer=True (allgather)
  // completes the gather later, in a deps= successor task.
  auto into_target = [](std::string_view op, Args a, KwargSpan, const Span& span) -> TypePtr {
    const auto input = RequireArg(op, "input", a[0], span, Accepts::kTensor);
    const auto target = RequireArg(op, "target", a[1], span, Accepts::kWindow);
    RequireSameDType(op, input, target, span);
    RequireArg(op, "signal", a[2], span, Accepts::kInt32Window);
    if (a.size() == 5) {
      RequireArg(op, "send_counts", a[3], span, Accepts::kInt32Tensor);
      RequireArg(op, "recv_counts", a[4], span, Accepts::kInt32Window);
    }
    return a[1]->type;
  };
  add({std::string(ops::kAllGather), 3, 3, {"defer"}, {}}, into_target);
  add({std::string(ops::kAllToAll), 3, 3, {}, {}}, into_target);
  add({std::string(ops::kAllToAllV), 5, 5, {"core_num"}, {}}, into_target);
  add({std::string(ops::kTensorCreate), 1, 1, {"dtype"}, {"dtype"}},
      [](std::string_view op, Args a, KwargSpan kw, const Span& span) -> TypePtr {
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
