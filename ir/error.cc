#include "ir/error.h"

#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "ir/diagnostics.h"

namespace cds {

namespace {
// Parsers may run on several threads (a fuzzing cluster's workers); the table
// only grows, and only by the few distinct file names a process reads. Lookups
// by id happen when a diagnostic is formatted, never per node.
struct FileTable {
  std::mutex mutex;
  std::unordered_map<std::string, ir::FileId> ids;
  std::vector<const std::string*> names{nullptr};  // id 0: unknown
};
FileTable& Files() {
  static FileTable* table = new FileTable();  // never destroyed: spans outlive statics
  return *table;
}
}  // namespace

ir::FileId ir::InternFileName(std::string_view name) {
  FileTable& t = Files();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ids.find(std::string(name));
  if (it != t.ids.end()) return it->second;
  if (t.names.size() >= kOverflowFileId) return kOverflowFileId;
  const FileId id = static_cast<FileId>(t.names.size());
  auto inserted = t.ids.emplace(std::string(name), id).first;
  t.names.push_back(&inserted->first);
  return id;
}

std::string ir::FileNameOf(FileId id) {
  if (id == 0) return "<unknown>";
  if (id == kOverflowFileId) return fmt::format("<more than {} files>", kOverflowFileId - 1);
  FileTable& t = Files();
  std::lock_guard<std::mutex> lock(t.mutex);
  return id < t.names.size() ? *t.names[id] : "<unknown>";
}

std::string ir::Span::ToString() const { return fmt::format("{}:{}:{}", FileName(), line, column); }

std::string ValueError::Format() const {
  return fmt::format("{}: error: {}", span_.ToString(),
                     ir::EchoText(message_, ir::kMaxMessageColumns));
}

namespace detail {
void CheckFailed(const char* cond, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: internal check failed: %s: %s\n", file, line, cond, msg.c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

}  // namespace cds
