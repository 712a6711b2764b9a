#pragma once

// The cds-opt pipeline, mlir-opt style: split the input, parse each chunk,
// hand the program to a processing hook (identity today; the pass pipeline
// later), print it, and report errors. Every error, whether the parser's or a
// cds::ValueError thrown by the hook, goes through one collector, so
// --verify-diagnostics checks pass errors exactly as it checks parse errors.

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"
#include "ir/parser.h"

namespace cds::tools {

struct OptOptions {
  std::string input = "-";
  std::string output = "-";
  bool split_input_file = false;
  bool verify_diagnostics = false;
  ir::ParseOptions parse;  // filename and line_offset are set per chunk
};

// A diagnostic as emitted: where, how severe, what.
struct Diagnostic {
  ir::Span span;
  std::string severity = "error";
  std::string message;
};

// The transformation between parse and print. Returns the program to print;
// throws cds::ValueError for errors the user caused.
using ProcessFn = std::function<ir::ProgramPtr(const ir::ProgramPtr&, const OptOptions&)>;

// The identity hook (cds-opt with no passes).
ir::ProgramPtr ProcessProgram(const ir::ProgramPtr& program, const OptOptions& options);

// One `# -----`-separated piece of the input.
struct Chunk {
  std::string_view text;
  int line_offset = 0;  // lines before the chunk in the whole file
};
std::vector<Chunk> SplitInput(std::string_view whole, bool split);

// `# expected-error@+N {{msg}}` / `@-N` / same line, parsed from a chunk.
struct ExpectedDiagnostic {
  int line = 0;  // absolute line the diagnostic must be reported at
  int comment_line = 0;
  std::string severity = "error";
  std::string substring;
  bool matched = false;
};
// Throws cds::ValueError on a malformed expectation comment.
std::vector<ExpectedDiagnostic> ParseExpectations(const Chunk& chunk, const std::string& filename);

// Matches emitted against expected diagnostics; writes mismatches to `err` in
// FILE:LINE:COL form. Returns true when every expectation is met exactly.
bool VerifyDiagnostics(const std::vector<Diagnostic>& emitted,
                       std::vector<ExpectedDiagnostic>& expected, const std::string& filename,
                       std::string_view whole, std::ostream& err);

// Runs the whole tool over an in-memory input. Returns the process exit code.
int RunOpt(std::string_view whole, const OptOptions& options, const ProcessFn& process,
           std::ostream& out, std::ostream& err);

// Reads `path` ("-" = stdin). Returns false and writes a message on failure.
bool ReadInput(const std::string& path, std::string* text, std::ostream& err);

}  // namespace cds::tools
