// cds-decode-bytes: turns a fuzz_pipeline byte input back into the program text
// the target built from it, so ci/triage.sh can reduce it on the IR.
//
//   cds-decode-bytes FILE > program.pyir
//
// The generator settings must be the target's (fuzz/targets/fuzz_pipeline.cc:
// options.size = 24, invalid programs allowed); a decoder offered by the fuzz
// tooling itself (`--decode`) is preferred by triage.sh when it exists.

#include <string>

#include <CLI/CLI.hpp>

#include "fuzz/gen/generate.h"
#include "tools/common/cli.h"
#include "tools/common/file_io.h"

namespace tools = cds::tools;

int main(int argc, char** argv) {
  CLI::App app{"Decode a fuzz_pipeline byte input into its program text.", "cds-decode-bytes"};
  tools::SetUpCommandLine(app);
  std::string input;
  size_t size = 24;
  app.add_option("file", input, "the byte input ('-' for stdin)")->required()->type_name("FILE");
  app.add_option("--size", size, "GenOptions::size of the target (fuzz_pipeline: 24)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000));
  if (auto rc = tools::ParseCommandLine(app, argc, argv)) return *rc;
  constexpr size_t kMaxBytes = 4096;  // fuzz_pipeline's own input limit
  std::string bytes, error;
  if (!tools::ReadInputFile(input, &bytes, &error, kMaxBytes)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  if (bytes.size() > kMaxBytes) {
    tools::PrintError(app, "fuzz_pipeline rejects inputs over 4096 bytes; nothing to decode");
    return tools::kExitInputProblem;
  }
  cds::fuzz::GenOptions options;
  options.size = static_cast<int>(size);
  const auto p = cds::fuzz::GenerateFromBytes(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              bytes.size(), options, /*allow_invalid=*/true);
  if (!tools::WriteOutputFile("-", p.text, &error)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  return tools::kExitOk;
}
