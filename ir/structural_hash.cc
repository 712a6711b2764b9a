#include "ir/structural_hash.h"

#include <cstring>
#include <string_view>
#include <vector>

#include "ir/dispatch.h"
#include "ir/field_values.h"
#include "ir/ptr_table.h"
#include "ir/structural_equal.h"

namespace cds::ir {

namespace {

// splitmix64 finaliser: a fixed function, so hashes are the same on every machine.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Combine(uint64_t seed, uint64_t v) {
  return Mix(seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6)));
}

uint64_t HashBytes(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return Mix(h);
}

constexpr uint64_t kNullTag = 0x6e756c6cULL;
constexpr uint64_t kDefTag = 0x646566ULL;
constexpr uint64_t kRefTag = 0x726566ULL;

class Hasher {
 public:
  uint64_t Node(const NodePtr& n) {
    if (!n) return kNullTag;
    uint64_t h = Mix(static_cast<uint64_t>(n->kind()) + 1);
    if (IsVarLikeKind(n->kind())) {
      if (const uint64_t* known = index_.Find(n.get())) return Combine(Combine(h, kRefTag), *known);
      uint64_t idx = index_.size();
      index_.Set(n.get(), idx);
      h = Combine(Combine(h, kDefTag), idx);
    }
    return Combine(h, Fields(*n));
  }

 private:
  uint64_t Fields(const ir::Node& n) {
    return DispatchNode(n, [&](const auto& node) {
      uint64_t h = 0x5eed;
      ForEachField(node, [&](std::string_view, const auto& value, FieldRole role) {
        if (role != FieldRole::kIgnored) h = Combine(h, Value(value));
      });
      return h;
    });
  }

  template <typename T>
  uint64_t Value(const T& v) {
    if constexpr (detail::IsNodePtr<T>::value) {
      return Node(v);
    } else if constexpr (detail::IsVector<T>::value) {
      uint64_t h = Mix(v.size());
      for (const auto& e : v) h = Combine(h, Value(e));
      return h;
    } else if constexpr (detail::IsOptional<T>::value) {
      return v.has_value() ? Combine(1, Value(*v)) : kNullTag;
    } else if constexpr (detail::IsPair<T>::value) {
      return Combine(Value(v.first), Value(v.second));
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      return Combine(Mix(v.index()), std::visit([&](const auto& x) { return Value(x); }, v));
    } else if constexpr (std::is_same_v<T, EnumAttr>) {
      return HashBytes(v.qualified);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return HashBytes(v);
    } else if constexpr (std::is_same_v<T, double>) {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      return Mix(bits);
    } else if constexpr (std::is_same_v<T, DeviceSet>) {
      return Combine(Mix(v.all), Value(v.ids));
    } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
      return Mix(static_cast<uint64_t>(v));
    } else {
      static_assert(sizeof(T) == 0, "field value kind without a hash rule");
    }
  }

  PtrTable<uint64_t> index_;  // definition index of each Var-like node met so far
};

}  // namespace

uint64_t StructuralHash(const NodePtr& node) {
  Hasher h;
  return h.Node(node);
}

EqualAndHashes StructuralEqualAndHash(const NodePtr& lhs, const NodePtr& rhs) {
  EqualAndHashes r;
  r.equal = StructuralEqual(lhs, rhs);
  if (r.equal) {
    r.lhs_hash = StructuralHash(lhs);
    r.rhs_hash = StructuralHash(rhs);
  }
  return r;
}

}  // namespace cds::ir
