#include "bench/programs.h"

#include <map>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/field_values.h"
#include "ir/op_registry.h"

namespace cds::bench {
namespace {

using namespace cds::ir;

// How a block's dispatch region (always two statements) picks its devices.
struct DeviceForm {
  enum Kind { kConst, kRange, kAll, kPair } kind;
  int64_t a = 0;
  int64_t b = 0;
};

// 37 forms with pairwise different device sets, so the pass opens 37 domains
// (38 with nothing merged away) and the clustering hash map is exercised.
std::vector<DeviceForm> Forms() {
  std::vector<DeviceForm> f;
  for (int64_t c = 0; c < 16; ++c) f.push_back({DeviceForm::kConst, c, 0});
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{0, 2},
                                                              {0, 4},
                                                              {0, 8},
                                                              {2, 6},
                                                              {4, 8},
                                                              {8, 16},
                                                              {1, 3},
                                                              {3, 5},
                                                              {5, 9},
                                                              {0, 16},
                                                              {6, 12},
                                                              {10, 14}}) {
    f.push_back({DeviceForm::kRange, a, b});
  }
  f.push_back({DeviceForm::kAll, 0, 0});
  for (int64_t c = 0; c < 8; ++c) f.push_back({DeviceForm::kPair, c, c + 8});
  return f;
}

ExprPtr WorldSize() { return MakeOpCall(ops::kWorldSize, {}); }

// `buf_K = pld.alloc_window_buffer(256 * 4, name="buf_K")` and
// `v_K = pld.window(buf_K, [256], dtype=pl.FP32)` appended to `body`; returns v_K.
VarPtr AllocWithView(int64_t k, std::vector<StmtPtr>& body) {
  const std::string buf_name = fmt::format("buf_{}", k);
  CallPtr alloc =
      MakeOpCall(ops::kAllocWindowBuffer, {Mul(Int(256), Int(4))}, {{"name", buf_name}});
  VarPtr buf = MakeVar(buf_name, alloc->type);
  body.push_back(Assign(buf, alloc));
  CallPtr window =
      MakeOpCall(ops::kWindow, {buf, Tuple(Shape({256}))}, {{"dtype", DataType::kFP32}});
  VarPtr view = MakeVar(fmt::format("v_{}", k), window->type);
  body.push_back(Assign(view, window));
  return view;
}

}  // namespace

BigProgram BuildHostProgram(int64_t statements) {
  const std::vector<DeviceForm> forms = Forms();
  const std::string chip = "chip_orch";
  VarPtr param = MakeVar("data", DistTensorTy(Shape({256}), DataType::kFP32));
  TypePtr chip_ret = param->type;
  auto chip_fn = ir::MakeNode<Function>(
      chip, std::vector<VarPtr>{param}, std::vector<ParamDirection>{ParamDirection::kIn},
      std::vector<TypePtr>{chip_ret}, Seq({Return({param})}), FunctionType::kOrchestration);

  auto dispatch = [&](const VarPtr& view, ExprPtr device) {
    return Eval(MakeFunctionCall(chip, {view}, std::move(device), chip_ret));
  };

  BigProgram out;
  std::vector<StmtPtr> body;
  const int64_t blocks = std::max<int64_t>(1, statements / 10);
  body.reserve(static_cast<size_t>(blocks) * 10);
  std::unordered_set<size_t> forms_used;
  for (int64_t k = 0; k < blocks; ++k) {
    VarPtr view = AllocWithView(k, body);

    const size_t fi = static_cast<size_t>(k) % forms.size();
    forms_used.insert(fi);
    const DeviceForm& form = forms[fi];
    switch (form.kind) {
      case DeviceForm::kConst:
        body.push_back(dispatch(view, Int(form.a)));
        body.push_back(
            Assign(MakeVar(fmt::format("n_{}", k), ScalarTy(DataType::kIndex)), WorldSize()));
        break;
      case DeviceForm::kPair:
        body.push_back(dispatch(view, Int(form.a)));
        body.push_back(dispatch(view, Int(form.b)));
        break;
      case DeviceForm::kRange:
      case DeviceForm::kAll: {
        VarPtr r = MakeVar(fmt::format("r_{}", k), ScalarTy(DataType::kIndex));
        ExprPtr start = Int(form.a);
        ExprPtr stop = form.kind == DeviceForm::kAll ? WorldSize() : Int(form.b);
        body.push_back(For(r, start, stop, Int(1), Seq({dispatch(view, r)})));
        break;
      }
    }

    VarPtr s = MakeVar(fmt::format("s_{}", k), ScalarTy(DataType::kInt64));
    body.push_back(Assign(s, Add(Mul(Int(k), Int(2)), Int(1))));
    CallPtr create =
        MakeOpCall(ops::kTensorCreate, {Tuple(Shape({16, 16}))}, {{"dtype", DataType::kFP32}});
    VarPtr t = MakeVar(fmt::format("t_{}", k), create->type);
    body.push_back(Assign(t, create));
    CallPtr add = MakeOpCall(ops::kTensorAdd, {t, t});
    body.push_back(Assign(MakeVar(fmt::format("u_{}", k), add->type), add));
    VarPtr alias = MakeVar(fmt::format("w_{}", k), view->type);
    body.push_back(Assign(alias, view));
    VarPtr e = MakeVar(fmt::format("e_{}", k), ScalarTy(DataType::kInt64));
    body.push_back(Assign(e, Binary(BinaryOp::kSub, s, Int(1))));
    if (k % 10 == 9) {
      body.push_back(
          Eval(MakeOpCall(ops::kAllReduce, {alias}, {{"op", EnumAttr{"pld.ReduceOp.Sum"}}})));
    } else {
      body.push_back(
          Assign(MakeVar(fmt::format("f_{}", k), ScalarTy(DataType::kInt64)), Mul(e, Int(2))));
    }
  }
  out.allocs = blocks;
  out.device_sets = static_cast<int64_t>(forms_used.size());
  for (const auto& st : body) out.statements += st->kind() == NodeKind::kForStmt ? 2 : 1;

  auto host = ir::MakeNode<Function>(
      "host_orch", std::vector<VarPtr>{}, std::vector<ParamDirection>{}, std::vector<TypePtr>{},
      Seq(std::move(body)), FunctionType::kOpaque, Level::kHost, Role::kOrchestrator);
  out.program =
      ir::MakeNode<Program>("Big", std::vector<VarPtr>{}, std::vector<FunctionPtr>{chip_fn, host});
  return out;
}

ir::ProgramPtr BuildDispatchLoopsProgram(int64_t allocs, int64_t loops) {
  constexpr int kChips = 4;
  VarPtr param = MakeVar("data", DistTensorTy(Shape({256}), DataType::kFP32));
  std::vector<FunctionPtr> functions;
  for (int c = 0; c < kChips; ++c) {
    functions.push_back(ir::MakeNode<Function>(
        fmt::format("chip_orch_{}", c), std::vector<VarPtr>{param},
        std::vector<ParamDirection>{ParamDirection::kIn}, std::vector<TypePtr>{param->type},
        Seq({Return({param})}), FunctionType::kOrchestration));
  }
  loops = std::max<int64_t>(1, loops);
  std::vector<StmtPtr> body;
  body.reserve(static_cast<size_t>(allocs * 2 + loops));
  int64_t next = 0;
  for (int64_t k = 0; k < loops; ++k) {
    const int64_t end = allocs * (k + 1) / loops;
    std::vector<VarPtr> views;
    for (; next < end; ++next) views.push_back(AllocWithView(next, body));
    VarPtr r = MakeVar(fmt::format("r_{}", k), ScalarTy(DataType::kIndex));
    std::vector<StmtPtr> dispatches;
    for (size_t i = 0; i < views.size(); ++i) {
      dispatches.push_back(Eval(
          MakeFunctionCall(fmt::format("chip_orch_{}", i % kChips), {views[i]}, r, param->type)));
    }
    body.push_back(For(r, Int(0), Int(k % kChips + 1), Int(1), Seq(std::move(dispatches))));
  }
  functions.push_back(ir::MakeNode<Function>(
      "host_orch", std::vector<VarPtr>{}, std::vector<ParamDirection>{}, std::vector<TypePtr>{},
      Seq(std::move(body)), FunctionType::kOpaque, Level::kHost, Role::kOrchestrator));
  return ir::MakeNode<Program>("DispatchLoops", std::vector<VarPtr>{}, std::move(functions));
}

const BigProgram& HostProgram(int64_t statements) {
  static std::mutex mu;
  static std::map<int64_t, BigProgram> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(statements);
  if (it == cache.end()) it = cache.emplace(statements, BuildHostProgram(statements)).first;
  return it->second;
}

namespace {

// Mirrors the structural hash's walk: a Var-like node is expanded once, later
// occurrences are references.
class NodeCounter {
 public:
  void Visit(const NodePtr& n) {
    ++count_;
    if (!n) return;
    if (IsVarLikeKind(n->kind()) && !seen_.insert(n.get()).second) return;
    DispatchNode(*n, [&](const auto& node) {
      ForEachField(node, [&](std::string_view, const auto& value, FieldRole role) {
        if (role != FieldRole::kIgnored) Value(value);
      });
    });
  }
  int64_t count() const { return count_; }

 private:
  template <typename T>
  void Value(const T& v) {
    if constexpr (ir::detail::IsNodePtr<T>::value) {
      Visit(v);
    } else if constexpr (ir::detail::IsVector<T>::value) {
      for (const auto& e : v) Value(e);
    } else if constexpr (ir::detail::IsOptional<T>::value) {
      if (v) Value(*v);
    } else if constexpr (ir::detail::IsPair<T>::value) {
      Value(v.second);
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      if (const auto* e = std::get_if<ExprPtr>(&v)) Visit(*e);
    }
  }

  int64_t count_ = 0;
  std::unordered_set<const Node*> seen_;
};

}  // namespace

int64_t CountNodesVisited(const ir::NodePtr& root) {
  NodeCounter c;
  c.Visit(root);
  return c.count();
}

}  // namespace cds::bench
