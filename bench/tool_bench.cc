// cds-opt as a user runs it: a whole process (exec, reading the file, parsing,
// the pipeline when asked, printing, writing to /dev/null, exit), timed on the
// wall clock, on the dispatch-loops program of bench/programs.h (30,000 allocs,
// 500 loops, 6.8 MB). The figure a user sees on the command line is this
// one, not the sum of the library benchmarks.
//
// The cds-opt measured is the one of the same build folder
// (<build>/tools/cds-opt/cds-opt); the program is written next to this binary as
// dispatch_loops.pyir, so the same run can be repeated by hand:
//   /usr/bin/time build/release/tools/cds-opt/cds-opt build/release/bench/dispatch_loops.pyir -o
//   /dev/null

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/programs.h"
#include "ir/printer.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

fs::path BuildDir() { return fs::read_symlink("/proc/self/exe").parent_path().parent_path(); }

struct ProgramFile {
  std::string path;
  int64_t bytes = 0;
};

const ProgramFile& DispatchLoopsFile() {
  static const ProgramFile file = [] {
    ProgramFile f;
    f.path = (BuildDir() / "bench" / "dispatch_loops.pyir").string();
    const std::string text =
        cds::ir::PrintProgram(cds::bench::BuildDispatchLoopsProgram(30000, 500));
    std::ofstream(f.path, std::ios::binary) << text;
    f.bytes = static_cast<int64_t>(text.size());
    return f;
  }();
  return file;
}

// Runs cds-opt with `args`; "" when it exited 0, else what went wrong.
std::string RunCdsOpt(const std::vector<std::string>& args) {
  const std::string tool = (BuildDir() / "tools" / "cds-opt" / "cds-opt").string();
  std::vector<char*> argv{const_cast<char*>(tool.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, tool.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return "cannot run " + tool + " (build the cds-opt target of this build folder)";
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return tool + " failed";
  return "";
}

// CPU seconds (user + system) of the children waited for so far.
double ChildrenCpuSeconds() {
  struct rusage usage {};
  getrusage(RUSAGE_CHILDREN, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Wall time is what a user waits for (the mean of the runs); the children's CPU
// time is what the tool costs when other work shares the machine's cores (cpu_s,
// per run); the fastest run (min_s) is the tool's own cost with the least
// interference from the neighbours a shared machine has.
//
// One run before the clock starts, as in the library benchmarks: on a guest that
// hands free memory back to its host, the first process after a pause waits for
// the host to back its pages again, which says nothing about the tool. Its wall
// time is reported as first_run_s.
void TimeCdsOpt(benchmark::State& state, const std::vector<std::string>& flags) {
  const ProgramFile& file = DispatchLoopsFile();
  std::vector<std::string> args = flags;
  args.insert(args.end(), {file.path, "-o", "/dev/null"});
  // Wall seconds of one run, or nullopt once the benchmark is skipped.
  auto run_once = [&]() -> std::optional<double> {
    const auto start = std::chrono::steady_clock::now();
    if (std::string error = RunCdsOpt(args); !error.empty()) {
      state.SkipWithError(error.c_str());
      return std::nullopt;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const std::optional<double> first_run = run_once();
  if (!first_run) return;
  const double cpu_before = ChildrenCpuSeconds();
  double fastest = std::numeric_limits<double>::infinity();
  for (auto _ : state) {
    const std::optional<double> took = run_once();
    if (!took) return;
    fastest = std::min(fastest, *took);
  }
  const double cpu_per_run =
      (ChildrenCpuSeconds() - cpu_before) / static_cast<double>(state.iterations());
  state.SetBytesProcessed(state.iterations() * file.bytes);
  state.counters["input_MB"] = static_cast<double>(file.bytes) / (1 << 20);
  state.counters["cpu_s"] = cpu_per_run;
  state.counters["min_s"] = fastest;
  state.counters["first_run_s"] = *first_run;
  state.counters["MB_per_cpu_s"] = static_cast<double>(file.bytes) / (1 << 20) / cpu_per_run;
}

// Parse and print: cds-opt F -o /dev/null.
void BM_CdsOptParsePrint(benchmark::State& state) { TimeCdsOpt(state, {}); }
BENCHMARK(BM_CdsOptParsePrint)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(5);

// The default pipeline: cds-opt --default-pipeline F -o /dev/null (in the release
// preset without the verifier after every pass, as a user of that build gets it).
void BM_CdsOptPipeline(benchmark::State& state) { TimeCdsOpt(state, {"--default-pipeline"}); }
BENCHMARK(BM_CdsOptPipeline)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
