#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "ir/error.h"
#include "ir/function.h"

namespace cds::ir {

struct ParseOptions {
  std::string filename = "<input>";
  // Added to every reported line (for --split-input-file chunks: line numbers
  // stay relative to the whole file).
  int line_offset = 0;
  // Limits that keep any byte string from crashing, hanging or exhausting memory;
  // exceeding one is a diagnostic that names the limit.
  size_t max_input_bytes = 64u << 20;
  int max_nesting_depth = 200;
};

// The largest max_nesting_depth a caller may ask for: the parser's recursion at
// this depth fits in the default 8 MiB stack (tools reject larger values).
inline constexpr int kMaxNestingDepthLimit = 1000;

// Parses one program. Throws cds::ValueError (with a span) on any malformed input.
ProgramPtr ParseProgram(std::string_view text, const ParseOptions& options = {});

}  // namespace cds::ir
