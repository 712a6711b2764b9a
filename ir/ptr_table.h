#pragma once

// A map keyed by node address: open addressing in one flat array of
// (key, value) entries, slots from Fibonacci hashing of the address, so a probe
// touches one cache line where a Swiss table touches its control bytes and then
// its slot. Structural equality and hashing look nodes up once per Var use;
// absl::flat_hash_map in their place makes BM_StructuralHash and
// BM_StructuralEqual of bench/hash_bench 25-40% slower at 10^6 statements.
//
// Keys are never erased; a null key is never stored and is never found.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cds::ir {

template <typename V>
class PtrTable {
 public:
  size_t size() const { return size_; }

  const V* Find(const void* key) const {
    if (slots_.empty() || key == nullptr) return nullptr;
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }

  // Inserts or overwrites.
  void Set(const void* key, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 64 : slots_.size() * 2);
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      Entry& e = slots_[i];
      if (e.key == nullptr) {
        e.key = key;
        ++size_;
      }
      if (e.key == key) {
        e.value = std::move(value);
        return;
      }
    }
  }

 private:
  struct Entry {
    const void* key = nullptr;
    V value{};
  };

  size_t Slot(const void* key) const {
    // Nodes are at least 16 bytes apart (their header alone takes 16), so
    // dropping the low four bits never merges two keys.
    return static_cast<size_t>(((reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull) >>
                               shift_);
  }
  void Rehash(size_t cap) {
    std::vector<Entry> old = std::move(slots_);
    slots_.assign(cap, Entry{});
    mask_ = cap - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(cap));
    for (Entry& e : old) {
      if (e.key == nullptr) continue;
      size_t i = Slot(e.key);
      while (slots_[i].key != nullptr) i = (i + 1) & mask_;
      slots_[i] = std::move(e);
    }
  }

  std::vector<Entry> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  unsigned shift_ = 64;
};

}  // namespace cds::ir
