#pragma once

// The cds-opt pipeline, mlir-opt style: split the input, parse each chunk, hand
// the program to a processing hook (the pass pipeline when one is selected), print
// it, and report errors. Every error, whether the parser's, a cds::ValueError of a
// pass, or a verifier finding, goes through one collector, so --verify-diagnostics
// checks pass and verifier errors exactly as it checks parse errors.

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"
#include "ir/parser.h"
#include "verifier/contract.h"

namespace cds::tools {

// What cds-opt prints for each processed program.
enum class EmitKind {
  kPyir,  // the .pyir text (pl._dump form once materialized)
  kDot,   // Graphviz DOT (tools/dot)
};

struct OptOptions {
  std::string input = "-";
  std::string output = "-";
  bool split_input_file = false;
  bool verify_diagnostics = false;
  ir::ParseOptions parse;  // filename and line_offset are set per chunk

  // The pass pipeline ("a,b", see pass::ParsePipeline). Unset: no passes, the
  // program is printed as parsed.
  std::optional<std::string> pipeline;
  // Overrides the build's default (driver::kVerifyEachByDefault) when set.
  std::optional<bool> verify_each;
  // Check the parsed input with the verifier instead of transforming it; print
  // nothing but the findings.
  bool verify_only = false;
  // With verify_only: the pre-pass program the input was produced from; adds the
  // relational checks (verify::VerifyAll). Its text, split like the input.
  std::optional<std::string> verify_relational_before;
  std::string verify_relational_path;  // for diagnostics about BEFORE
  // With verify_only: what the verified program promises (docs/verifier.md, Contracts).
  verify::Contract contract = verify::Contract::kStrict;
  EmitKind emit = EmitKind::kPyir;
};

// A diagnostic as emitted: where, how severe, what.
struct Diagnostic {
  ir::Span span;
  std::string severity = "error";
  std::string message;
};

// The transformation between parse and print. Returns the program to print;
// throws cds::ValueError for errors the user caused and driver::VerificationError
// when verify-each rejects a pass's output.
using ProcessFn = std::function<ir::ProgramPtr(const ir::ProgramPtr&, const OptOptions&)>;

// Runs options.pipeline (with verify-each as configured); the identity when no
// pipeline is selected.
ir::ProgramPtr ProcessProgram(const ir::ProgramPtr& program, const OptOptions& options);

// Whether verify-each is on for `options` (the flag, else the build default).
bool VerifyEachEnabled(const OptOptions& options);

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

// Runs the whole tool over an in-memory input, appending the printed output to
// `out`. Returns the process exit code (tools/common/cli.h). options.pipeline must
// name known passes (the command line checks it before reading any input).
int RunOpt(std::string_view whole, const OptOptions& options, const ProcessFn& process,
           std::string* out, std::ostream& err);
// Same, writing the output to a stream.
int RunOpt(std::string_view whole, const OptOptions& options, const ProcessFn& process,
           std::ostream& out, std::ostream& err);

}  // namespace cds::tools
