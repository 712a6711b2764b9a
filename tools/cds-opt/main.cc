// cds-opt: parse a .pyir program, run a pass pipeline over it, print it; or check an
// already-materialized program with the verifier. Flags follow mlir-opt: -o, '-' for
// stdin, --split-input-file, --verify-diagnostics, a pass pipeline.

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "pass/pass_manager.h"
#include "tools/cds-opt/opt_driver.h"

int main(int argc, char** argv) {
  cds::tools::OptOptions options;
  CLI::App app{"cds-opt: parse, transform, verify and print .pyir programs"};
  app.add_option("input", options.input, "input file ('-' for stdin)")->default_val("-");
  app.add_option("-o", options.output, "output file ('-' for stdout)")->default_val("-");
  app.add_flag("--split-input-file", options.split_input_file,
               "treat '# -----' lines as separators of independent inputs");
  app.add_flag("--verify-diagnostics", options.verify_diagnostics,
               "check emitted diagnostics against '# expected-error' comments");
  app.add_option("--max-input-bytes", options.parse.max_input_bytes, "parser input size limit");
  app.add_option("--max-nesting-depth", options.parse.max_nesting_depth,
                 "parser nesting depth limit");

  std::string passes;
  auto* passes_opt = app.add_option("--passes", passes,
                                    "comma-separated pass pipeline, e.g. "
                                    "synthesize-allreduce-signals,materialize-comm-domain-scopes");
  bool default_pipeline = false;
  auto* default_opt = app.add_flag(
      "--default-pipeline", default_pipeline,
      std::string("run the default pipeline (") + std::string(cds::pass::kDefaultPipeline) + ")");
  default_opt->excludes(passes_opt);

  // Three states: absent keeps the build default, so CI's release build and a
  // developer's Debug build behave as configured unless the command line says otherwise.
  bool verify_each = false;
  auto* verify_each_opt =
      app.add_flag("--verify-each,!--no-verify-each", verify_each,
                   "run the verifier after every pass (default: on in dev/Debug builds)");

  bool verify_only = false;
  auto* verify_only_opt = app.add_flag(
      "--verify-only", verify_only,
      "run the verifier on the input (an already-materialized program) and print its findings");
  std::string before_path;
  auto* relational_opt = app.add_option(
      "--verify-relational", before_path,
      "with --verify-only: BEFORE is the program the input was produced from; add the "
      "relational checks");
  relational_opt->needs(verify_only_opt);
  verify_only_opt->excludes(passes_opt)->excludes(default_opt);
  std::string emit = "pyir";
  std::vector<std::string> emit_kinds{"pyir"};
  if (cds::tools::DotAvailable()) emit_kinds.push_back("dot");
  app.add_option("--emit", emit, "output format: pyir (default) or dot (Graphviz)")
      ->check(CLI::IsMember(emit_kinds));

  // CLI11 reads `--passes=` as a missing value; mlir-opt users expect it to mean the
  // empty pipeline, so it is handed over as an explicit empty argument.
  std::vector<std::string> args;  // reversed, as App::parse(std::vector) expects
  for (int i = argc - 1; i >= 1; --i) {
    if (std::string_view(argv[i]) == "--passes=") {
      args.emplace_back();
      args.emplace_back("--passes");
    } else {
      args.emplace_back(argv[i]);
    }
  }
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (*passes_opt) options.pipeline = passes;
  if (default_pipeline) options.pipeline = std::string(cds::pass::kDefaultPipeline);
  if (*verify_each_opt) options.verify_each = verify_each;
  options.verify_only = verify_only;
  if (emit == "dot") options.emit = cds::tools::EmitKind::kDot;
  if (*relational_opt) {
    std::string before;
    if (!cds::tools::ReadInput(before_path, &before, std::cerr)) return 1;
    options.verify_relational_before = std::move(before);
    options.verify_relational_path = before_path == "-" ? "<stdin>" : before_path;
  }

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
