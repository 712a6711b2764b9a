// cds-opt: parse a .pyir program, run a pass pipeline over it, print it; or check an
// already-materialized program with the verifier. Flags follow mlir-opt: -o, '-' for
// stdin, --split-input-file, --verify-diagnostics, a pass pipeline.

#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ir/parser.h"
#include "pass/pass_manager.h"
#include "tools/cds-opt/opt_driver.h"
#include "tools/common/cli.h"
#include "tools/common/file_io.h"
#include "verifier/contract.h"

namespace tools = cds::tools;

int main(int argc, char** argv) {
  tools::OptOptions options;
  CLI::App app{"Parse, transform, verify and print .pyir programs (docs/cds-opt.md).", "cds-opt"};
  tools::SetUpCommandLine(app);
  app.add_option("input", options.input, "input file ('-' for stdin)")
      ->default_val("-")
      ->type_name("FILE");
  auto* output_opt =
      app.add_option("-o", options.output,
                     "output file ('-' for stdout); a file is replaced only when the run succeeds")
          ->default_val("-")
          ->type_name("OUT");
  app.add_flag("--split-input-file", options.split_input_file,
               "treat '# -----' lines as separators of independent inputs");
  app.add_flag("--verify-diagnostics", options.verify_diagnostics,
               "check emitted diagnostics against '# expected-error' comments");
  app.add_option("--max-input-bytes", options.parse.max_input_bytes, "parser input size limit")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  app.add_option(
         "--max-nesting-depth", options.parse.max_nesting_depth,
         "parser nesting depth limit (1.." + std::to_string(cds::ir::kMaxNestingDepthLimit) + ")")
      ->type_name("N")
      ->check(CLI::Range(1, cds::ir::kMaxNestingDepthLimit));

  std::string passes;
  auto* passes_opt = app.add_option("--passes", passes,
                                    "comma-separated pass pipeline, e.g. "
                                    "synthesize-allreduce-signals,materialize-comm-domain-scopes")
                         ->type_name("a,b");
  bool default_pipeline = false;
  auto* default_opt = app.add_flag(
      "--default-pipeline", default_pipeline,
      std::string("run the default pipeline (") + std::string(cds::pass::kDefaultPipeline) + ")");
  default_opt->excludes(passes_opt);

  // Three states: absent keeps the build default, so CI's release build and a
  // developer's Debug build behave as configured unless the command line says otherwise.
  bool verify_each = false;
  bool no_verify_each = false;
  auto* verify_each_opt =
      app.add_flag("--verify-each", verify_each,
                   "run the verifier after every pass (default: on in dev/Debug builds)");
  auto* no_verify_each_opt =
      app.add_flag("--no-verify-each", no_verify_each, "do not run the verifier after every pass");
  verify_each_opt->excludes(no_verify_each_opt);

  bool verify_only = false;
  auto* verify_only_opt = app.add_flag(
      "--verify-only", verify_only,
      "run the verifier on the input (an already-materialized program) and print its findings; "
      "writes no output");
  std::string before_path;
  std::string contract_name = "strict";
  auto* contract_opt =
      app.add_option("--contract", contract_name,
                     "with --verify-only: what the input promises: strict (this project's pass, "
                     "the default) or pypto (PyPTO's pass output; docs/verifier.md)")
          ->type_name("NAME");
  contract_opt->needs(verify_only_opt);
  auto* relational_opt =
      app.add_option("--verify-relational", before_path,
                     "with --verify-only: BEFORE is the program the input was produced from; add "
                     "the relational checks")
          ->type_name("BEFORE");
  relational_opt->needs(verify_only_opt);
  std::string emit = "pyir";
  const std::vector<std::string> emit_kinds{"pyir", "dot"};
  auto* emit_opt = app.add_option("--emit", emit, "output format: pyir (default) or dot (Graphviz)")
                       ->type_name("KIND")
                       ->check(CLI::IsMember(emit_kinds));
  verify_only_opt->excludes(passes_opt)
      ->excludes(default_opt)
      ->excludes(emit_opt)
      ->excludes(output_opt);

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
  if (auto rc = tools::ParseCommandLine(app, std::move(args))) return *rc;

  if (*passes_opt) options.pipeline = passes;
  if (default_pipeline) options.pipeline = std::string(cds::pass::kDefaultPipeline);
  if (options.pipeline) {
    if (auto error = tools::PipelineError(*options.pipeline)) {
      tools::PrintError(app, *error);
      return tools::kExitUsage;
    }
  }
  if (*verify_each_opt) options.verify_each = true;
  if (*no_verify_each_opt) options.verify_each = false;
  options.verify_only = verify_only;
  if (auto contract = cds::verify::ContractFromName(contract_name)) {
    options.contract = *contract;
  } else {
    tools::PrintError(app, fmt::format("unknown contract '{}' (known: {})", contract_name,
                                       cds::verify::ContractNames()));
    return tools::kExitUsage;
  }
  if (emit == "dot") options.emit = tools::EmitKind::kDot;

  std::string error;
  if (*relational_opt) {
    std::string before;
    if (!tools::ReadInputFile(before_path, &before, &error, options.parse.max_input_bytes)) {
      tools::PrintError(app, error);
      return tools::kExitInputProblem;
    }
    options.verify_relational_before = std::move(before);
    options.verify_relational_path = before_path == "-" ? "<stdin>" : before_path;
  }

  std::string text;
  if (!tools::ReadInputFile(options.input, &text, &error, options.parse.max_input_bytes)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  // Every program stays alive until the process ends, which frees its memory at once:
  // taking a large IR apart node by node would be a tenth of the run (clang's
  // -disable-free does the same). Hence std::exit below, which skips main's locals.
  std::vector<cds::ir::ProgramPtr> kept_until_exit;
  auto process = [&](const cds::ir::ProgramPtr& program, const tools::OptOptions& opts) {
    kept_until_exit.push_back(program);
    kept_until_exit.push_back(tools::ProcessProgram(program, opts));
    return kept_until_exit.back();
  };
  std::string out;
  int rc = tools::RunOpt(text, options, process, &out, std::cerr);
  // stdout gets what was produced even when a chunk failed (--split-input-file);
  // a file is replaced only by the output of a successful run.
  if (options.verify_only || (rc != tools::kExitOk && options.output != "-")) return rc;
  if (!tools::WriteOutputFile(options.output, out, &error)) {
    tools::PrintError(app, error);
    std::exit(tools::kExitInputProblem);
  }
  std::exit(rc);
}
