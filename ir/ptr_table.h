#pragma once

// A map keyed by node address: open addressing in one flat array of
// (key, value) entries, slots from Fibonacci hashing of the address, so a probe
// touches one cache line where a Swiss table touches its control bytes and then
// its slot. Structural equality and hashing look nodes up once per Var use;
// absl::flat_hash_map in their place was 25-40% slower on hash_bench at 10^6
// statements (BM_StructuralHash 648-735 -> 855-925 ms, BM_StructuralEqual
// 976-1076 -> 1290-1442 ms, three alternated runs).
//
// Keys are never erased one by one (Clear() empties the table); a null key is never
// stored and is never found.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cds::ir {

template <typename V>
class PtrTable {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  const V* Find(const void* key) const {
    if (slots_.empty() || key == nullptr) return nullptr;
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }
  V* Find(const void* key) { return const_cast<V*>(static_cast<const PtrTable&>(*this).Find(key)); }

  // The value of `key`, default-constructed and flagged `true` when new. The
  // pointer is valid until the next insertion.
  std::pair<V*, bool> FindOrInsert(const void* key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 64 : slots_.size() * 2);
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      Entry& e = slots_[i];
      if (e.key == key) return {&e.value, false};
      if (e.key == nullptr) {
        e.key = key;
        e.value = V();
        ++size_;
        return {&e.value, true};
      }
    }
  }
  // Inserts or overwrites; returns true when `key` was new.
  bool Set(const void* key, V value) {
    auto [slot, fresh] = FindOrInsert(key);
    *slot = std::move(value);
    return fresh;
  }
  // Inserts only when absent (an existing entry is kept); returns true when inserted.
  bool Insert(const void* key, V value) {
    auto [slot, fresh] = FindOrInsert(key);
    if (fresh) *slot = std::move(value);
    return fresh;
  }

  // Brings the line where `key` would be looked up into the cache.
  void PrefetchSlot(const void* key) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Slot(key)]);
  }

  // f(key, value&) for every entry, in slot order.
  template <typename F>
  void ForEach(F&& f) {
    for (Entry& e : slots_) {
      if (e.key != nullptr) f(e.key, e.value);
    }
  }

  // Empties the table. A large table left by one big function shrinks, so that the
  // many small functions after it do not each clear a big array.
  void Clear() {
    if (size_ == 0) return;
    if (slots_.size() > 1024 && size_ * 8 < slots_.size()) {
      size_t cap = 64;
      while (cap * 3 < size_ * 4 * 2) cap <<= 1;
      slots_.assign(cap, Entry{});
      SetCapacity(cap);
    } else {
      for (Entry& e : slots_) e = Entry{};
    }
    size_ = 0;
  }

 private:
  struct Entry {
    const void* key = nullptr;
    V value{};
  };

  size_t Slot(const void* key) const {
    // Nodes (each after its control block) are at least 16 bytes apart, so
    // dropping the low four bits never merges two keys.
    return static_cast<size_t>(((reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void SetCapacity(size_t cap) {
    mask_ = cap - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(cap));
  }
  void Rehash(size_t cap) {
    std::vector<Entry> old = std::move(slots_);
    slots_.assign(cap, Entry{});
    SetCapacity(cap);
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
