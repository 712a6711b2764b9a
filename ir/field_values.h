#pragma once

// Type traits over the kinds of values a node field can hold, shared by the
// generic algorithms derived from the field tables.

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/node.h"
#include "ir/node_list.h"

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

}  // namespace cds::ir::detail
