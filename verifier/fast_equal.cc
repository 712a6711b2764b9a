#include "verifier/fast_equal.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/dispatch.h"
#include "ir/field_values.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

// Open addressing keyed by node address: the bijection is consulted for every Var
// use, and chained std::unordered_map nodes cost a cache miss each on large programs.
class PtrMap {
 public:
  const Node* Find(const Node* key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }
  // The caller has checked that `key` is absent.
  void Insert(const Node* key, const Node* value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    size_t i = Slot(key);
    while (slots_[i].key != nullptr) i = (i + 1) & mask_;
    slots_[i] = {key, value};
    ++size_;
  }

 private:
  struct Entry {
    const Node* key = nullptr;
    const Node* value = nullptr;
  };
  // The address itself, not a mixed hash: nodes are allocated in program order and
  // the walk visits them in that order, so neighbouring lookups hit neighbouring
  // slots and the table streams through the cache instead of missing on each one.
  size_t Slot(const Node* key) const {
    return static_cast<size_t>(reinterpret_cast<uintptr_t>(key) >> 4) & mask_;
  }
  void Grow() {
    std::vector<Entry> old = std::move(slots_);
    size_t cap = old.empty() ? 64 : old.size() * 2;
    slots_.assign(cap, Entry{});
    mask_ = cap - 1;
    for (const Entry& e : old) {
      if (e.key == nullptr) continue;
      size_t i = Slot(e.key);
      while (slots_[i].key != nullptr) i = (i + 1) & mask_;
      slots_[i] = e;
    }
  }
  std::vector<Entry> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

class Equal {
 public:
  explicit Equal(bool ignore_wb) : ignore_wb_(ignore_wb) {}

  bool Nodes(const NodePtr& a, const NodePtr& b) {
    if (a == nullptr || b == nullptr) return a == b;
    if (a->kind() != b->kind()) return false;
    if (IsVarLikeKind(a->kind())) {
      const Node* ia = l2r_.Find(a.get());
      if (ia != nullptr || r2l_.Find(b.get()) != nullptr) return ia == b.get();
      l2r_.Insert(a.get(), b.get());
      r2l_.Insert(b.get(), a.get());
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
  PtrMap l2r_, r2l_;
};

}  // namespace

bool FastStructuralEqual(const NodePtr& a, const NodePtr& b, bool ignore_window_buffers) {
  return Equal(ignore_window_buffers).Nodes(a, b);
}

}  // namespace cds::verify
