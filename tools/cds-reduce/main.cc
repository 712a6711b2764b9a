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

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "ir/error.h"
#include "ir/parser.h"
#include "tools/cds-reduce/reduce.h"

namespace fs = std::filesystem;

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

bool ReadFile(const fs::path& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

bool WriteFile(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
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

bool HasFindingCode(const std::string& stderr_text, std::string_view code) {
  std::istringstream in(stderr_text);
  std::string line;
  while (std::getline(in, line)) {
    if (!StartsWith(line, "FINDING ")) continue;
    std::istringstream sig(line.substr(8, line.find(": ") - 8));
    std::string token;
    while (sig >> token) {
      if (token == code) return true;
    }
  }
  return false;
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
  CLI::App app{"Delta-debugging reducer for .pyir programs"};
  std::string input, output, test_cmd, same_code, same_diag, replay, pipeline;
  bool same_crash = false, quiet = false;
  unsigned timeout = 30;
  size_t max_tests = 20000;
  app.add_option("file", input, "The .pyir program to reduce")
      ->required()
      ->check(CLI::ExistingFile);
  auto* t1 =
      app.add_option("--test", test_cmd,
                     "Shell command; '{}' is replaced by the candidate path (else appended); "
                     "interesting when it exits 0");
  auto* t2 = app.add_option("--same-code", same_code,
                            "Interesting when cds-replay reports a FINDING with this verifier code "
                            "or name (CDS-V018, scope-devices-mismatch)");
  auto* t3 = app.add_option("--same-diagnostic", same_diag,
                            "Interesting when a DIAGNOSTIC or FINDING line contains this text");
  auto* t4 =
      app.add_flag("--same-crash", same_crash,
                   "Interesting when the first FINDING / internal-check line has the input's "
                   "signature");
  t1->excludes(t2, t3, t4);
  t2->excludes(t3, t4);
  t3->excludes(t4);
  app.add_option("-o,--output", output, "Write the reduced program here (default: stdout)");
  app.add_option("--replay", replay, "The cds-replay binary (default: the one of this build)");
  app.add_option("--pipeline", pipeline, "Pipeline passed to cds-replay");
  app.add_option("--timeout", timeout, "Seconds per candidate before it counts as a hang");
  app.add_option("--max-tests", max_tests, "Stop after this many interestingness tests");
  app.add_flag("-q,--quiet", quiet, "No progress lines");
  CLI11_PARSE(app, argc, argv);
  if (test_cmd.empty() && same_code.empty() && same_diag.empty() && !same_crash) {
    fmt::print(stderr,
               "cds-reduce: choose one of --test, --same-code, --same-diagnostic, --same-crash\n");
    return 2;
  }
  if (replay.empty()) replay = DefaultReplay().string();

  char dir_template[] = "/tmp/cds-reduce.XXXXXX";
  if (!mkdtemp(dir_template)) {
    std::perror("cds-reduce: mkdtemp");
    return 2;
  }
  const fs::path work(dir_template);
  const fs::path candidate = work / "candidate.pyir";
  const fs::path err_file = work / "replay.err";

  auto replay_stderr = [&](const fs::path& file) {
    std::string cmd =
        fmt::format("{} --timeout {} {}{} >/dev/null 2>{}", ShellQuote(replay), timeout,
                    pipeline.empty() ? "" : "--pipeline " + ShellQuote(pipeline) + " ",
                    ShellQuote(file.string()), ShellQuote(err_file.string()));
    RunShell(cmd);
    std::string err;
    ReadFile(err_file, err);
    return err;
  };

  std::optional<std::string> signature;
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
    if (!same_code.empty()) return HasFindingCode(err, same_code);
    if (!same_diag.empty()) return HasDiagnostic(err, same_diag);
    auto s = CrashSignature(err);
    return s && signature && *s == *signature;
  };

  int rc = 0;
  std::string text;
  ReadFile(input, text);
  if (same_crash) {
    signature = CrashSignature(replay_stderr(input));
    if (!signature) {
      fmt::print(stderr, "cds-reduce: {} shows no FINDING or internal-check line under {}\n", input,
                 replay);
      fs::remove_all(work);
      return 2;
    }
    if (!quiet) fmt::print(stderr, "cds-reduce: crash signature: {}\n", *signature);
  }
  if (!interesting_file(input)) {
    fmt::print(stderr, "cds-reduce: {} is not interesting to begin with\n", input);
    fs::remove_all(work);
    return 2;
  }

  cds::ir::ProgramPtr program;
  try {
    cds::ir::ParseOptions po;
    po.filename = input;
    program = cds::ir::ParseProgram(text, po);
  } catch (const cds::ValueError& e) {
    fmt::print(stderr, "cds-reduce: {} does not parse, so it cannot be reduced on the IR: {}\n",
               input, e.Format());
    fs::remove_all(work);
    return 3;
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
      [&](const std::string& t) { return WriteFile(candidate, t) && interesting_file(candidate); },
      ro);
  if (!result.start_interesting) {
    fmt::print(stderr,
               "cds-reduce: the printed form of {} is not interesting (the behaviour depends on "
               "the text layout); nothing reduced\n",
               input);
    rc = 3;
  } else if (!quiet) {
    fmt::print(stderr, "cds-reduce: {} -> {} lines in {} tests, {} round(s)\n",
               cds::reduce::CountLines(text), cds::reduce::CountLines(result.text), result.tests,
               result.rounds + 1);
  }
  if (!result.text.empty() && result.text.back() != '\n') result.text += '\n';
  if (rc == 0) {
    if (output.empty()) {
      std::cout << result.text;
    } else if (!WriteFile(output, result.text)) {
      fmt::print(stderr, "cds-reduce: cannot write {}\n", output);
      rc = 2;
    }
  }
  fs::remove_all(work);
  return rc;
}
