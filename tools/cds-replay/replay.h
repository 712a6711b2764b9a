#pragma once

// Corpus replay: runs one `.pyir` file through parse -> pipeline (verify-each) ->
// relational verification -> print/parse round trips, and judges the outcome
// against the file's `# EXPECT` header (docs/corpus.md). Kept apart from main()
// so the reducer and tests can judge a program text without a subprocess.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"
#include "pass/pass_manager.h"

namespace cds::replay {

// One `# EXPECT-SCOPE:` line, or one scope found in a materialized program.
struct ScopeLine {
  std::string function;
  std::string name;                // comm_d0, ...
  std::string devices;             // "all" or "[0, 1]" (DeviceSet::ToString spelling)
  std::vector<std::string> slots;  // logical alloc names, slot order

  bool operator==(const ScopeLine& other) const = default;
};

// "host_orch comm_d0 devices=[0, 1] slots=a,b" (the header spelling, no prefix).
std::string FormatScopeLine(const ScopeLine& scope);
// Parses the text after "EXPECT-SCOPE:"; nullopt and `why` when it is malformed
// or its devices are not in canonical form (sorted, no repeats, ", "-separated).
std::optional<ScopeLine> ParseScopeLine(std::string_view text, std::string* why);

enum class ExpectKind { kMissing, kOk, kError, kTodo };

struct Header {
  ExpectKind kind = ExpectKind::kMissing;
  std::string source;
  std::vector<ScopeLine> scopes;
  int error_line = 0;                 // kError: 1-based line in the file
  std::string error_substring;        // kError
  std::string todo_note;              // kTodo: whatever follows "TODO"
  std::vector<std::string> problems;  // non-empty: the header is malformed
};

// Reads the leading comment block of a corpus file.
Header ParseHeader(std::string_view text);

// Every comm-domain scope of `program`, functions in program (name) order, scopes
// outer first; slot names are the logical alloc names (the alloc's name= kwarg).
std::vector<ScopeLine> CollectScopes(const ir::Program& program);

// What the *correct* pass should produce for `input`, derived without the pass's
// scope logic: SynthesizeAllReduceSignals runs (its output is checked by the
// verifier), then the verifier's own coverage analysis gives each alloc's devices
// and the clustering rule of docs/pass.md step 7 groups them. Fails (ok = false, why
// set) when some alloc would be an error for the correct pass, or when the input
// does not get that far.
struct DerivedExpectation {
  bool ok = false;
  std::vector<ScopeLine> scopes;
  std::string why;
};
DerivedExpectation DeriveExpectation(const ir::ProgramPtr& input);

// A problem in the harness's components (verifier finding, broken round trip,
// unexpected exception). The signature is stable across reductions of one bug;
// the detail carries names and positions.
struct Finding {
  std::string signature;  // e.g. "CDS-V018 scope-devices-mismatch", "round-trip-output mismatch"
  std::string detail;
};

struct Outcome {
  bool pass = false;
  std::vector<std::string> reasons;  // why it failed, most important first
  std::vector<Finding> findings;
  std::vector<std::string> diagnostics;  // parse / pass errors, "FILE:LINE:COL: error: MSG"
};

struct ReplayOptions {
  std::string pipeline = std::string(pass::kDefaultPipeline);
};

Outcome ReplayText(std::string_view text, const std::string& filename,
                   const ReplayOptions& options = {});

}  // namespace cds::replay
