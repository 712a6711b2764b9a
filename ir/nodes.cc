#include <algorithm>

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
#define CDS_DESTROY_ENTRY(N)            \
  case NodeKind::k##N:                  \
    static_cast<const N*>(node)->~N(); \
    bytes = sizeof(N);                  \
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
    : Var(NodeKind::kWindowBuffer, b ? b->name_hint : std::string(), PtrType::Get()), base(std::move(b)),
      size(std::move(sz)), load_from_host(load), store_to_host(store) {}

GlobalVar::GlobalVar(std::string n) : Expr(NodeKind::kGlobalVar, UnknownType::Get()), name(std::move(n)) {}
ConstInt::ConstInt(int64_t v, DataType dt) : Expr(NodeKind::kConstInt, ScalarType::Get(dt)), value(v), dtype(dt) {}
ConstFloat::ConstFloat(double v, DataType dt) : Expr(NodeKind::kConstFloat, ScalarType::Get(dt)), value(v), dtype(dt) {}
ConstBool::ConstBool(bool v) : Expr(NodeKind::kConstBool, ScalarType::Get(DataType::kBool)), value(v) {}
ConstString::ConstString(std::string v) : Expr(NodeKind::kConstString, UnknownType::Get()), value(std::move(v)) {}

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
    : Expr(NodeKind::kSlice, UnknownType::Get()), start(std::move(a)), stop(std::move(b)), step(std::move(c)) {}

std::string_view BinaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "Add";
    case BinaryOp::kSub: return "Sub";
    case BinaryOp::kMul: return "Mul";
    case BinaryOp::kFloorDiv: return "FloorDiv";
    case BinaryOp::kFloorMod: return "FloorMod";
    case BinaryOp::kDiv: return "Div";
    case BinaryOp::kMin: return "Min";
    case BinaryOp::kMax: return "Max";
    case BinaryOp::kEq: return "Eq";
    case BinaryOp::kNe: return "Ne";
    case BinaryOp::kLt: return "Lt";
    case BinaryOp::kLe: return "Le";
    case BinaryOp::kGt: return "Gt";
    case BinaryOp::kGe: return "Ge";
    case BinaryOp::kAnd: return "And";
    case BinaryOp::kOr: return "Or";
  }
  return "?";
}

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

std::string_view ForKindName(ForKind k) {
  switch (k) {
    case ForKind::kRange: return "range";
    case ForKind::kUnroll: return "unroll";
    case ForKind::kParallel: return "parallel";
  }
  return "range";
}

DeviceSet DeviceSet::Of(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return {false, std::move(ids)};
}

DeviceSet DeviceSet::Merge(const DeviceSet& o) const {
  if (all || o.all) return All();
  std::vector<int64_t> merged = ids;
  merged.insert(merged.end(), o.ids.begin(), o.ids.end());
  return Of(std::move(merged));
}

std::string DeviceSet::ToString() const {
  if (all) return "all";
  return fmt::format("[{}]", fmt::join(ids, ", "));
}

namespace {
struct NamedFunctionType {
  FunctionType value;
  std::string_view name;
};
constexpr NamedFunctionType kFunctionTypes[] = {
    {FunctionType::kOpaque, "Opaque"}, {FunctionType::kOrchestration, "Orchestration"},
    {FunctionType::kInCore, "InCore"}, {FunctionType::kAIC, "AIC"},
    {FunctionType::kAIV, "AIV"},       {FunctionType::kGroup, "Group"},
    {FunctionType::kSpmd, "Spmd"},     {FunctionType::kInline, "Inline"},
    {FunctionType::kGraph, "Graph"}};
struct NamedLevel {
  Level value;
  std::string_view name;
};
constexpr NamedLevel kLevels[] = {
    {Level::kAIV, "AIV"},           {Level::kAIC, "AIC"},           {Level::kCoreGroup, "CORE_GROUP"},
    {Level::kChipDie, "CHIP_DIE"},  {Level::kChip, "CHIP"},         {Level::kHost, "HOST"},
    {Level::kCluster0, "CLUSTER_0"}, {Level::kCluster1, "CLUSTER_1"}, {Level::kCluster2, "CLUSTER_2"},
    {Level::kGlobal, "GLOBAL"}};
}  // namespace

std::string_view FunctionTypeName(FunctionType t) {
  for (const auto& e : kFunctionTypes) {
    if (e.value == t) return e.name;
  }
  return "?";
}
std::optional<FunctionType> FunctionTypeFromName(std::string_view s) {
  for (const auto& e : kFunctionTypes) {
    if (e.name == s) return e.value;
  }
  return std::nullopt;
}
std::string_view LevelName(Level l) {
  for (const auto& e : kLevels) {
    if (e.value == l) return e.name;
  }
  return "?";
}
std::optional<Level> LevelFromName(std::string_view s) {
  for (const auto& e : kLevels) {
    if (e.name == s) return e.value;
  }
  return std::nullopt;
}
std::string_view RoleName(Role r) { return r == Role::kOrchestrator ? "Orchestrator" : "SubWorker"; }
std::optional<Role> RoleFromName(std::string_view s) {
  if (s == "Orchestrator") return Role::kOrchestrator;
  if (s == "SubWorker") return Role::kSubWorker;
  return std::nullopt;
}

std::optional<Level> Function::EffectiveLevel() const {
  if (level) return level;
  switch (func_type) {
    case FunctionType::kOrchestration:
    case FunctionType::kGraph: return Level::kChip;
    case FunctionType::kInCore: return Level::kChipDie;
    case FunctionType::kAIC: return Level::kAIC;
    case FunctionType::kAIV: return Level::kAIV;
    case FunctionType::kGroup: return Level::kCoreGroup;
    default: return std::nullopt;
  }
}

bool Function::IsHostOrchestrator() const {
  return EffectiveLevel() == Level::kHost &&
         (role == Role::kOrchestrator || func_type == FunctionType::kOrchestration);
}

bool Function::IsChipOrchestrator() const {
  return EffectiveLevel() == Level::kChip && func_type != FunctionType::kGraph &&
         (role == Role::kOrchestrator || func_type == FunctionType::kOrchestration);
}

Program::Program(std::string n, std::vector<VarPtr> dyn, std::vector<FunctionPtr> fns)
    : Node(NodeKind::kProgram), name(std::move(n)), dynamic_dims(std::move(dyn)), functions(std::move(fns)) {
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
