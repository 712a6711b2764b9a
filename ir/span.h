#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cds::ir {

// Returns a pointer to a process-wide copy of `name` that is never freed; equal
// names give the same pointer. Spans hold these instead of a reference-counted
// string so that copying a span (once per node a parser builds) is a plain
// 16-byte copy with no atomic increment, and every node is 8 bytes smaller.
const std::string* InternFileName(std::string_view name);

// A source position.
struct Span {
  const std::string* file = nullptr;  // from InternFileName; null when unknown
  int32_t line = 0;    // 1-based; 0 means "no position" (built in code, not parsed)
  int32_t column = 0;  // 1-based, in bytes

  bool IsKnown() const { return line > 0; }
  std::string FileName() const { return file ? *file : std::string("<unknown>"); }
  std::string ToString() const;  // "file:line:col"
};

}  // namespace cds::ir
