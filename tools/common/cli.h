#pragma once

// The command-line conventions every tool follows (docs/cds-opt.md):
//   exit 0  success;
//   exit 1  the input has problems (diagnostics, verifier findings, an unreadable
//           input file, an output that cannot be written);
//   exit 2  usage error (unknown flag, bad flag value, missing argument, unknown
//           pass or invalid kind);
// --help prints the usage and the exit codes and does nothing else; --version
// prints the tool's name and the project's version.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace cds::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInputProblem = 1;
inline constexpr int kExitUsage = 2;

// Adds --version and the exit-code footer (`more_exit_codes`, when given, is a
// line for a tool's own codes beyond 2). The app must be constructed with the
// tool's name, which its usage line shows.
void SetUpCommandLine(CLI::App& app, std::string_view more_exit_codes = "");

// Parses the command line. Returns the exit code when the run ends here: 0 after
// --help or --version, kExitUsage after a usage error (CLI11's message on
// stderr); nullopt when the tool should go on.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv);
// Same, for arguments already collected in CLI11's order (reversed).
std::optional<int> ParseCommandLine(CLI::App& app, std::vector<std::string> reversed_args);

// "TOOL: error: MESSAGE\n" on stderr.
void PrintError(const CLI::App& app, std::string_view message);

// The usage error for a pipeline flag value that names an unknown pass or an
// empty name ("unknown pass 'x' (known passes: ...)"); nullopt when valid.
std::optional<std::string> PipelineError(std::string_view pipeline);

}  // namespace cds::tools
