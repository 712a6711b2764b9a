// fuzz_parse: arbitrary bytes -> parser. Any input must give an IR or a
// ValueError; when it parses, the text-format contract must hold:
// parse(print(P)) is structurally equal to P with an equal hash, and printing is
// a fixed point.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"

namespace {

[[noreturn]] void Finding(const char* what, const std::string& detail, const std::string& text) {
  std::fprintf(stderr, "FINDING fuzz_parse: %s\n%s\n--- printed program ---\n%s\n", what,
               detail.c_str(), text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Keep single executions fast: the parser's own limit is far larger.
  if (size > (1u << 16)) return -1;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  cds::ir::ParseOptions options;
  options.filename = "<fuzz>";
  cds::ir::ProgramPtr program;
  try {
    program = cds::ir::ParseProgram(input, options);
  } catch (const cds::ValueError&) {
    return 0;  // a diagnostic is a fine answer to bad input
  }
  const std::string printed = cds::ir::PrintProgram(program);
  cds::ir::ProgramPtr reparsed;
  try {
    reparsed = cds::ir::ParseProgram(printed, options);
  } catch (const cds::ValueError& e) {
    Finding("printed program does not parse", e.Format(), printed);
  }
  auto eq = cds::ir::StructuralEqualWhere(program, reparsed);
  if (!eq.equal) Finding("round trip not structurally equal", eq.path + ": " + eq.reason, printed);
  if (cds::ir::StructuralHash(program) != cds::ir::StructuralHash(reparsed)) {
    Finding("round trip changed the structural hash", "", printed);
  }
  const std::string reprinted = cds::ir::PrintProgram(reparsed);
  if (reprinted != printed) Finding("printing is not a fixed point", reprinted, printed);
  return 0;
}
