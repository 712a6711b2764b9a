#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace cds::ir {

// A source position. The file name is shared between all spans of one parse so
// that a span stays two words plus a pointer, whatever the file name length.
struct Span {
  std::shared_ptr<const std::string> file;
  int32_t line = 0;    // 1-based; 0 means "no position" (built in code, not parsed)
  int32_t column = 0;  // 1-based, in bytes

  bool IsKnown() const { return line > 0; }
  std::string FileName() const { return file ? *file : std::string("<unknown>"); }
  std::string ToString() const;  // "file:line:col"
};

}  // namespace cds::ir
