#pragma once

// The verifier's own form of a set of devices: "all devices", or a union of
// closed runs [first, last] kept sorted, disjoint and non-adjacent. A dispatch
// loop over pl.range(a, b) is one run however wide it is, so the verifier never
// expands a range id by id, and two sets are equal exactly when their runs are.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/stmt.h"

namespace cds::verify {

class Devices {
 public:
  Devices() = default;  // the empty set
  static Devices All();
  static Devices One(int64_t id);
  // The ids of pl.range(start, stop): [start, stop - 1]; empty when stop <= start.
  static Devices Range(int64_t start, int64_t stop);
  // A scope's device list read as a set (order and repeats do not matter here;
  // IsCanonical judges the list itself).
  static Devices FromScope(const ir::DeviceSet& devices);
  // Whether a scope's device list has the one form the text format prints: "all"
  // with no ids, or ids strictly increasing.
  static bool IsCanonical(const ir::DeviceSet& devices);

  bool all() const { return all_; }
  bool Empty() const { return !all_ && runs_.empty(); }

  // Union, except that ALL absorbs whatever it meets.
  void Absorb(const Devices& other);

  bool operator==(const Devices& o) const { return all_ == o.all_ && runs_ == o.runs_; }
  bool operator!=(const Devices& o) const { return !(*this == o); }

  template <typename H>
  friend H AbslHashValue(H h, const Devices& d) {
    return H::combine(std::move(h), d.all_, d.runs_);
  }

  // "all" or "[0, 1, 2]" as the text format writes a scope's devices, every id.
  std::string ToString() const;
  // The same for messages: a list longer than 16 ids keeps its first and last ids
  // around "..." and gives the count, so that a wide range prints in constant space.
  std::string Brief() const;

 private:
  void AddRun(int64_t first, int64_t last);

  bool all_ = false;
  std::vector<std::pair<int64_t, int64_t>> runs_;
};

// A scope's own device list for messages, as written (unsorted lists included),
// shortened as Devices::Brief does.
std::string BriefDeviceList(const ir::DeviceSet& devices);

}  // namespace cds::verify
