// cds-replay: replays `.pyir` corpus files through the pipeline and checks each
// against its `# EXPECT` header (docs/corpus-replay.md).
//
// Every file runs in a forked child so that a crash (CDS_CHECK abort, signal) or
// a hang in one file is reported as that file's failure and the run goes on.
// stdout: one PASS/FAIL line per file, then "N passed, N failed".
// stderr: machine-readable lines the reducer and ci/triage.sh read:
//   FINDING <signature>: <file>: <detail>   a bug in the pass/verifier/parser/printer
//   DIAGNOSTIC <FILE:LINE:COL: error: MSG>  a parse or pass error (may be expected)

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/error.h"
#include "ir/parser.h"
#include "tools/cds-replay/replay.h"
#include "tools/common/cli.h"
#include "tools/common/file_io.h"

namespace fs = std::filesystem;
namespace tools = cds::tools;

namespace {

struct Options {
  std::vector<std::string> paths;
  std::string pipeline;
  bool quiet = false;
  bool no_fork = false;
  unsigned timeout = 120;
  bool derive_header = false;
};

// Directories contribute their `.pyir` files (recursively); a named file is taken
// whatever its extension. A path that does not exist or cannot be listed is kept
// so that it fails by name, with the system's reason.
std::vector<fs::path> CollectFiles(const std::vector<std::string>& paths) {
  std::vector<fs::path> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.emplace_back(p);
      continue;
    }
    fs::recursive_directory_iterator it(p, ec);
    if (ec) {
      out.emplace_back(p);
      continue;
    }
    std::vector<fs::path> found;
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file(ec) && it->path().extension() == ".pyir") found.push_back(it->path());
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// Runs in the child (or in-process with --no-fork). Returns 0 on PASS.
int ReplayOne(const fs::path& path, const Options& opt) {
  std::string text, error;
  if (!tools::ReadInputFile(path.string(), &text, &error)) {
    fmt::print("FAIL {}: {}\n", path.string(), error);
    return tools::kExitInputProblem;
  }
  cds::replay::ReplayOptions ro;
  ro.pipeline = opt.pipeline;
  cds::replay::Outcome o = cds::replay::ReplayText(text, path.string(), ro);
  for (const auto& f : o.findings) {
    fmt::print(stderr, "FINDING {}: {}: {}\n", f.signature, path.string(), OneLine(f.detail));
  }
  // A passing file's diagnostics are the ones its header expects: --quiet leaves them out.
  if (!(opt.quiet && o.pass)) {
    for (const auto& d : o.diagnostics) fmt::print(stderr, "DIAGNOSTIC {}\n", OneLine(d));
  }
  if (o.pass) {
    if (!opt.quiet) fmt::print("PASS {}\n", path.string());
    return 0;
  }
  std::string more = o.reasons.size() > 1 ? fmt::format(" (+{} more)", o.reasons.size() - 1) : "";
  fmt::print("FAIL {}: {}{}\n", path.string(), OneLine(o.reasons.front()), more);
  return 1;
}

int DeriveHeader(const fs::path& path) {
  std::string text, error;
  if (!tools::ReadInputFile(path.string(), &text, &error)) {
    fmt::print(stderr, "cds-replay: error: {}\n", error);
    return tools::kExitInputProblem;
  }
  cds::ir::ProgramPtr program;
  try {
    cds::ir::ParseOptions po;
    po.filename = path.string();
    program = cds::ir::ParseProgram(text, po);
  } catch (const cds::ValueError& e) {
    fmt::print(stderr, "cds-replay: cannot derive: the file does not parse: {}\n", e.Format());
    return tools::kExitInputProblem;
  }
  auto d = cds::replay::DeriveExpectation(program);
  if (!d.ok) {
    fmt::print(stderr, "cds-replay: cannot derive: {}\n", OneLine(d.why));
    return tools::kExitInputProblem;
  }
  fmt::print("# EXPECT: ok\n");
  for (const auto& s : d.scopes)
    fmt::print("# EXPECT-SCOPE: {}\n", cds::replay::FormatScopeLine(s));
  return 0;
}

std::string SignalName(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? fmt::format("SIG{}", name) : fmt::format("signal {}", sig);
}

// Forks so that an abort inside the pipeline stays this file's problem.
bool RunIsolated(const fs::path& path, const Options& opt) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("cds-replay: fork");
    return ReplayOne(path, opt) == 0;
  }
  if (pid == 0) {
    if (opt.timeout > 0) alarm(opt.timeout);
    int rc = ReplayOne(path, opt);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(rc);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::perror("cds-replay: waitpid");
      return false;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 0;
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (sig == SIGALRM) {
    fmt::print(stderr, "FINDING timeout: {}: no verdict after {} s\n", path.string(), opt.timeout);
    fmt::print("FAIL {}: timed out after {} s\n", path.string(), opt.timeout);
  } else {
    fmt::print(stderr, "FINDING crash {}: {}: the replay died\n", SignalName(sig), path.string());
    fmt::print("FAIL {}: crashed ({})\n", path.string(), SignalName(sig));
  }
  std::fflush(stdout);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Replay .pyir corpus files through the pipeline and check their EXPECT headers "
      "(docs/corpus-replay.md).",
      "cds-replay"};
  tools::SetUpCommandLine(app);
  Options opt;
  app.add_option("paths", opt.paths, "files or directories (directories: every .pyir, recursively)")
      ->required()
      ->type_name("FILE|DIR");
  auto* pipeline_opt =
      app.add_option("--pipeline", opt.pipeline, "pass pipeline (default: the default pipeline)")
          ->type_name("a,b");
  app.add_flag("-q,--quiet", opt.quiet,
               "print only FAIL lines and the summary on stdout, and on stderr no DIAGNOSTIC "
               "lines of passing files");
  app.add_flag("--no-fork", opt.no_fork, "replay in-process (for debuggers; a crash ends the run)");
  app.add_option("--timeout", opt.timeout, "seconds per file before it fails as a hang (0: none)")
      ->type_name("S");
  app.add_flag("--derive-header", opt.derive_header,
               "print the EXPECT lines the verifier's own analysis derives for each file "
               "(used by ci/triage.sh for new findings; never rewrites a file)");
  if (auto rc = tools::ParseCommandLine(app, argc, argv)) return *rc;
  // An empty --pipeline is the empty pipeline (a parse-and-round-trip replay).
  if (!*pipeline_opt) opt.pipeline = std::string(cds::pass::kDefaultPipeline);
  if (auto error = tools::PipelineError(opt.pipeline)) {
    tools::PrintError(app, *error);
    return tools::kExitUsage;
  }

  const auto files = CollectFiles(opt.paths);
  if (opt.derive_header) {
    int rc = tools::kExitOk;
    for (const auto& f : files) rc = std::max(rc, DeriveHeader(f));
    return rc;
  }
  size_t passed = 0, failed = 0;
  for (const auto& f : files) {
    bool ok = opt.no_fork ? ReplayOne(f, opt) == 0 : RunIsolated(f, opt);
    ++(ok ? passed : failed);
  }
  if (files.empty()) {
    fmt::print("FAIL: no .pyir files under the given paths\n");
    ++failed;
  }
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? tools::kExitOk : tools::kExitInputProblem;
}
