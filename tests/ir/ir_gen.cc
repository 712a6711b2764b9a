#include "tests/ir/ir_gen.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/field_values.h"
#include "ir/mutator.h"

namespace cds::ir::irgen {

uint32_t Choices::Next(uint32_t bound) {
  if (bound <= 1 || pos_ >= values_.size()) return 0;
  return values_[pos_++] % bound;
}

namespace {

constexpr DataType kScalarDTypes[] = {DataType::kInt64, DataType::kIndex, DataType::kInt32,
                                      DataType::kBool, DataType::kFP32};
constexpr DataType kTensorDTypes[] = {DataType::kFP32, DataType::kInt32, DataType::kFP16,
                                      DataType::kBF16};
constexpr const char* kFunctionNames[] = {"host_orch", "chip_orch", "kernel"};
constexpr int kMaxDepth = 3;

struct Alloc {
  VarPtr ptr;
  ExprPtr size;
  std::vector<WindowBufferPtr> windows;  // WindowBuffers minted for this alloc so far
};

// What is in scope at a program point. Copied on entry to a nested block so that
// definitions inside it stay invisible after it (the IR is well-formed).
struct Scope {
  std::vector<VarPtr> scalars;  // scalar-typed Vars (incl. loop vars, dynamic dims)
  std::vector<VarPtr> tensors;  // tensor-typed Vars (views, params, results)
  std::vector<Alloc> allocs;
};

class Generator {
 public:
  explicit Generator(Choices& c) : c_(c) {}

  ProgramPtr MakeProgram() {
    std::vector<VarPtr> dyn;
    if (c_.Coin()) dyn.push_back(Fresh("NR", ScalarTy(DataType::kIndex)));
    int n_funcs = 1 + static_cast<int>(c_.Next(3));
    std::vector<FunctionPtr> fns;
    for (int i = 0; i < n_funcs; ++i) {
      Scope s;
      s.scalars = dyn;
      fns.push_back(MakeFunction(kFunctionNames[i], s));
    }
    return ir::MakeNode<const ir::Program>("P", std::move(dyn), std::move(fns));
  }

  StmtPtr Body() {
    Scope s;
    return Block(s, 0);
  }

 private:
  VarPtr Fresh(const std::string& base, TypePtr t) {
    return MakeVar(fmt::format("{}{}", base, counter_++), std::move(t));
  }

  template <typename T, size_t N>
  const T& Pick(const T (&arr)[N]) {
    return arr[c_.Next(N)];
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[c_.Next(static_cast<uint32_t>(v.size()))];
  }

  FunctionPtr MakeFunction(const std::string& name, Scope s) {
    std::vector<VarPtr> params;
    std::vector<ParamDirection> dirs;
    int n_params = static_cast<int>(c_.Next(3));
    for (int i = 0; i < n_params; ++i) {
      bool scalar = c_.Coin();
      VarPtr p = Fresh("p", scalar ? ScalarTy(Pick(kScalarDTypes)) : AnyType(s, 0));
      (scalar ? s.scalars : s.tensors).push_back(p);
      params.push_back(p);
      dirs.push_back(static_cast<ParamDirection>(c_.Next(3)));
    }
    std::vector<StmtPtr> stmts = Flatten(Block(s, 0));
    // Every function ends by returning a constant, so each program holds at least
    // one ConstInt for the mutation property.
    stmts.push_back(Return({Int(c_.Next(4))}));
    std::vector<TypePtr> rets;
    if (c_.Coin()) rets.push_back(ScalarTy(DataType::kInt64));
    auto ft = static_cast<FunctionType>(c_.Next(9));
    std::optional<Level> level;
    if (c_.Coin()) level = static_cast<Level>(c_.Next(10));
    std::optional<Role> role;
    if (c_.Coin()) role = static_cast<Role>(c_.Next(2));
    return ir::MakeNode<const ir::Function>(name, std::move(params), std::move(dirs),
                                            std::move(rets), Seq(std::move(stmts)), ft, level,
                                            role);
  }

  // --- types -------------------------------------------------------------

  std::vector<ExprPtr> ShapeExprs(const Scope& s) {
    std::vector<ExprPtr> dims;
    int rank = 1 + static_cast<int>(c_.Next(2));
    for (int i = 0; i < rank; ++i) {
      std::vector<VarPtr> ints;
      for (const auto& v : s.scalars) {
        DataType dt = static_cast<const ScalarType&>(*v->type).dtype;
        if (IsInteger(dt)) ints.push_back(v);
      }
      if (!ints.empty() && c_.Next(4) == 3) {
        dims.push_back(Pick(ints));
      } else {
        dims.push_back(Int(1 + c_.Next(64)));
      }
    }
    return dims;
  }

  TypePtr AnyType(const Scope& s, int depth) {
    switch (c_.Next(depth < kMaxDepth ? 5 : 3)) {
      case 0:
        return TensorTy(ShapeExprs(s), Pick(kTensorDTypes));
      case 1:
        return DistTensorTy(ShapeExprs(s), Pick(kTensorDTypes), AnyWindow(s));
      case 2:
        return UnknownType::Get();
      case 3:
        return ir::MakeNode<const TileType>(ShapeExprs(s), Pick(kTensorDTypes));
      default: {
        std::vector<TypePtr> ts;
        int n = static_cast<int>(c_.Next(3));
        for (int i = 0; i < n; ++i) ts.push_back(AnyType(s, depth + 1));
        return ir::MakeNode<const TupleType>(std::move(ts));
      }
    }
  }

  // One of the WindowBuffers minted so far, or none.
  WindowBufferPtr AnyWindow(const Scope& s) {
    std::vector<WindowBufferPtr> all;
    for (const auto& a : s.allocs) all.insert(all.end(), a.windows.begin(), a.windows.end());
    if (all.empty() || c_.Next(3) == 0) return nullptr;
    return Pick(all);
  }

  // --- expressions -------------------------------------------------------

  ExprPtr Scalar(const Scope& s, int depth) {
    uint32_t pick = c_.Next(depth < kMaxDepth ? 9 : 5);
    switch (pick) {
      case 0:
        return Int(c_.Next(16),
                   Pick(kScalarDTypes) == DataType::kIndex ? DataType::kIndex : DataType::kInt64);
      case 1:
        if (s.scalars.empty()) return Int(c_.Next(16), DataType::kInt32);
        return Pick(s.scalars);
      case 2:
        return Bool(c_.Coin());
      case 3:
        return Float(0.5 * c_.Next(8), c_.Coin() ? DataType::kFP32 : DataType::kFP64);
      case 4:
        return MakeOpCall(ops::kWorldSize, {});
      case 5:
      case 6: {
        auto op = static_cast<BinaryOp>(c_.Next(16));
        return Binary(op, Scalar(s, depth + 1), Scalar(s, depth + 1));
      }
      case 7:
        return Unary(c_.Coin() ? UnaryOp::kNeg : UnaryOp::kNot, Scalar(s, depth + 1));
      default: {
        // An element of a tuple of scalars.
        std::vector<ExprPtr> elems;
        int n = 1 + static_cast<int>(c_.Next(3));
        for (int i = 0; i < n; ++i) elems.push_back(Scalar(s, depth + 1));
        int64_t idx = c_.Next(static_cast<uint32_t>(n));
        ExprPtr tup = Tuple(elems);
        return ir::MakeNode<const TupleGetItem>(tup, idx, elems[static_cast<size_t>(idx)]->type);
      }
    }
  }

  // Any argument: a scalar, a tensor Var, a shape tuple, a subscript or a string.
  ExprPtr Arg(const Scope& s, int depth) {
    switch (c_.Next(5)) {
      case 0:
        return Scalar(s, depth);
      case 1:
        if (s.tensors.empty()) return Scalar(s, depth);
        return Pick(s.tensors);
      case 2:
        return Tuple(ShapeExprs(s));
      case 3: {
        if (s.tensors.empty()) return Str("s" + std::to_string(c_.Next(3)));
        std::vector<ExprPtr> idx = {
            ir::MakeNode<const Slice>(Int(0), Int(1 + c_.Next(8)), nullptr)};
        if (c_.Coin()) idx.push_back(Scalar(s, depth + 1));
        return ir::MakeNode<const Subscript>(Pick(s.tensors), std::move(idx), UnknownType::Get());
      }
      default:
        return Str("s" + std::to_string(c_.Next(3)));
    }
  }

  KwargList Kwargs(const Scope& s, int depth) {
    static const char* kKeys[] = {"op", "root", "dtype", "mode", "scale", "flag", "target"};
    KwargList kw;
    int n = static_cast<int>(c_.Next(3));
    for (int i = 0; i < n; ++i) {
      AttrValue v;
      switch (c_.Next(7)) {
        case 0:
          v = c_.Coin();
          break;
        case 1:
          v = static_cast<int64_t>(c_.Next(8)) - 2;
          break;
        case 2:
          v = 0.25 * c_.Next(4);
          break;
        case 3:
          v = std::string(c_.Coin() ? "a" : "b");
          break;
        case 4:
          v = Pick(kTensorDTypes);
          break;
        case 5:
          v = EnumAttr{c_.Coin() ? "pld.ReduceOp.Sum" : "pld.ReduceOp.Max"};
          break;
        default:
          v = Arg(s, depth + 1);
          break;
      }
      kw.emplace_back(kKeys[(i * 3 + c_.Next(3)) % 7], std::move(v));
    }
    return kw;
  }

  CallPtr OpaqueCall(const Scope& s, int depth) {
    static const char* kOps[] = {"pl.tile.load", "pl.tile.store", "pl.system.sync"};
    std::vector<ExprPtr> args;
    int n = static_cast<int>(c_.Next(3));
    for (int i = 0; i < n; ++i) args.push_back(Arg(s, depth + 1));
    TypePtr t = c_.Coin() ? UnknownType::Get() : AnyType(s, depth + 1);
    return ir::MakeNode<const Call>(OpRegistry::Get().GetOp(Pick(kOps)), std::move(args),
                                    Kwargs(s, depth), ExprAttrList{}, std::move(t));
  }

  CallPtr Dispatch(const Scope& s, int depth) {
    std::vector<ExprPtr> args;
    int n = static_cast<int>(c_.Next(3));
    for (int i = 0; i < n; ++i) args.push_back(Arg(s, depth + 1));
    ExprPtr device = c_.Coin() ? nullptr : Scalar(s, kMaxDepth);
    TypePtr t = c_.Coin() ? nullptr : ScalarTy(DataType::kInt64);
    return MakeFunctionCall(Pick(kFunctionNames), std::move(args), std::move(device), std::move(t));
  }

  // --- statements --------------------------------------------------------

  StmtPtr Block(Scope s, int depth) {
    std::vector<StmtPtr> stmts;
    int n = depth == 0 ? 1 + static_cast<int>(c_.Next(8))
                       : static_cast<int>(c_.Next(depth < kMaxDepth ? 4 : 2));
    for (int i = 0; i < n; ++i) stmts.push_back(Statement(s, depth));
    return Seq(std::move(stmts));
  }

  // Weighted towards allocs and views: WindowBuffer sharing is what the
  // properties most need to see.
  StmtPtr Statement(Scope& s, int depth) {
    uint32_t pick = c_.Next(depth < kMaxDepth ? 20 : 11);
    switch (pick) {
      case 0:
      case 1:
      case 2: {
        ExprPtr v = Scalar(s, depth);
        VarPtr x = Fresh("x", v->type);
        s.scalars.push_back(x);
        return Assign(x, v);
      }
      case 3:
        return Eval(OpaqueCall(s, depth));
      case 4:
      case 5:
        return AllocStmt(s);
      case 6:
      case 7:
      case 8:
        return ViewStmt(s);
      case 9:
        return Eval(Dispatch(s, depth));
      case 10: {
        std::vector<ExprPtr> vals;
        int n = static_cast<int>(c_.Next(3));
        for (int i = 0; i < n; ++i) vals.push_back(Arg(s, depth));
        return Return(std::move(vals));
      }
      case 11:
        return Loop(s, depth);
      case 12: {
        ExprPtr cond = Scalar(s, depth + 1);
        StmtPtr then_body = Block(s, depth + 1);
        StmtPtr else_body = c_.Coin() ? Block(s, depth + 1) : nullptr;
        return If(cond, then_body, else_body);
      }
      case 13: {
        ExprPtr cond = Scalar(s, depth + 1);
        return While(cond, Block(s, depth + 1));
      }
      case 14:
        return Block(s, depth + 1);
      case 15:
      case 16:
        return CommScope(s, depth);
      case 17: {
        // a, b = opaque(...)
        CallPtr call = OpaqueCall(s, depth);
        std::vector<VarPtr> vars;
        int n = 1 + static_cast<int>(c_.Next(2));
        for (int i = 0; i < n; ++i) vars.push_back(Fresh("u", UnknownType::Get()));
        s.tensors.insert(s.tensors.end(), vars.begin(), vars.end());
        return ir::MakeNode<const UnpackAssignStmt>(std::move(vars), call);
      }
      case 18: {
        // with pl.at(...) as t:  /  with pl.manual_scope():
        VarPtr as = c_.Coin() ? Fresh("t", UnknownType::Get()) : nullptr;
        Scope inner = s;
        if (as) inner.tensors.push_back(as);
        KwargList kw = Kwargs(s, depth);
        return ir::MakeNode<const ScopeStmt>(as ? "pl.at" : "pl.manual_scope",
                                             std::vector<ExprPtr>{}, std::move(kw), as,
                                             Block(inner, depth + 1));
      }
      default: {
        // out[0:k] = value
        if (s.tensors.empty()) return Eval(Scalar(s, depth));
        auto target = ir::MakeNode<const Subscript>(
            Pick(s.tensors),
            std::vector<ExprPtr>{ir::MakeNode<const Slice>(Int(0), Int(1 + c_.Next(4)), nullptr)},
            UnknownType::Get());
        return ir::MakeNode<const SubscriptAssignStmt>(target, Arg(s, depth + 1));
      }
    }
  }

  StmtPtr AllocStmt(Scope& s) {
    ExprPtr size =
        c_.Coin() || s.scalars.empty() ? Int(4 * (1 + c_.Next(256))) : Mul(Pick(s.scalars), Int(4));
    CallPtr call;
    if (size->type->kind() == NodeKind::kScalarType &&
        IsInteger(static_cast<const ScalarType&>(*size->type).dtype)) {
      call =
          MakeOpCall(ops::kAllocWindowBuffer, {size}, {{"name", fmt::format("buf{}", counter_)}});
    } else {
      size = Int(64);
      call =
          MakeOpCall(ops::kAllocWindowBuffer, {size}, {{"name", fmt::format("buf{}", counter_)}});
    }
    VarPtr ptr = Fresh("buf", PtrType::Get());
    auto wb = ir::MakeNode<const WindowBuffer>(ptr, size, c_.Coin(), c_.Coin());
    s.allocs.push_back({ptr, size, {wb}});
    return Assign(ptr, call);
  }

  // v = pld.tensor.window(buf, [shape], dtype=...) whose type holds a WindowBuffer
  // of that alloc (an existing one: shared; a new equal-looking one: not shared) or none.
  StmtPtr ViewStmt(Scope& s) {
    if (s.allocs.empty()) return AllocStmt(s);
    Alloc& a = s.allocs[c_.Next(static_cast<uint32_t>(s.allocs.size()))];
    WindowBufferPtr wb;
    switch (c_.Next(4)) {
      case 0:
        wb = nullptr;
        break;
      case 1:
      case 2:
        wb = Pick(a.windows);
        break;
      default:
        wb = ir::MakeNode<const WindowBuffer>(a.ptr, a.size, a.windows[0]->load_from_host,
                                              a.windows[0]->store_to_host);
        a.windows.push_back(wb);
        break;
    }
    std::vector<ExprPtr> shape = ShapeExprs(s);
    DataType dt = Pick(kTensorDTypes);
    TypePtr t = DistTensorTy(shape, dt, wb);
    // The call's type is the Var's own object or an equal copy: both occur.
    TypePtr call_t = c_.Coin() ? t : DistTensorTy(shape, dt, wb);
    CallPtr call = MakeOpCallWithType(ops::kWindow, {a.ptr, Tuple(shape)}, {{"dtype", dt}}, call_t);
    VarPtr v = Fresh("v", t);
    s.tensors.push_back(v);
    return Assign(v, call);
  }

  StmtPtr Loop(Scope& s, int depth) {
    VarPtr lv = Fresh("i", ScalarTy(DataType::kIndex));
    ExprPtr start = Int(c_.Next(2));
    ExprPtr stop = c_.Coin() ? ExprPtr(MakeOpCall(ops::kWorldSize, {})) : Scalar(s, depth + 1);
    ExprPtr step = Int(1 + c_.Next(2));
    Scope inner = s;
    inner.scalars.push_back(lv);
    std::vector<IterArgPtr> iter_args;
    std::vector<VarPtr> return_vars;
    if (c_.Next(3) == 0) {
      int n = 1 + static_cast<int>(c_.Next(2));
      for (int i = 0; i < n; ++i) {
        ExprPtr init = Scalar(s, depth + 1);
        auto ia = ir::MakeNode<const IterArg>(fmt::format("acc{}", counter_++), init->type, init);
        iter_args.push_back(ia);
        inner.scalars.push_back(ia);
        return_vars.push_back(Fresh("out", init->type));
      }
    }
    std::vector<StmtPtr> body = Flatten(Block(inner, depth + 1));
    if (!iter_args.empty()) {
      std::vector<ExprPtr> ys;
      for (const auto& ia : iter_args)
        ys.push_back(c_.Coin() ? ExprPtr(ia) : Scalar(inner, kMaxDepth));
      body.push_back(ir::MakeNode<const YieldStmt>(std::move(ys)));
    }
    auto loop = ir::MakeNode<ForStmt>(lv, start, stop, step, Seq(std::move(body)),
                                      c_.Coin() ? ForKind::kRange : ForKind::kUnroll);
    loop->iter_args = std::move(iter_args);
    loop->return_vars = return_vars;
    s.scalars.insert(s.scalars.end(), return_vars.begin(), return_vars.end());
    return loop;
  }

  StmtPtr CommScope(Scope& s, int depth) {
    DeviceSet devices;
    if (c_.Coin()) {
      devices = DeviceSet::All();
    } else {
      std::vector<int64_t> ids;
      int n = static_cast<int>(c_.Next(4));
      for (int i = 0; i < n; ++i) ids.push_back(c_.Next(8));
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      devices = DeviceSet{false, std::move(ids)};
    }
    std::vector<WindowBufferPtr> slots;
    for (const auto& a : s.allocs) {
      if (c_.Coin()) slots.push_back(Pick(a.windows));
    }
    KwargList attrs = Kwargs(s, depth);
    return ir::MakeNode<const CommDomainScopeStmt>(fmt::format("comm_d{}", c_.Next(3)),
                                                   std::move(devices), std::move(slots),
                                                   std::move(attrs), Block(s, depth + 1));
  }

  Choices& c_;
  int counter_ = 0;
};

// --- copies ------------------------------------------------------------------

class Copier {
 public:
  Copier(std::string prefix, bool share_windows)
      : prefix_(std::move(prefix)), share_windows_(share_windows) {}

  NodePtr Copy(const NodePtr& n);

 private:
  // Declared before Copy's body: clang-14 reports -Wundefined-internal for a member
  // template first used from a generic lambda ahead of its declaration.
  template <typename T>
  void Value(T& v) {
    if constexpr (detail::IsNodePtr<T>::value) {
      v = ir::PtrCast<typename T::element_type>(Copy(v));
    } else if constexpr (detail::IsVector<T>::value) {
      for (auto& e : v) Value(e);
    } else if constexpr (detail::IsOptional<T>::value) {
      if (v) Value(*v);
    } else if constexpr (detail::IsPair<T>::value) {
      Value(v.second);
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      if (auto* e = std::get_if<ExprPtr>(&v)) Value(*e);
    }
  }

  std::string prefix_;
  bool share_windows_;
  std::unordered_map<const Node*, NodePtr> memo_;
};

NodePtr Copier::Copy(const NodePtr& n) {
  if (!n) return n;
  bool var_like = IsVarLikeKind(n->kind());
  bool memoise = var_like && (share_windows_ || n->kind() != NodeKind::kWindowBuffer);
  if (memoise) {
    auto it = memo_.find(n.get());
    if (it != memo_.end()) return it->second;
  }
  return DispatchNode(*n, [&](const auto& node) -> NodePtr {
    using T = std::decay_t<decltype(node)>;
    auto copy = ir::MakeNode<T>(node);
    if (memoise) memo_.emplace(n.get(), copy);
    ForEachField(*copy, [&](std::string_view, auto& value, FieldRole) { Value(value); });
    if constexpr (std::is_base_of_v<Var, T>) copy->name_hint = prefix_ + copy->name_hint;
    copy->set_span(Span{});  // equality must not look at spans
    return copy;
  });
}

// Walks like StructuralEqual (a Var-like's fields only at first sight) and notes
// whether a WindowBuffer is met again.
class RepeatFinder {
 public:
  bool repeated = false;

  void Walk(const NodePtr& n) {
    if (!n || repeated) return;
    if (IsVarLikeKind(n->kind())) {
      if (!seen_.insert(n.get()).second) {
        if (n->kind() == NodeKind::kWindowBuffer) repeated = true;
        return;
      }
    }
    DispatchNode(*n, [&](const auto& node) {
      ForEachField(node, [&](std::string_view, const auto& value, FieldRole role) {
        if (role != FieldRole::kIgnored) Value(value);
      });
    });
  }

 private:
  template <typename T>
  void Value(const T& v) {
    if constexpr (detail::IsNodePtr<T>::value) {
      Walk(v);
    } else if constexpr (detail::IsVector<T>::value) {
      for (const auto& e : v) Value(e);
    } else if constexpr (detail::IsOptional<T>::value) {
      if (v) Value(*v);
    } else if constexpr (detail::IsPair<T>::value) {
      Value(v.second);
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      if (const auto* e = std::get_if<ExprPtr>(&v)) Value(*e);
    }
  }

  std::unordered_set<const Node*> seen_;
};

// Counts the ConstInts the mutator reaches; replaces the `target`-th one.
class IntBumper : public IRMutator {
 public:
  explicit IntBumper(size_t target) : target_(target) {}
  size_t seen = 0;

  NodePtr MutateConstInt(const ConstIntPtr& c) override {
    if (seen++ != target_) return c;
    return ir::MakeNode<const ConstInt>(c->value + 1, c->dtype);
  }

 private:
  size_t target_;
};

}  // namespace

ProgramPtr GenProgram(Choices& c) { return Generator(c).MakeProgram(); }
StmtPtr GenBody(Choices& c) { return Generator(c).Body(); }

NodePtr RenamedCopy(const NodePtr& n, const std::string& prefix) {
  return Copier(prefix, true).Copy(n);
}
NodePtr UnsharedWindowsCopy(const NodePtr& n) { return Copier("", false).Copy(n); }

bool HasRepeatedWindowBuffer(const NodePtr& n) {
  RepeatFinder f;
  f.Walk(n);
  return f.repeated;
}

size_t CountReachableInts(const NodePtr& n) {
  IntBumper b(SIZE_MAX);
  b.MutateNode(n);
  return b.seen;
}

NodePtr BumpInt(const NodePtr& n, size_t k) {
  IntBumper b(k);
  return b.MutateNode(n);
}

}  // namespace cds::ir::irgen
