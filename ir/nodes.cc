#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>

#include <fmt/format.h>

#include "ir/function.h"

namespace cds::ir {

std::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
#define CDS_NAME_ENTRY(N) \
  case NodeKind::k##N:    \
    return #N;
    CDS_ALL_NODES(CDS_NAME_ENTRY)
#undef CDS_NAME_ENTRY
  }
  return "?";
}

void DestroyNode(const Node* node) noexcept {
  size_t bytes = 0;
  switch (node->kind()) {
#define CDS_DESTROY_ENTRY(N)           \
  case NodeKind::k##N:                 \
    static_cast<const N*>(node)->~N(); \
    bytes = sizeof(N);                 \
    break;
    CDS_ALL_NODES(CDS_DESTROY_ENTRY)
#undef CDS_DESTROY_ENTRY
  }
  node_arena::Release(const_cast<Node*>(node), bytes);
}

NodeRef<const PtrType> PtrType::Get() {
  static const auto instance = MakeNode<const PtrType>();
  return instance;
}

NodeRef<const UnknownType> UnknownType::Get() {
  static const auto instance = MakeNode<const UnknownType>();
  return instance;
}

// Constants are the most numerous nodes of a parsed program: share one
// ScalarType per dtype instead of allocating one per constant.
TypePtr ScalarType::Get(DataType dt) {
  static const auto cache = [] {
    std::vector<TypePtr> v;
    for (DataType d : kAllDataTypes) v.push_back(MakeNode<const ScalarType>(d));
    return v;
  }();
  return cache[static_cast<size_t>(dt)];
}

WindowBuffer::WindowBuffer(VarPtr b, ExprPtr sz, bool load, bool store)
    : Var(NodeKind::kWindowBuffer, b ? b->name_hint : std::string(), PtrType::Get()),
      base(std::move(b)),
      size(std::move(sz)),
      load_from_host(load),
      store_to_host(store) {}

GlobalVar::GlobalVar(std::string n)
    : Expr(NodeKind::kGlobalVar, UnknownType::Get()), name(std::move(n)) {}
ConstInt::ConstInt(int64_t v, DataType dt)
    : Expr(NodeKind::kConstInt, ScalarType::Get(dt)), value(v), dtype(dt) {}
ConstFloat::ConstFloat(double v, DataType dt)
    : Expr(NodeKind::kConstFloat, ScalarType::Get(dt)), value(v), dtype(dt) {}
ConstBool::ConstBool(bool v)
    : Expr(NodeKind::kConstBool, ScalarType::Get(DataType::kBool)), value(v) {}
ConstString::ConstString(std::string v)
    : Expr(NodeKind::kConstString, UnknownType::Get()), value(std::move(v)) {}

static TypePtr TupleTypeOf(std::span<const ExprPtr> elements) {
  // Straight into the TupleType's list: a temporary vector here was one heap
  // block per tuple literal (shapes, init_values) in every parse.
  return MakeNode<const TupleType>(NodeList<TypePtr>::Generate(elements.size(), [&](size_t i) {
    return elements[i] ? elements[i]->type : TypePtr(UnknownType::Get());
  }));
}

MakeTuple::MakeTuple(NodeList<ExprPtr> e, bool paren)
    : Expr(NodeKind::kMakeTuple, TupleTypeOf(e)), elements(std::move(e)), parenthesized(paren) {}

Slice::Slice(ExprPtr a, ExprPtr b, ExprPtr c)
    : Expr(NodeKind::kSlice, UnknownType::Get()),
      start(std::move(a)),
      stop(std::move(b)),
      step(std::move(c)) {}

namespace {

// The name of an enumerator, from a table of names indexed by the enum.
template <typename E, size_t N>
std::string_view NameIn(const std::string_view (&names)[N], E value) {
  const auto i = static_cast<size_t>(value);
  return i < N ? names[i] : "?";
}

template <typename E, size_t N>
std::optional<E> ValueIn(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

constexpr std::string_view kBinaryOpNames[] = {"Add", "Sub", "Mul", "FloorDiv", "FloorMod", "Div",
                                               "Min", "Max", "Eq",  "Ne",       "Lt",       "Le",
                                               "Gt",  "Ge",  "And", "Or"};
constexpr std::string_view kForKindNames[] = {"range", "unroll", "parallel"};
constexpr std::string_view kFunctionTypeNames[] = {
    "Opaque", "Orchestration", "InCore", "AIC", "AIV", "Group", "Spmd", "Inline", "Graph"};
constexpr std::string_view kLevelNames[] = {"AIV",       "AIC",   "CORE_GROUP", "CHIP_DIE",
                                            "CHIP",      "HOST",  "CLUSTER_0",  "CLUSTER_1",
                                            "CLUSTER_2", "GLOBAL"};
constexpr std::string_view kRoleNames[] = {"Orchestrator", "SubWorker"};
static_assert(std::size(kBinaryOpNames) == static_cast<size_t>(BinaryOp::kOr) + 1);
static_assert(std::size(kForKindNames) == static_cast<size_t>(ForKind::kParallel) + 1);
static_assert(std::size(kFunctionTypeNames) == static_cast<size_t>(FunctionType::kGraph) + 1);
static_assert(std::size(kLevelNames) == static_cast<size_t>(Level::kGlobal) + 1);

}  // namespace

std::string_view BinaryOpName(BinaryOp op) { return NameIn(kBinaryOpNames, op); }

std::string_view UnaryOpName(UnaryOp op) { return op == UnaryOp::kNot ? "Not" : "Neg"; }

const AttrValue* FindKwarg(std::span<const Kwarg> kwargs, std::string_view name) {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return nullptr;
}

ExprPtr FindAttr(std::span<const ExprAttr> attrs, std::string_view name) {
  for (const auto& [k, v] : attrs) {
    if (k == name) return v;
  }
  return nullptr;
}

const std::string& Call::OpName() const {
  static const std::string empty;
  if (op && op->kind() == NodeKind::kOp) return static_cast<const Op&>(*op).name;
  return empty;
}

GlobalVarPtr Call::Callee() const {
  if (op && op->kind() == NodeKind::kGlobalVar) return PtrCast<const GlobalVar>(op);
  return nullptr;
}

std::string_view ForKindName(ForKind k) { return NameIn(kForKindNames, k); }
std::optional<ForKind> ForKindFromName(std::string_view s) {
  return ValueIn<ForKind>(kForKindNames, s);
}

std::string DeviceSet::ToString() const {
  if (all) return "all";
  return fmt::format("[{}]", fmt::join(ids, ", "));
}

std::string_view FunctionTypeName(FunctionType t) { return NameIn(kFunctionTypeNames, t); }
std::optional<FunctionType> FunctionTypeFromName(std::string_view s) {
  return ValueIn<FunctionType>(kFunctionTypeNames, s);
}
std::string_view LevelName(Level l) { return NameIn(kLevelNames, l); }
std::optional<Level> LevelFromName(std::string_view s) { return ValueIn<Level>(kLevelNames, s); }
std::string_view RoleName(Role r) { return NameIn(kRoleNames, r); }
std::optional<Role> RoleFromName(std::string_view s) { return ValueIn<Role>(kRoleNames, s); }

Program::Program(std::string n, std::vector<VarPtr> dyn, std::vector<FunctionPtr> fns)
    : Node(NodeKind::kProgram),
      name(std::move(n)),
      dynamic_dims(std::move(dyn)),
      functions(std::move(fns)) {
  std::stable_sort(functions.begin(), functions.end(),
                   [](const FunctionPtr& a, const FunctionPtr& b) { return a->name < b->name; });
}

FunctionPtr Program::FindFunction(std::string_view fname) const {
  auto it = std::lower_bound(functions.begin(), functions.end(), fname,
                             [](const FunctionPtr& f, std::string_view n) { return f->name < n; });
  if (it != functions.end() && (*it)->name == fname) return *it;
  return nullptr;
}

}  // namespace cds::ir
