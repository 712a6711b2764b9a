#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cds::ir {

// A file name interned for the life of the process, by number: equal names get
// the same id, and 0 means "unknown". Nodes keep this id in 23 bits of their
// header instead of a pointer (Node says why), so a process can intern up to
// kMaxFileIds - 1 distinct names; names beyond that all get kOverflowFileId,
// printed "<more than 8388606 files>", rather than a wrong file's name.
using FileId = uint32_t;
inline constexpr FileId kMaxFileIds = FileId{1} << 23;
inline constexpr FileId kOverflowFileId = kMaxFileIds - 1;
FileId InternFileName(std::string_view name);
// The name of an interned file; "<unknown>" for 0.
std::string FileNameOf(FileId id);

// A source position.
struct Span {
  FileId file = 0;     // from InternFileName; 0 when unknown
  int32_t line = 0;    // 1-based; 0 means "no position" (built in code, not parsed)
  int32_t column = 0;  // 1-based, in bytes

  bool IsKnown() const { return line > 0; }
  std::string FileName() const { return FileNameOf(file); }
  std::string ToString() const;  // "file:line:col"
};

}  // namespace cds::ir
