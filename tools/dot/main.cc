// cds-dot: draws a program after the pipeline as Graphviz DOT (docs/pictures.md).
//
//   cds-dot FILE [-o OUT.dot] [--pipeline P | --no-pipeline]
//   cds-dot corpus/regressions/cluster_three_domains.pyir | dot -Tpng -o scopes.png

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/driver.h"
#include "ir/diagnostics.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "tools/common/cli.h"
#include "tools/common/file_io.h"
#include "tools/dot/emit_dot.h"
#include "verifier/diagnostic.h"

namespace tools = cds::tools;

int main(int argc, char** argv) {
  CLI::App app{
      "Draw allocs, views, dispatches and comm-domain scopes as Graphviz DOT "
      "(docs/pictures.md).",
      "cds-dot"};
  tools::SetUpCommandLine(app);
  std::string input, output = "-", pipeline;
  bool no_pipeline = false;
  app.add_option("file", input, "a .pyir program ('-' for stdin)")->required()->type_name("FILE");
  app.add_option("-o,--output", output,
                 "DOT output file ('-' for stdout, the default); replaced only when the run "
                 "succeeds")
      ->type_name("OUT");
  auto* pipeline_opt = app.add_option("--pipeline", pipeline,
                                      "pass pipeline to run first (default: the default pipeline)")
                           ->type_name("a,b");
  app.add_flag("--no-pipeline", no_pipeline, "draw the file as it is (already materialized)")
      ->excludes(pipeline_opt);
  if (auto rc = tools::ParseCommandLine(app, argc, argv)) return *rc;
  if (*pipeline_opt) {
    if (auto error = tools::PipelineError(pipeline)) {
      tools::PrintError(app, *error);
      return tools::kExitUsage;
    }
  }

  const cds::ir::ParseOptions defaults;
  std::string text, error;
  if (!tools::ReadInputFile(input, &text, &error, defaults.max_input_bytes)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  cds::ir::ProgramPtr program;
  try {
    cds::ir::ParseOptions po;
    po.filename = input == "-" ? "<stdin>" : input;
    program = cds::ir::ParseProgram(text, po);
    if (!no_pipeline) {
      cds::driver::PipelineOptions options;
      if (*pipeline_opt) options.pipeline = pipeline;
      program = cds::driver::RunPipeline(program, options);
    }
  } catch (const cds::ValueError& e) {
    std::cerr << cds::ir::FormatDiagnostic(e, text);
    return tools::kExitInputProblem;
  } catch (const cds::driver::VerificationError& e) {
    tools::PrintError(app, e.what());
    std::cerr << cds::verify::FormatDiagnostics(e.diagnostics());
    return tools::kExitInputProblem;
  }
  if (!tools::WriteOutputFile(output, cds::dot::EmitDot(program), &error)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  return tools::kExitOk;
}
