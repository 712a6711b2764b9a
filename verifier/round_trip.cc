// print/parse round trip: parse(print(P)) must be structurally equal to P with an
// equal structural hash, without rerunning any pass.

#include <algorithm>

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "verifier/checks.h"
#include "verifier/verifier.h"

namespace cds::verify {

using namespace cds::ir;

void CheckRoundTrip(const ProgramPtr& program, DiagnosticSink& sink) {
  if (!program) return;
  const std::string& pname = program->name;
  std::string text;
  ProgramPtr reparsed;
  try {
    text = PrintProgram(program);
  } catch (const std::exception& e) {
    sink.Report(CheckId::kRoundTripParseError,
                fmt::format("printing program '{}' failed: {}", pname, e.what()), program->span());
    return;
  }
  try {
    ParseOptions options;
    // The text is our own printout, not user input: the size limit that protects the
    // parser from hostile bytes must not reject a large but correct program.
    options.max_input_bytes = std::max(options.max_input_bytes, text.size() + 1);
    // Nor may the nesting limit: the program may have been parsed with a raised one.
    options.max_nesting_depth = kMaxNestingDepthLimit;
    options.filename = "<round-trip of " + pname + ">";
    reparsed = ParseProgram(text, options);
  } catch (const cds::ValueError& e) {
    sink.Report(
        CheckId::kRoundTripParseError,
        fmt::format("the printed form of program '{}' does not parse back: {}", pname, e.Format()),
        program->span());
    return;
  } catch (const std::exception& e) {
    sink.Report(
        CheckId::kRoundTripParseError,
        fmt::format("the printed form of program '{}' does not parse back: {}", pname, e.what()),
        program->span());
    return;
  }
  // The printout is not needed any more: give its memory back before the walk.
  std::string().swap(text);
  // Equality and both structural hashes first; the path-reporting comparison runs
  // only on a difference.
  EqualAndHashes eh = StructuralEqualAndHash(program, reparsed);
  if (!eh.equal) {
    EqualityResult eq = StructuralEqualWhere(program, reparsed);
    if (eq.equal) {
      // Cannot happen (both implement one equality); keep a report anyway.
      eq.path = "<program>";
      eq.reason = "StructuralEqualAndHash and StructuralEqualWhere disagree";
    }
    sink.Report(CheckId::kRoundTripMismatch,
                fmt::format("parse(print('{}')) differs from the program at {}: {}", pname, eq.path,
                            eq.reason),
                program->span());
    return;
  }
  if (eh.lhs_hash != eh.rhs_hash) {
    sink.Report(
        CheckId::kRoundTripMismatch,
        fmt::format("parse(print('{}')) is structurally equal but its structural hash differs "
                    "({:#018x} vs {:#018x})",
                    pname, eh.lhs_hash, eh.rhs_hash),
        program->span());
  }
}

}  // namespace cds::verify
