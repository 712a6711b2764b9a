#include "verifier/devices.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace cds::verify {

namespace {

// Lists longer than this print as their first and last ids around "...".
constexpr size_t kMaxListedIds = 16;

// `ids` holds every id, or for a longer list its first ids with the last one in
// the final place.
std::string IdListText(const std::vector<int64_t>& ids, uint64_t count) {
  if (count <= kMaxListedIds) return fmt::format("[{}]", fmt::join(ids, ", "));
  return fmt::format("[{}, ..., {}] ({} devices)",
                     fmt::join(ids.begin(), ids.begin() + kMaxListedIds / 2, ", "), ids.back(),
                     count);
}

}  // namespace

Devices Devices::All() {
  Devices d;
  d.all_ = true;
  return d;
}

Devices Devices::One(int64_t id) {
  Devices d;
  d.runs_.emplace_back(id, id);
  return d;
}

Devices Devices::Range(int64_t start, int64_t stop) {
  Devices d;
  if (stop > start) d.runs_.emplace_back(start, stop - 1);
  return d;
}

Devices Devices::FromScope(const ir::DeviceSet& devices) {
  if (devices.all) return All();
  std::vector<int64_t> ids = devices.ids;
  std::sort(ids.begin(), ids.end());
  Devices d;
  for (int64_t id : ids) d.AddRun(id, id);
  return d;
}

bool Devices::IsCanonical(const ir::DeviceSet& devices) {
  if (devices.all) return devices.ids.empty();
  for (size_t i = 1; i < devices.ids.size(); ++i) {
    if (devices.ids[i - 1] >= devices.ids[i]) return false;
  }
  return true;
}

namespace {

// Whether a run ending at a_last and a later-starting run from b_first overlap
// or touch (no a_last + 1 past the largest id).
bool Joins(int64_t a_last, int64_t b_first) {
  return b_first <= a_last ||
         (a_last < std::numeric_limits<int64_t>::max() && b_first == a_last + 1);
}

}  // namespace

// Runs arrive in any order from Absorb; a sorted insert keeps them disjoint and
// merges neighbours that touch.
void Devices::AddRun(int64_t first, int64_t last) {
  // The first run that ends at or after first - 1 (ends earlier: entirely before).
  auto it = std::lower_bound(runs_.begin(), runs_.end(), first, [](const auto& run, int64_t x) {
    return run.second < x && !Joins(run.second, x);
  });
  auto end = it;
  while (end != runs_.end() && Joins(last, end->first)) {
    first = std::min(first, end->first);
    last = std::max(last, end->second);
    ++end;
  }
  it = runs_.erase(it, end);
  runs_.insert(it, {first, last});
}

void Devices::Absorb(const Devices& other) {
  if (all_) return;
  if (other.all_) {
    all_ = true;
    runs_.clear();
    return;
  }
  for (const auto& [first, last] : other.runs_) AddRun(first, last);
}

std::string Devices::ToString() const {
  if (all_) return "all";
  std::string out = "[";
  for (const auto& [first, last] : runs_) {
    for (int64_t id = first;; ++id) {
      if (out.size() > 1) out += ", ";
      out += std::to_string(id);
      if (id == last) break;
    }
  }
  return out + "]";
}

std::string Devices::Brief() const {
  if (all_) return "all";
  std::vector<int64_t> ids;
  uint64_t count = 0;
  for (const auto& [first, last] : runs_) {
    for (int64_t id = first; ids.size() < kMaxListedIds; ++id) {
      ids.push_back(id);
      if (id == last) break;
    }
    count += static_cast<uint64_t>(last) - static_cast<uint64_t>(first) + 1;
  }
  if (count > kMaxListedIds) ids.back() = runs_.back().second;
  return IdListText(ids, count);
}

std::string BriefDeviceList(const ir::DeviceSet& devices) {
  if (devices.all) return "all";
  std::vector<int64_t> ids = devices.ids;
  const uint64_t count = ids.size();
  if (count > kMaxListedIds) {
    const int64_t last = ids.back();
    ids.resize(kMaxListedIds);
    ids.back() = last;
  }
  return IdListText(ids, count);
}

}  // namespace cds::verify
