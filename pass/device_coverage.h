#pragma once

// The devices a window buffer is used on, as MaterializeCommDomainScopes works them
// out from dispatches and merges them.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace cds::pass {

// All devices, or an explicit set of device ids. The empty set is a set like any
// other: it never stands for "all devices" (a dispatch inside `pl.range(0)` covers
// nothing, not everything).
struct Devices {
  bool all = false;
  std::vector<int64_t> ids;  // ascending, no repeats; empty when `all`

  static Devices All() { return {true, {}}; }
  static Devices One(int64_t id) { return {false, {id}}; }
  // first, first + 1, ..., end - 1 (nothing when end <= first).
  static Devices Range(int64_t first, int64_t end) {
    Devices d;
    for (int64_t id = first; id < end; ++id) d.ids.push_back(id);
    return d;
  }
  bool Empty() const { return !all && ids.empty(); }
  bool operator==(const Devices& o) const = default;

  template <typename H>
  friend H AbslHashValue(H h, const Devices& d) {
    return H::combine(std::move(h), d.all, d.ids);
  }
};

// Two coverages of one buffer merge into one: ALL absorbs any set, two sets unite.
inline Devices Merge(const Devices& a, const Devices& b) {
  if (a.all || b.all) return Devices::All();
  Devices merged;
  std::set_union(a.ids.begin(), a.ids.end(), b.ids.begin(), b.ids.end(),
                 std::back_inserter(merged.ids));
  return merged;
}

}  // namespace cds::pass
