#include "verifier/fast_equal.h"

#include <cstring>
#include <unordered_map>

#include "ir/dispatch.h"
#include "ir/field_values.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

class Equal {
 public:
  explicit Equal(bool ignore_wb) : ignore_wb_(ignore_wb) {}

  bool Nodes(const NodePtr& a, const NodePtr& b) {
    if (a == nullptr || b == nullptr) return a == b;
    if (a->kind() != b->kind()) return false;
    if (IsVarLikeKind(a->kind())) {
      auto ia = l2r_.find(a.get());
      auto ib = r2l_.find(b.get());
      if (ia != l2r_.end() || ib != r2l_.end()) return ia != l2r_.end() && ia->second == b.get();
      l2r_.emplace(a.get(), b.get());
      r2l_.emplace(b.get(), a.get());
    } else if (a == b && IsLeaf(a->kind())) {
      // Only leaves may be short-circuited: a shared subtree can hold Var uses that
      // still have to follow the mapping.
      return true;
    }
    return DispatchNode(*a, [&](const auto& na) {
      using T = std::decay_t<decltype(na)>;
      const T& nb = static_cast<const T&>(*b);
      return ForEachFieldPair(
          na, nb, [&](std::string_view name, const auto& x, const auto& y, FieldRole role) {
            if (role == FieldRole::kIgnored) return true;
            if constexpr (std::is_same_v<T, DistributedTensorType>) {
              if (ignore_wb_ && name == "window_buffer") return true;
            }
            return Value(x, y);
          });
    });
  }

 private:
  static bool IsLeaf(NodeKind k) {
    switch (k) {
      case NodeKind::kConstInt:
      case NodeKind::kConstFloat:
      case NodeKind::kConstBool:
      case NodeKind::kConstString:
      case NodeKind::kGlobalVar:
      case NodeKind::kOp:
      case NodeKind::kScalarType:
      case NodeKind::kPtrType:
      case NodeKind::kUnknownType:
        return true;
      default:
        return false;
    }
  }

  template <typename T>
  bool Value(const T& x, const T& y) {
    if constexpr (ir::detail::IsNodePtr<T>::value) {
      return Nodes(x, y);
    } else if constexpr (ir::detail::IsVector<T>::value) {
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!Value(x[i], y[i])) return false;
      }
      return true;
    } else if constexpr (ir::detail::IsOptional<T>::value) {
      if (x.has_value() != y.has_value()) return false;
      return !x.has_value() || Value(*x, *y);
    } else if constexpr (ir::detail::IsPair<T>::value) {
      return x.first == y.first && Value(x.second, y.second);
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      if (x.index() != y.index()) return false;
      if (const auto* e = std::get_if<ExprPtr>(&x)) return Nodes(*e, std::get<ExprPtr>(y));
      if (const auto* d = std::get_if<double>(&x)) return Same(*d, std::get<double>(y));
      return x == y;
    } else if constexpr (std::is_same_v<T, double>) {
      return Same(x, y);
    } else {
      return x == y;
    }
  }

  static bool Same(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

  bool ignore_wb_;
  std::unordered_map<const Node*, const Node*> l2r_, r2l_;
};

}  // namespace

bool FastStructuralEqual(const NodePtr& a, const NodePtr& b, bool ignore_window_buffers) {
  return Equal(ignore_window_buffers).Nodes(a, b);
}

}  // namespace cds::verify
