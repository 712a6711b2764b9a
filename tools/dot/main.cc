// cds-dot: draws a program after the pipeline as Graphviz DOT (docs/pictures.md).
//
//   cds-dot FILE [-o OUT.dot] [--no-pipeline]
//   cds-dot corpus/regressions/cluster_three_domains.pyir | dot -Tpng -o scopes.png

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/driver.h"
#include "ir/diagnostics.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "tools/dot/emit_dot.h"

int main(int argc, char** argv) {
  CLI::App app{"Draw allocs, views, dispatches and comm-domain scopes as Graphviz DOT"};
  std::string input, output, pipeline;
  bool no_pipeline = false;
  app.add_option("file", input, "A .pyir program")->required()->check(CLI::ExistingFile);
  app.add_option("-o,--output", output, "DOT output file (default: stdout)");
  app.add_option("--pipeline", pipeline,
                 "Pass pipeline to run first (default: the default pipeline)");
  app.add_flag("--no-pipeline", no_pipeline, "Draw the file as it is (already materialized)");
  CLI11_PARSE(app, argc, argv);

  std::ifstream in(input, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  cds::ir::ProgramPtr program;
  try {
    cds::ir::ParseOptions po;
    po.filename = input;
    program = cds::ir::ParseProgram(text, po);
    if (!no_pipeline) {
      cds::driver::PipelineOptions options;
      if (!pipeline.empty()) options.pipeline = pipeline;
      program = cds::driver::RunPipeline(program, options);
    }
  } catch (const cds::ValueError& e) {
    std::cerr << cds::ir::FormatDiagnostic(e, text);
    return 1;
  } catch (const cds::driver::VerificationError& e) {
    fmt::print(stderr, "cds-dot: {}\n", e.what());
    return 1;
  }
  const std::string dot = cds::dot::EmitDot(program);
  if (output.empty()) {
    std::cout << dot;
  } else {
    std::ofstream out(output, std::ios::binary);
    out << dot;
    if (!out) {
      fmt::print(stderr, "cds-dot: cannot write {}\n", output);
      return 1;
    }
  }
  return 0;
}
