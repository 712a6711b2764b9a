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
  // exceeding one is a diagnostic that names the limit. max_nesting_depth counts
  // brackets, expression levels, blocks and indentation levels.
  size_t max_input_bytes = 64u << 20;
  int max_nesting_depth = 200;
};

// The largest max_nesting_depth a caller may ask for. Parsing, printing,
// comparing, hashing and the default pipeline with its verifier handle the
// deepest input this admits, of every nesting construct, on half of the default
// 8 MiB stack in an AddressSanitizer build (tests/text/nesting_depth_test.cc);
// such a build needs about 15 KiB of stack per level of the costliest construct
// (nested calls with keyword arguments), an optimised build a fraction of that.
inline constexpr int kMaxNestingDepthLimit = 256;

// Parses one program. Throws cds::ValueError (with a span) on any malformed input,
// and when options.max_nesting_depth is outside [1, kMaxNestingDepthLimit].
ProgramPtr ParseProgram(std::string_view text, const ParseOptions& options = {});

// Whether `ann`, written as an assignment's annotation, may type a value of type
// `value` (the parser rejects the assignment otherwise; the printer writes a call
// whose type disagrees with its variable's as pl._dump.call, which keeps both).
bool AnnotationAgrees(const TypePtr& ann, const TypePtr& value);

}  // namespace cds::ir
