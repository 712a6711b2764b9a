#include "verifier/ir_rewrite.h"

namespace cds::verify {

using namespace cds::ir;

VarPtr RetypingMutator::Retype(const VarPtr& v) {
  if (!v) return v;
  auto it = var_memo_.find(v.get());
  if (it != var_memo_.end()) return it->second;
  // Provisional entry: a type that mentions the Var itself must not recurse forever.
  var_memo_[v.get()] = v;
  VarPtr result = v;
  if (v->kind() == NodeKind::kVar) {
    TypePtr t = MutateType(v->type);
    if (t != v->type) {
      auto nv = MakeNode<Var>(*v);
      nv->type = std::move(t);
      result = nv;
    }
  } else if (v->kind() == NodeKind::kIterArg) {
    const auto& ia = static_cast<const IterArg&>(*v);
    TypePtr t = MutateType(ia.type);
    ExprPtr init = MutateExpr(ia.init_value);
    if (t != ia.type || init != ia.init_value) {
      auto nv = MakeNode<IterArg>(ia);
      nv->type = std::move(t);
      nv->init_value = std::move(init);
      result = nv;
    }
  }
  var_memo_[v.get()] = result;
  return result;
}

NodePtr WindowBufferEraser::MutateDistributedTensorType(
    const ir::NodeRef<const DistributedTensorType>& n) {
  if (!n->window_buffer) return MutateChildren(n);
  auto copy = MakeNode<DistributedTensorType>(*n);
  copy->window_buffer = nullptr;
  return MutateChildren(ir::NodeRef<const DistributedTensorType>(std::move(copy)));
}

}  // namespace cds::verify
