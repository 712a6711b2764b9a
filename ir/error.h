#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "ir/span.h"

namespace cds {

// An error a user can cause (bad input program, rejected construct). Always carries
// the span of the offending construct so tools can print FILE:LINE:COL.
class ValueError : public std::runtime_error {
 public:
  ValueError(std::string message, ir::Span span)
      : std::runtime_error(message), message_(std::move(message)), span_(std::move(span)) {}
  const std::string& message() const { return message_; }
  const ir::Span& span() const { return span_; }
  // "FILE:LINE:COL: error: MESSAGE"
  std::string Format() const;

 private:
  std::string message_;
  ir::Span span_;
};

namespace detail {
[[noreturn]] void CheckFailed(const char* cond, const char* file, int line, const std::string& msg);
}  // namespace detail

}  // namespace cds

// A broken internal invariant (a bug in this project, never in the user's input).
// Checked in every build: a harness that silently continues past its own bug would
// report false verdicts.
#define CDS_CHECK(cond, msg)                                                   \
  do {                                                                         \
    if (!(cond)) ::cds::detail::CheckFailed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
