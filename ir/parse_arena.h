#pragma once

// The parser's node factory (parser-internal): the nodes of one parse come from
// their own NodeStream (ir/node_arena.h), so that a large program's nodes sit
// together in parse order, and the parser can keep a second stream apart for the
// nodes it wants packed (Function nodes, sorted by the Program constructor).

#include <cstddef>
#include <memory>
#include <utility>

#include "ir/node_arena.h"

namespace cds::ir::parse {

class NodeFactory {
 public:
  // `size_hint` (the input's size) no longer matters: chunks have one size, and
  // the dead chunks of the previous parse are reused from the arena's cache.
  explicit NodeFactory(size_t /*size_hint*/) {}

  template <typename T, typename... Args>
  NodeRef<T> Make(Args&&... args) {
    return stream_.Make<T>(std::forward<Args>(args)...);
  }

 private:
  NodeStream stream_;
};

}  // namespace cds::ir::parse
