#pragma once

// Small flat hash tables and a name arena for the printer (ir/printer.cc).
//
// The printer looks a name up for every variable it writes and keeps a set of the
// names in use per function; std::unordered_map / unordered_set allocate a node per
// entry, hash strings with a byte-wise function and scatter their nodes over the heap,
// which made them the largest cost of printing a big function. These tables are open
// addressing with linear probing in one array, keep each string's hash beside it (a
// probe compares hashes before bytes), and are cleared in place between functions.

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/ptr_table.h"

namespace cds::ir::print_detail {

inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

// A fast hash of a short string (identifiers, op names), eight bytes at a time.
inline uint64_t HashString(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  if (n) std::memcpy(&w, p, n);
  h = (h ^ w) * 0xff51afd7ed558ccdull;
  return Mix64(h);
}

// Rounds the table up so that it stays at most half full.
inline size_t CapacityFor(size_t entries) {
  size_t cap = 16;
  while (cap < entries * 2) cap <<= 1;
  return cap;
}

// Map from a node address to a small value (names, window indices).
template <typename V>
using PtrMap = ir::PtrTable<V>;

// Set of strings (views: the characters live elsewhere and must outlive the set).
// Each entry also carries `next_suffix`, the smallest k >= 1 for which the printer
// has not yet found `name_k` free: names are never removed within a function, so
// the search for the next free `name_k` can resume there instead of at 1.
class StringSet {
 public:
  struct Entry {
    uint64_t hash = 0;
    const char* data = nullptr;  // null: empty slot
    uint32_t size = 0;
    uint32_t next_suffix = 1;
    std::string_view view() const { return {data, size}; }
  };

  StringSet() { Rehash(16); }

  Entry* Find(std::string_view s, uint64_t h) {
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.data) return nullptr;
      if (e.hash == h && e.size == s.size() && std::memcmp(e.data, s.data(), s.size()) == 0) {
        return &e;
      }
    }
  }
  bool Contains(std::string_view s) { return Find(s, HashString(s)) != nullptr; }

  void PrefetchSlot(uint64_t h) const { __builtin_prefetch(&entries_[h & mask_]); }

  // The entry of `s`, and whether it was inserted now. The pointer is valid until
  // the next insertion.
  std::pair<Entry*, bool> Insert(std::string_view s, uint64_t h) {
    if ((size_ + 1) * 2 > entries_.size()) Rehash(entries_.size() * 2);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Entry& e = entries_[i];
      if (!e.data) {
        e.hash = h;
        e.data = s.data() ? s.data() : "";
        e.size = static_cast<uint32_t>(s.size());
        e.next_suffix = 1;
        ++size_;
        return {&e, true};
      }
      if (e.hash == h && e.size == s.size() && std::memcmp(e.data, s.data(), s.size()) == 0) {
        return {&e, false};
      }
    }
  }
  std::pair<Entry*, bool> Insert(std::string_view s) { return Insert(s, HashString(s)); }

  size_t size() const { return size_; }

  void Clear() {
    if (size_ == 0) return;
    if (entries_.size() > 1024 && size_ * 8 < entries_.size()) {
      entries_.clear();
      Rehash(CapacityFor(size_));
    } else {
      for (Entry& e : entries_) e.data = nullptr;
    }
    size_ = 0;
  }

 private:
  void Rehash(size_t cap) {
    std::vector<Entry> old;
    old.swap(entries_);
    entries_.assign(cap, Entry());
    mask_ = cap - 1;
    for (Entry& e : old) {
      if (!e.data) continue;
      size_t i = e.hash & mask_;
      while (entries_[i].data) i = (i + 1) & mask_;
      entries_[i] = e;
    }
  }

  std::vector<Entry> entries_;
  size_t size_ = 0;
  size_t mask_ = 0;
};

// Storage for the few names that are not a variable's own hint (renamed or
// sanitized names, window names): views into it stay valid until Clear(), which
// keeps the blocks for reuse.
class NameArena {
 public:
  std::string_view Store(std::string_view s) {
    if (s.size() > kBlock / 4) {
      big_.push_back(std::make_unique<char[]>(s.size()));
      std::memcpy(big_.back().get(), s.data(), s.size());
      return {big_.back().get(), s.size()};
    }
    if (block_ == blocks_.size() || used_ + s.size() > kBlock) {
      if (block_ < blocks_.size()) ++block_;
      if (block_ == blocks_.size()) blocks_.push_back(std::make_unique<char[]>(kBlock));
      used_ = 0;
    }
    char* at = blocks_[block_].get() + used_;
    std::memcpy(at, s.data(), s.size());
    used_ += s.size();
    return {at, s.size()};
  }

  void Clear() {
    block_ = 0;
    used_ = 0;
    big_.clear();
  }

 private:
  static constexpr size_t kBlock = 16384;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::vector<std::unique_ptr<char[]>> big_;
  size_t block_ = 0;  // current block; == blocks_.size() before the first Store
  size_t used_ = 0;
};

}  // namespace cds::ir::print_detail
