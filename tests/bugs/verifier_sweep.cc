// verifier_sweep: the verifier alone as the judge of the pipeline on generated
// programs, the column of ci/bug-hunt.sh that shows a bug in pass/ is reported by
// the verifier and not only by the generator's expectation model or its planted
// diagnostics. Seeds are walked as gen_sweep walks them (every third program with a
// planted defect, kinds in turn). Whenever the default pipeline accepts a program,
// the verifier judges its output against the input, and the output of a second run
// against the first (a body already wrapped must come back as it is). A program
// with a planted defect that the pipeline rejects gives nothing to judge.
//
//   verifier_sweep [--seconds N] [--count N] [--start SEED] [--size S]
//
// Exit 0: the verifier reported nothing; 1: it reported something (the first line
// is "FINDING verifier_sweep: ...", then the diagnostics and the program); 2: usage.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/driver.h"
#include "fuzz/gen/generate.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "verifier/verifier.h"

namespace {

using cds::verify::Diagnostic;

std::optional<cds::ir::ProgramPtr> Pipeline(const cds::ir::ProgramPtr& input) {
  cds::driver::PipelineOptions options;
  options.verify_each = false;  // the verdict below is the only one
  try {
    return cds::driver::RunPipeline(input, options);
  } catch (const cds::ValueError&) {
    return std::nullopt;
  }
}

// The verifier's errors and warnings on `after` as the pipeline's output for `before`.
std::vector<Diagnostic> Judge(const cds::ir::ProgramPtr& before, const cds::ir::ProgramPtr& after) {
  cds::verify::VerifyOptions options;
  options.round_trip = false;  // the printer and parser are not what is judged here
  std::vector<Diagnostic> out;
  for (Diagnostic& d : cds::verify::VerifyAll(before, after, options)) {
    if (d.severity != cds::verify::Severity::kNote) out.push_back(std::move(d));
  }
  return out;
}

[[noreturn]] void Report(uint64_t seed, std::string_view what, const std::vector<Diagnostic>& diags,
                         const cds::ir::ProgramPtr& program) {
  std::fprintf(stderr, "FINDING verifier_sweep: %s at seed %llu: %s\n%s\n--- program ---\n%s\n",
               std::string(what).c_str(), static_cast<unsigned long long>(seed),
               diags.front().message.c_str(), cds::verify::FormatDiagnostics(diags).c_str(),
               cds::ir::PrintProgram(program).c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  uint64_t count = 0;
  uint64_t start = 1;
  int size = 24;
  CLI::App app{"Judges the pipeline on generated programs by the verifier alone (ci/bug-hunt.sh)."};
  app.add_option("--seconds", seconds, "stop after this many seconds (default 60)");
  app.add_option("--count", count, "stop after this many programs instead");
  app.add_option("--start", start, "first seed (default 1)");
  app.add_option("--size", size, "host statements per program (default 24)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  cds::fuzz::GenOptions options;
  options.size = size;
  options.render_text = false;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t done = 0;
  for (uint64_t seed = start;; ++seed) {
    if (count ? done >= count
              : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
                    seconds) {
      break;
    }
    std::optional<cds::fuzz::InvalidKind> kind;
    if (seed % 3 == 0) {
      kind = static_cast<cds::fuzz::InvalidKind>((seed / 3) % cds::fuzz::kNumInvalidKinds);
    }
    const cds::fuzz::GeneratedProgram p = cds::fuzz::Generate(seed, options, kind);
    ++done;
    const std::optional<cds::ir::ProgramPtr> output = Pipeline(p.ir);
    if (!output) continue;
    if (auto d = Judge(p.ir, *output); !d.empty()) {
      Report(seed,
             p.valid()
                 ? "the verifier rejects the pipeline's output"
                 : "the pipeline accepted a planted defect and the verifier rejects its output",
             d, *output);
    }
    const std::optional<cds::ir::ProgramPtr> rerun = Pipeline(*output);
    if (!rerun) continue;  // a rerun that throws is the idempotence oracle's to report
    if (auto d = Judge(*output, *rerun); !d.empty()) {
      Report(seed, "the verifier rejects the pipeline's output for its own output", d, *rerun);
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("verifier_sweep: %llu programs in %.1f s, nothing reported\n",
              static_cast<unsigned long long>(done), secs);
  return 0;
}
