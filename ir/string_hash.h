#pragma once

// Hash tables keyed by text. Debian's absl has its own string_view type, so
// absl::Hash<std::string_view> falls back to std::hash: an out-of-line call into
// libstdc++ per probe and per rehash. Hashing through absl::string_view keeps absl's
// inlined mix. Lookups take any std::string_view, also into tables of owned strings.

#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>
#include <absl/strings/string_view.h>

namespace cds::ir {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
  }
};
struct StringEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

// Keys are views: the text they point into must outlive the table.
template <typename V>
using StringViewMap = absl::flat_hash_map<std::string_view, V, StringHash, StringEq>;
using StringViewSet = absl::flat_hash_set<std::string_view, StringHash, StringEq>;
// Keys are owned.
template <typename V>
using StringMap = absl::flat_hash_map<std::string, V, StringHash, StringEq>;
using StringSet = absl::flat_hash_set<std::string, StringHash, StringEq>;

}  // namespace cds::ir
