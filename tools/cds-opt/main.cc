// cds-opt: parse a .pyir program, run it through the processing hook, print it.
// Flags follow mlir-opt: -o, '-' for stdin, --split-input-file,
// --verify-diagnostics.

#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "tools/cds-opt/opt_driver.h"

int main(int argc, char** argv) {
  cds::tools::OptOptions options;
  CLI::App app{"cds-opt: parse, process and print .pyir programs"};
  app.add_option("input", options.input, "input file ('-' for stdin)")->default_val("-");
  app.add_option("-o", options.output, "output file ('-' for stdout)")->default_val("-");
  app.add_flag("--split-input-file", options.split_input_file,
               "treat '# -----' lines as separators of independent inputs");
  app.add_flag("--verify-diagnostics", options.verify_diagnostics,
               "check emitted diagnostics against '# expected-error' comments");
  app.add_option("--max-input-bytes", options.parse.max_input_bytes, "parser input size limit");
  app.add_option("--max-nesting-depth", options.parse.max_nesting_depth,
                 "parser nesting depth limit");
  CLI11_PARSE(app, argc, argv);

  std::string text;
  if (!cds::tools::ReadInput(options.input, &text, std::cerr)) return 1;
  std::ostringstream out;
  int rc = cds::tools::RunOpt(text, options, cds::tools::ProcessProgram, out, std::cerr);
  if (options.output == "-") {
    std::cout << out.str();
    std::cout.flush();
  } else {
    std::ofstream f(options.output, std::ios::binary);
    if (!f) {
      std::cerr << "cds-opt: error: cannot open output file '" << options.output << "'\n";
      return 1;
    }
    f << out.str();
  }
  return rc;
}
