#pragma once

// Type traits over the kinds of values a node field can hold, shared by the
// generic algorithms derived from the field tables.

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ir/expr.h"

namespace cds::ir::detail {

template <typename T>
struct IsNodePtr : std::false_type {};
template <typename T>
struct IsNodePtr<NodeRef<const T>> : std::is_base_of<Node, T> {};

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsVector<NodeList<T>> : std::true_type {};

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <typename T>
struct IsPair : std::false_type {};
template <typename A, typename B>
struct IsPair<std::pair<A, B>> : std::true_type {};

// f(ref) for each node reference a field value holds: the value itself, the
// elements of a list, an optional's value, the value of a kwarg or attr pair, the
// expression alternative of an AttrValue. References may be null. Through a
// mutable value, f gets mutable references (the mutator rewrites them in place).
template <typename T, typename F>
void ForEachNodeRef(T& v, F&& f) {
  using V = std::remove_const_t<T>;
  if constexpr (IsNodePtr<V>::value) {
    f(v);
  } else if constexpr (IsVector<V>::value) {
    for (auto& e : v) ForEachNodeRef(e, f);
  } else if constexpr (IsOptional<V>::value) {
    if (v) ForEachNodeRef(*v, f);
  } else if constexpr (IsPair<V>::value) {
    ForEachNodeRef(v.second, f);
  } else if constexpr (std::is_same_v<V, AttrValue>) {
    if (auto* e = std::get_if<ExprPtr>(&v)) f(*e);
  }
}

}  // namespace cds::ir::detail
