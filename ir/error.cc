#include "ir/error.h"

#include <cstdio>
#include <mutex>
#include <unordered_set>

#include <fmt/format.h>

namespace cds {

const std::string* ir::InternFileName(std::string_view name) {
  // Parsers may run on several threads (a fuzzing cluster's workers); the table
  // only grows, and only by the few distinct file names a process reads.
  static std::mutex mutex;
  static std::unordered_set<std::string>* names = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  return &*names->emplace(name).first;
}

std::string ir::Span::ToString() const {
  return fmt::format("{}:{}:{}", FileName(), line, column);
}

std::string ValueError::Format() const {
  return fmt::format("{}: error: {}", span_.ToString(), message_);
}

namespace detail {
void CheckFailed(const char* cond, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: internal check failed: %s: %s\n", file, line, cond, msg.c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail

}  // namespace cds
