#include "ir/structural_equal.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ir/dispatch.h"
#include "ir/field_values.h"
#include "ir/ptr_table.h"

namespace cds::ir {

namespace {

template <typename T>
std::string ValueText(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return "\"" + v + "\"";
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_arithmetic_v<T>) {
    return fmt::format("{}", v);
  } else if constexpr (std::is_same_v<T, DataType>) {
    return std::string(DataTypeName(v));
  } else if constexpr (std::is_same_v<T, DeviceSet>) {
    return v.ToString();
  } else if constexpr (std::is_same_v<T, AttrValue>) {
    return std::visit([](const auto& x) { return ValueText(x); }, v);
  } else if constexpr (std::is_same_v<T, EnumAttr>) {
    return v.qualified;
  } else if constexpr (std::is_same_v<T, ExprPtr>) {
    return "<expr>";
  } else if constexpr (std::is_enum_v<T>) {
    return fmt::format("{}", static_cast<int>(v));
  } else {
    return "<value>";
  }
}

bool SameDouble(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// One step of the difference path. Kept as a view into the compared IR (field
// names are static, keys live in the nodes) so that nothing is formatted unless
// a difference is actually reported.
struct PathSegment {
  enum Kind : uint8_t { kField, kIndex, kKey } kind;
  std::string_view text;  // field name or key
  size_t index = 0;
};

// kPath: keep the path and the reason of the first difference (StructuralEqualWhere).
// Without it (StructuralEqual) the walk only answers yes or no: no path segments
// are pushed and no reason is formatted.
template <bool kPath>
class EqualChecker {
 public:
  explicit EqualChecker(const EqualOptions& options) : options_(options) {}

  bool Nodes(const NodePtr& a, const NodePtr& b) {
    if (a == nullptr || b == nullptr) {
      if (a == b) return true;
      if constexpr (!kPath) return false;
      return Fail(a ? "present vs absent" : "absent vs present");
    }
    if (a->kind() != b->kind()) {
      if constexpr (!kPath) return false;
      return Fail(fmt::format("{} vs {}", NodeKindName(a->kind()), NodeKindName(b->kind())));
    }
    if (IsVarLikeKind(a->kind())) return VarLike(a, b);
    return Fields(*a, *b);
  }

  EqualityResult Result(bool ok) { return {ok, first_path_, reason_}; }

 private:
  // Var-like nodes: mapped bijectively on first sight; their fields compared then.
  bool VarLike(const NodePtr& a, const NodePtr& b) {
    const Node* const* mapped_a = lhs_to_rhs_.Find(a.get());
    if (mapped_a != nullptr && *mapped_a == b.get()) return true;
    if (mapped_a != nullptr || rhs_to_lhs_.Find(b.get()) != nullptr) {
      if constexpr (!kPath) return false;
      return Fail(fmt::format("{} '{}' does not correspond to '{}' (mapped elsewhere)",
                              NodeKindName(a->kind()), static_cast<const Var&>(*a).name_hint,
                              static_cast<const Var&>(*b).name_hint));
    }
    lhs_to_rhs_.Set(a.get(), b.get());
    rhs_to_lhs_.Set(b.get(), a.get());
    return Fields(*a, *b);
  }

  bool Fields(const Node& a, const Node& b) {
    return DispatchNode(a, [&](const auto& na) {
      using T = std::decay_t<decltype(na)>;
      const T& nb = static_cast<const T&>(b);
      return ForEachFieldPair(
          na, nb, [&](std::string_view name, const auto& x, const auto& y, FieldRole role) {
            if (role == FieldRole::kIgnored) return true;
            if constexpr (std::is_same_v<T, DistributedTensorType>) {
              if (options_.ignore_window_buffers && name == "window_buffer") return true;
            }
            if constexpr (!kPath) {
              return Value(x, y, std::string_view(), name);
            } else {
              path_.push_back({PathSegment::kField, name, 0});
              bool ok = Value(x, y, NodeKindName(a.kind()), name);
              path_.pop_back();
              return ok;
            }
          });
    });
  }

  template <typename T>
  bool Value(const T& x, const T& y, std::string_view owner, std::string_view field) {
    if constexpr (detail::IsNodePtr<T>::value) {
      return Nodes(x, y);
    } else if constexpr (detail::IsVector<T>::value) {
      if (x.size() != y.size()) {
        return Fail(fmt::format("{}.{}: {} vs {} elements", owner, field, x.size(), y.size()));
      }
      for (size_t i = 0; i < x.size(); ++i) {
        if constexpr (!kPath) {
          if (!Value(x[i], y[i], owner, field)) return false;
        } else {
          path_.push_back(ElementSegment(x[i], i));
          bool ok = Value(x[i], y[i], owner, field);
          path_.pop_back();
          if (!ok) return false;
        }
      }
      return true;
    } else if constexpr (detail::IsOptional<T>::value) {
      if (x.has_value() != y.has_value())
        return Fail(fmt::format("{}.{}: present vs absent", owner, field));
      return !x.has_value() || Value(*x, *y, owner, field);
    } else if constexpr (detail::IsPair<T>::value) {
      if (x.first != y.first)
        return Fail(fmt::format("{}.{}: key '{}' vs '{}'", owner, field, x.first, y.first));
      return Value(x.second, y.second, owner, field);
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      if (x.index() != y.index()) {
        return Fail(fmt::format("{}.{}: {} vs {}", owner, field, ValueText(x), ValueText(y)));
      }
      if (std::holds_alternative<ExprPtr>(x))
        return Nodes(std::get<ExprPtr>(x), std::get<ExprPtr>(y));
      if (std::holds_alternative<double>(x)) {
        if (SameDouble(std::get<double>(x), std::get<double>(y))) return true;
      } else if (x == y) {
        return true;
      }
      return Fail(fmt::format("{}.{}: {} vs {}", owner, field, ValueText(x), ValueText(y)));
    } else if constexpr (std::is_same_v<T, double>) {
      if (SameDouble(x, y)) return true;
      return Fail(fmt::format("{}.{}: {} vs {}", owner, field, x, y));
    } else {
      if (x == y) return true;
      return Fail(fmt::format("{}.{}: {} vs {}", owner, field, ValueText(x), ValueText(y)));
    }
  }

  template <typename E>
  static PathSegment ElementSegment(const E& element, size_t index) {
    if constexpr (std::is_same_v<E, FunctionPtr>) {
      if (element) return {PathSegment::kKey, element->name, index};
    } else if constexpr (detail::IsPair<E>::value) {
      return {PathSegment::kKey, element.first, index};
    }
    return {PathSegment::kIndex, {}, index};
  }

  std::string RenderPath() const {
    std::string p;
    for (const PathSegment& s : path_) {
      switch (s.kind) {
        case PathSegment::kField:
          p += '.';
          p += s.text;
          break;
        case PathSegment::kIndex:
          fmt::format_to(std::back_inserter(p), "[{}]", s.index);
          break;
        case PathSegment::kKey:
          p += '[';
          p += s.text;
          p += ']';
          break;
      }
    }
    if (!p.empty() && p[0] == '.') p.erase(0, 1);
    return p;
  }

  // Only reached with kPath, or from the rare value mismatches below (whose reason
  // is then formatted and dropped: a mismatch ends the walk anyway).
  bool Fail(std::string reason) {
    if constexpr (!kPath) return false;
    if (!failed_) {
      failed_ = true;
      first_path_ = RenderPath();
      reason_ = std::move(reason);
    }
    return false;
  }

  // The bijection, consulted for every Var use.
  PtrTable<const Node*> lhs_to_rhs_, rhs_to_lhs_;
  std::vector<PathSegment> path_;
  const EqualOptions& options_;
  bool failed_ = false;
  std::string first_path_, reason_;
};

}  // namespace

bool StructuralEqual(const NodePtr& lhs, const NodePtr& rhs, const EqualOptions& options) {
  EqualChecker<false> checker(options);
  return checker.Nodes(lhs, rhs);
}

EqualityResult StructuralEqualWhere(const NodePtr& lhs, const NodePtr& rhs,
                                    const EqualOptions& options) {
  EqualChecker<true> checker(options);
  bool ok = checker.Nodes(lhs, rhs);
  return checker.Result(ok);
}

bool DimsEqual(const ExprPtr& a, const ExprPtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind() == NodeKind::kConstInt && b->kind() == NodeKind::kConstInt) {
    const auto& x = static_cast<const ConstInt&>(*a);
    const auto& y = static_cast<const ConstInt&>(*b);
    return x.value == y.value && x.dtype == y.dtype;
  }
  return StructuralEqual(a, b);
}

bool ShapesEqual(std::span<const ExprPtr> a, std::span<const ExprPtr> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), DimsEqual);
}

}  // namespace cds::ir
