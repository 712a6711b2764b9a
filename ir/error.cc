#include "ir/error.h"

#include <cstdio>

#include <fmt/format.h>

namespace cds {

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
