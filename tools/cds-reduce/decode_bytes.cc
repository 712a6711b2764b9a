// cds-decode-bytes: turns a fuzz_pipeline byte input back into the program text
// the target built from it, so ci/triage.sh can reduce it on the IR.
//
//   cds-decode-bytes FILE > program.pyir
//
// The generator settings must be the target's (fuzz/targets/fuzz_pipeline.cc:
// options.size = 24, invalid programs allowed); a decoder offered by the fuzz
// tooling itself (`--decode`) is preferred by triage.sh when it exists.

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <CLI/CLI.hpp>

#include "fuzz/gen/generate.h"

int main(int argc, char** argv) {
  CLI::App app{"Decode a fuzz_pipeline byte input into its program text"};
  std::string input;
  size_t size = 24;
  app.add_option("file", input, "The byte input")->required()->check(CLI::ExistingFile);
  app.add_option("--size", size, "GenOptions::size of the target (fuzz_pipeline: 24)");
  CLI11_PARSE(app, argc, argv);
  std::ifstream in(input, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() > 4096) {
    std::cerr
        << "cds-decode-bytes: fuzz_pipeline rejects inputs over 4096 bytes; nothing to decode\n";
    return 1;
  }
  cds::fuzz::GenOptions options;
  options.size = static_cast<int>(size);
  const auto p = cds::fuzz::GenerateFromBytes(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              bytes.size(), options, /*allow_invalid=*/true);
  std::cout << p.text;
  return 0;
}
