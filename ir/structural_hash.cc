#include "ir/structural_hash.h"

#include <cstring>
#include <string_view>
#include <vector>

#include "ir/dispatch.h"
#include "ir/field_values.h"
#include "ir/ptr_table.h"

namespace cds::ir {

namespace {

// splitmix64 finaliser: a fixed function, so hashes are the same on every machine.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Combine(uint64_t seed, uint64_t v) { return Mix(seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6))); }

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
  // Hash of a value that holds no node (strings, enums, integers, DeviceSet, ...).
  template <typename T>
  uint64_t Leaf(const T& v) {
    return Value(v);
  }
  template <typename X>
  uint64_t AttrAlt(const X& x) {
    if constexpr (std::is_same_v<X, EnumAttr>) {
      return HashBytes(x.qualified);
    } else {
      return Value(x);
    }
  }

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
      uint64_t h = Mix(v.index());
      return Combine(h, std::visit([&](const auto& x) { return AttrAlt(x); }, v));
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

// Equality (as EqualChecker in structural_equal.cc, without path and options) and
// the hash of each side (as Hasher above), walking both IRs once. The rules are
// the same, step for step: a Var-like is mapped bijectively at first sight, and at
// that moment it also gets its side's next first-sight index; later occurrences
// follow the mapping and hash by that index. Fields are visited in table order,
// Ignored ones skipped, and every value is hashed by Hasher::Value's rules.
class EqualHasher {
 public:
  bool Node(const NodePtr& a, const NodePtr& b, uint64_t& ha, uint64_t& hb) {
    if (a == nullptr || b == nullptr) {
      if (a != b) return false;
      ha = kNullTag;
      hb = kNullTag;
      return true;
    }
    const NodeKind ka = a->kind();
    const NodeKind kb = b->kind();
    if (ka != kb) return false;
    ha = Mix(static_cast<uint64_t>(ka) + 1);
    hb = Mix(static_cast<uint64_t>(kb) + 1);
    if (IsVarLikeKind(ka)) {
      const MappedVar* ea = lhs_.Find(a.get());
      const MappedVar* eb = rhs_.Find(b.get());
      if (ea != nullptr || eb != nullptr) {
        // Seen before: both sides must map to each other.
        if (ea == nullptr || eb == nullptr || ea->other != b.get() || eb->other != a.get())
          return false;
        ha = Combine(Combine(ha, kRefTag), ea->index);
        hb = Combine(Combine(hb, kRefTag), eb->index);
        return true;
      }
      const uint64_t ia = lhs_.size();
      const uint64_t ib = rhs_.size();
      lhs_.Set(a.get(), MappedVar{b.get(), ia});
      rhs_.Set(b.get(), MappedVar{a.get(), ib});
      ha = Combine(Combine(ha, kDefTag), ia);
      hb = Combine(Combine(hb, kDefTag), ib);
    }
    uint64_t fa = 0, fb = 0;
    if (!Fields(*a, *b, fa, fb)) return false;
    ha = Combine(ha, fa);
    hb = Combine(hb, fb);
    return true;
  }

 private:
  // Var-like node -> its counterpart on the other side and its own first-sight index.
  struct MappedVar {
    const ir::Node* other = nullptr;
    uint64_t index = 0;
  };

  bool Fields(const ir::Node& a, const ir::Node& b, uint64_t& ha, uint64_t& hb) {
    return DispatchNode(a, [&](const auto& na) {
      using T = std::decay_t<decltype(na)>;
      const T& nb = static_cast<const T&>(b);
      uint64_t sa = 0x5eed, sb = 0x5eed;
      bool ok = ForEachFieldPair(na, nb, [&](std::string_view, const auto& x, const auto& y,
                                             FieldRole role) {
        if (role == FieldRole::kIgnored) return true;
        uint64_t vx = 0, vy = 0;
        if (!Value(x, y, vx, vy)) return false;
        sa = Combine(sa, vx);
        sb = Combine(sb, vy);
        return true;
      });
      ha = sa;
      hb = sb;
      return ok;
    });
  }

  template <typename T>
  bool Value(const T& x, const T& y, uint64_t& hx, uint64_t& hy) {
    if constexpr (detail::IsNodePtr<T>::value) {
      return Node(x, y, hx, hy);
    } else if constexpr (detail::IsVector<T>::value) {
      if (x.size() != y.size()) return false;
      uint64_t sx = Mix(x.size()), sy = Mix(y.size());
      for (size_t i = 0; i < x.size(); ++i) {
        uint64_t ex = 0, ey = 0;
        if (!Value(x[i], y[i], ex, ey)) return false;
        sx = Combine(sx, ex);
        sy = Combine(sy, ey);
      }
      hx = sx;
      hy = sy;
      return true;
    } else if constexpr (detail::IsOptional<T>::value) {
      if (x.has_value() != y.has_value()) return false;
      if (!x.has_value()) {
        hx = kNullTag;
        hy = kNullTag;
        return true;
      }
      uint64_t ex = 0, ey = 0;
      if (!Value(*x, *y, ex, ey)) return false;
      hx = Combine(1, ex);
      hy = Combine(1, ey);
      return true;
    } else if constexpr (detail::IsPair<T>::value) {
      if (x.first != y.first) return false;
      uint64_t fx = 0, fy = 0, sx = 0, sy = 0;
      if (!Value(x.first, y.first, fx, fy) || !Value(x.second, y.second, sx, sy)) return false;
      hx = Combine(fx, sx);
      hy = Combine(fy, sy);
      return true;
    } else if constexpr (std::is_same_v<T, AttrValue>) {
      if (x.index() != y.index()) return false;
      uint64_t ax = 0, ay = 0;
      if (const auto* ex = std::get_if<ExprPtr>(&x)) {
        if (!Node(*ex, std::get<ExprPtr>(y), ax, ay)) return false;
      } else if (const auto* dx = std::get_if<double>(&x)) {
        if (!Value(*dx, std::get<double>(y), ax, ay)) return false;
      } else {
        if (!(x == y)) return false;
        ax = std::visit([&](const auto& v) { return leaf_.AttrAlt(v); }, x);
        ay = std::visit([&](const auto& v) { return leaf_.AttrAlt(v); }, y);
      }
      hx = Combine(Mix(x.index()), ax);
      hy = Combine(Mix(y.index()), ay);
      return true;
    } else if constexpr (std::is_same_v<T, double>) {
      uint64_t bx, by;
      std::memcpy(&bx, &x, sizeof bx);
      std::memcpy(&by, &y, sizeof by);
      if (bx != by) return false;  // bitwise, as equality compares doubles
      hx = Mix(bx);
      hy = Mix(by);
      return true;
    } else {
      if (!(x == y)) return false;
      hx = leaf_.Leaf(x);
      hy = leaf_.Leaf(y);
      return true;
    }
  }

  PtrTable<MappedVar> lhs_, rhs_;
  Hasher leaf_;  // hashes leaf values (no node inside) by Hasher's own rules
};

}  // namespace

uint64_t StructuralHash(const NodePtr& node) {
  Hasher h;
  return h.Node(node);
}

EqualAndHashes StructuralEqualAndHash(const NodePtr& lhs, const NodePtr& rhs) {
  EqualAndHashes r;
  EqualHasher walker;
  r.equal = walker.Node(lhs, rhs, r.lhs_hash, r.rhs_hash);
  if (!r.equal) r.lhs_hash = r.rhs_hash = 0;
  return r;
}

}  // namespace cds::ir
