#include "tools/common/cli.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "pass/pass_manager.h"

namespace cds::tools {
namespace {

std::optional<int> Finish(CLI::App& app, const CLI::ParseError& e) {
  // CLI11 prints the help, the version or the error; its own codes (104-109 for
  // the kinds of usage error) all mean "usage error" here.
  return app.exit(e) == 0 ? kExitOk : kExitUsage;
}

}  // namespace

void SetUpCommandLine(CLI::App& app, std::string_view more_exit_codes) {
  app.set_version_flag("--version",
                       fmt::format("{} (cds-harness) {}", app.get_name(), CDS_VERSION));
  std::string footer =
      "Exit codes: 0 success; 1 the input has problems (diagnostics, verifier findings, "
      "unreadable input, unwritable output); 2 usage error.";
  if (!more_exit_codes.empty()) footer += fmt::format("\n            {}", more_exit_codes);
  app.footer(footer);
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return fmt::format("{}: error: {}\nRun '{} --help' for the usage.\n", a->get_name(), e.what(),
                       a->get_name());
  });
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return Finish(app, e);
  }
  return std::nullopt;
}

std::optional<int> ParseCommandLine(CLI::App& app, std::vector<std::string> reversed_args) {
  try {
    app.parse(std::move(reversed_args));
  } catch (const CLI::ParseError& e) {
    return Finish(app, e);
  }
  return std::nullopt;
}

void PrintError(const CLI::App& app, std::string_view message) {
  fmt::print(stderr, "{}: error: {}\n", app.get_name(), message);
}

std::optional<std::string> PipelineError(std::string_view pipeline) {
  try {
    pass::ParsePipeline(pipeline);
  } catch (const ValueError& e) {
    return e.message();
  }
  return std::nullopt;
}

}  // namespace cds::tools
