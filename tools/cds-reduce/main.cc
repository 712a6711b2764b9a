// cds-reduce: shrinks a `.pyir` program while an interestingness test keeps
// holding (docs/reducer.md).
//
//   cds-reduce FILE --same-code CDS-V018 [-o OUT]
//   cds-reduce FILE --same-diagnostic 'dead alloc'
//   cds-reduce FILE --same-crash
//   cds-reduce FILE --test 'CMD {}'      (interesting = CMD exits 0)
//
// The built-in tests run cds-replay on each candidate in a subprocess and read
// its stderr, so a candidate that crashes or hangs the pipeline cannot take the
// reducer down, and the pass that is judged is the one cds-replay was built with.

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "ir/error.h"
#include "ir/parser.h"
#include "tools/cds-reduce/reduce.h"
#include "tools/common/cli.h"
#include "tools/common/file_io.h"

namespace fs = std::filesystem;
namespace tools = cds::tools;

namespace {

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Exit status of a shell command (-1 when it did not exit normally).
int RunShell(const std::string& command) {
  int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// The crash signature of a replay: its first FINDING or internal-check line,
// reduced to what identifies the bug (no file names, positions or object names),
// so that it survives the reduction of the program that shows it.
std::optional<std::string> CrashSignature(const std::string& stderr_text) {
  std::istringstream in(stderr_text);
  std::string line;
  while (std::getline(in, line)) {
    if (StartsWith(line, "FINDING ")) return line.substr(0, line.find(": "));
    constexpr std::string_view kCheck = "internal check failed: ";
    if (size_t p = line.find(kCheck); p != std::string::npos) {
      return line.substr(0, line.find(": ", p + kCheck.size()));
    }
    if (size_t p = line.find("ERROR: AddressSanitizer: "); p != std::string::npos) {
      std::string rest = line.substr(p + 7);
      return rest.substr(0, rest.find(' ', 18));
    }
    if (size_t p = line.find(": runtime error: "); p != std::string::npos) return line;
  }
  return std::nullopt;
}

// Nothing to reduce: the input, or its printed form, does not show the behaviour.
constexpr int kExitNotInteresting = 3;

// The first FINDING line of a replay: what --same-code keeps through the reduction.
struct FirstFinding {
  std::vector<std::string> tokens;  // the signature's words: "CDS-V018", "scope-devices-mismatch"
  // The objects the finding names: its quoted identifiers, sorted. Scope names
  // (comm_d<N>) are left out: the pass numbers scopes afresh as the program shrinks.
  std::vector<std::string> subject;

  bool operator==(const FirstFinding&) const = default;
};

bool IsScopeName(std::string_view name) {
  constexpr std::string_view kPrefix = "comm_d";
  if (!StartsWith(name, kPrefix) || name.size() == kPrefix.size()) return false;
  return std::all_of(name.begin() + kPrefix.size(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::optional<FirstFinding> FirstFindingOf(const std::string& stderr_text) {
  std::istringstream in(stderr_text);
  std::string line;
  while (std::getline(in, line)) {
    if (!StartsWith(line, "FINDING ")) continue;
    const size_t colon = line.find(": ");
    FirstFinding f;
    std::istringstream sig(
        line.substr(8, colon == std::string::npos ? std::string::npos : colon - 8));
    for (std::string token; sig >> token;) f.tokens.push_back(token);
    std::string_view detail =
        colon == std::string::npos ? std::string_view() : std::string_view(line).substr(colon + 2);
    for (size_t open = detail.find('\''); open != std::string_view::npos;) {
      const size_t close = detail.find('\'', open + 1);
      if (close == std::string_view::npos) break;
      std::string_view name = detail.substr(open + 1, close - open - 1);
      if (IsIdentifier(name) && !IsScopeName(name)) {
        f.subject.emplace_back(name);
        open = detail.find('\'', close + 1);
      } else {
        open = close;  // the closing quote may open the next name
      }
    }
    std::sort(f.subject.begin(), f.subject.end());
    f.subject.erase(std::unique(f.subject.begin(), f.subject.end()), f.subject.end());
    return f;
  }
  return std::nullopt;
}

bool HasToken(const FirstFinding& f, std::string_view code) {
  return std::find(f.tokens.begin(), f.tokens.end(), code) != f.tokens.end();
}

bool HasDiagnostic(const std::string& stderr_text, std::string_view needle) {
  std::istringstream in(stderr_text);
  std::string line;
  while (std::getline(in, line)) {
    if ((StartsWith(line, "DIAGNOSTIC ") || StartsWith(line, "FINDING ")) &&
        line.find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

fs::path DefaultReplay() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& p : {self.parent_path().parent_path() / "cds-replay" / "cds-replay",
                              self.parent_path() / "cds-replay"}) {
      if (fs::exists(p)) return p;
    }
  }
  return "cds-replay";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Delta-debugging reducer for .pyir programs (docs/reducer.md).", "cds-reduce"};
  tools::SetUpCommandLine(
      app, "3 not interesting: the input (or its printed form) does not show the behaviour.");
  std::string input, output = "-", test_cmd, same_code, same_diag, replay, pipeline;
  bool same_crash = false, quiet = false;
  unsigned timeout = 30;
  size_t max_tests = 20000;
  app.add_option("file", input, "the .pyir program to reduce")->required()->type_name("FILE");
  auto* t1 =
      app.add_option("--test", test_cmd,
                     "shell command; '{}' is replaced by the candidate path (else appended); "
                     "interesting when it exits 0")
          ->type_name("CMD");
  auto* t2 = app.add_option("--same-code", same_code,
                            "interesting when cds-replay's first FINDING has this verifier code "
                            "or name (CDS-V018, scope-devices-mismatch) and names the same objects "
                            "as the input's")
                 ->type_name("CODE");
  auto* t3 = app.add_option("--same-diagnostic", same_diag,
                            "interesting when a DIAGNOSTIC or FINDING line contains this text")
                 ->type_name("TEXT");
  auto* t4 =
      app.add_flag("--same-crash", same_crash,
                   "interesting when the first FINDING / internal-check line has the input's "
                   "signature");
  t1->excludes(t2, t3, t4);
  t2->excludes(t3, t4);
  t3->excludes(t4);
  app.add_option("-o,--output", output,
                 "write the reduced program here ('-' for stdout, the default); replaced only "
                 "when the reduction succeeds")
      ->type_name("OUT");
  app.add_option("--replay", replay, "the cds-replay binary (default: the one of this build)")
      ->type_name("PATH");
  auto* pipeline_opt =
      app.add_option("--pipeline", pipeline, "pipeline passed to cds-replay")->type_name("a,b");
  app.add_option("--timeout", timeout, "seconds per candidate before it counts as a hang")
      ->type_name("S");
  app.add_option("--max-tests", max_tests, "stop after this many interestingness tests")
      ->type_name("N");
  app.add_flag("-q,--quiet", quiet, "no progress lines");
  if (auto rc = tools::ParseCommandLine(app, argc, argv)) return *rc;
  if (test_cmd.empty() && same_code.empty() && same_diag.empty() && !same_crash) {
    tools::PrintError(app, "choose one of --test, --same-code, --same-diagnostic, --same-crash");
    return tools::kExitUsage;
  }
  if (*pipeline_opt) {
    if (auto error = tools::PipelineError(pipeline)) {
      tools::PrintError(app, *error);
      return tools::kExitUsage;
    }
  }
  if (replay.empty()) replay = DefaultReplay().string();

  std::string text, error;
  if (!tools::ReadInputFile(input, &text, &error)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  cds::ir::ProgramPtr program;
  try {
    cds::ir::ParseOptions po;
    po.filename = input;
    program = cds::ir::ParseProgram(text, po);
  } catch (const cds::ValueError& e) {
    tools::PrintError(app, fmt::format("'{}' does not parse, so it cannot be reduced on the IR: {}",
                                       input, e.Format()));
    return tools::kExitInputProblem;
  }

  char dir_template[] = "/tmp/cds-reduce.XXXXXX";
  if (!mkdtemp(dir_template)) {
    tools::PrintError(app,
                      fmt::format("cannot create a work folder in /tmp: {}", std::strerror(errno)));
    return tools::kExitInputProblem;
  }
  const fs::path work(dir_template);
  struct RemoveWork {
    fs::path dir;
    ~RemoveWork() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_work{work};
  const fs::path original = work / "input.pyir";
  const fs::path candidate = work / "candidate.pyir";
  const fs::path err_file = work / "replay.err";

  auto replay_stderr = [&](const fs::path& file) {
    std::string cmd =
        fmt::format("{} --timeout {} {}{} >/dev/null 2>{}", ShellQuote(replay), timeout,
                    *pipeline_opt ? "--pipeline " + ShellQuote(pipeline) + " " : "",
                    ShellQuote(file.string()), ShellQuote(err_file.string()));
    RunShell(cmd);
    std::string err, read_error;
    tools::ReadInputFile(err_file.string(), &err, &read_error);
    return err;
  };

  std::optional<std::string> signature;
  std::optional<FirstFinding> first_finding;
  auto interesting_file = [&](const fs::path& file) -> bool {
    if (!test_cmd.empty()) {
      std::string cmd = test_cmd;
      const std::string q = ShellQuote(file.string());
      if (cmd.find("{}") == std::string::npos) {
        cmd += " " + q;
      } else {
        for (size_t p; (p = cmd.find("{}")) != std::string::npos;) cmd.replace(p, 2, q);
      }
      return RunShell(cmd + " >/dev/null 2>&1") == 0;
    }
    std::string err = replay_stderr(file);
    if (!same_code.empty()) {
      auto f = FirstFindingOf(err);
      if (!f || !HasToken(*f, same_code)) return false;
      return !first_finding || *f == *first_finding;
    }
    if (!same_diag.empty()) return HasDiagnostic(err, same_diag);
    auto s = CrashSignature(err);
    return s && signature && *s == *signature;
  };

  // The input is judged from a copy in the work folder, as every candidate is.
  if (!tools::WriteOutputFile(original.string(), text, &error)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  if (same_crash) {
    signature = CrashSignature(replay_stderr(original));
    if (!signature) {
      tools::PrintError(
          app, fmt::format("'{}' shows no FINDING or internal-check line under {}", input, replay));
      return kExitNotInteresting;
    }
    if (!quiet) fmt::print(stderr, "cds-reduce: crash signature: {}\n", *signature);
  }
  if (!interesting_file(original)) {
    tools::PrintError(app, fmt::format("'{}' is not interesting to begin with", input));
    return kExitNotInteresting;
  }
  if (!same_code.empty()) {
    first_finding = FirstFindingOf(replay_stderr(original));
    if (!quiet) {
      std::string names;
      for (const auto& n : first_finding->subject) names += (names.empty() ? "" : ", ") + n;
      fmt::print(stderr, "cds-reduce: keeping the first finding: {} about {}\n", same_code,
                 names.empty() ? "(no named object)" : names);
    }
  }

  cds::reduce::ReduceOptions ro;
  ro.max_tests = max_tests;
  if (!quiet) {
    ro.progress = [](std::string_view step, size_t lines, size_t tests) {
      fmt::print(stderr, "cds-reduce: {:<10} {:>5} lines  {:>6} tests\n", step, lines, tests);
    };
  }
  auto result = cds::reduce::Reduce(
      program,
      [&](const std::string& t) {
        std::string write_error;
        return tools::WriteOutputFile(candidate.string(), t, &write_error) &&
               interesting_file(candidate);
      },
      ro);
  if (!result.start_interesting) {
    tools::PrintError(app, fmt::format("the printed form of '{}' is not interesting (the behaviour "
                                       "depends on the text layout); nothing reduced",
                                       input));
    return kExitNotInteresting;
  }
  if (!quiet) {
    fmt::print(stderr, "cds-reduce: {} -> {} lines in {} tests, {} round(s)\n",
               cds::reduce::CountLines(text), cds::reduce::CountLines(result.text), result.tests,
               result.rounds + 1);
  }
  if (!result.text.empty() && result.text.back() != '\n') result.text += '\n';
  if (!tools::WriteOutputFile(output, result.text, &error)) {
    tools::PrintError(app, error);
    return tools::kExitInputProblem;
  }
  return tools::kExitOk;
}
