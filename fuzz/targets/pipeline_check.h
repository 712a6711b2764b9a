#pragma once

// Oracles shared by fuzz_pipeline, fuzz_text_mutate and the gen_sweep detector.
// A finding prints one "FINDING <target>: <what>" line plus the evidence and
// aborts: libFuzzer, the replayers and bug-hunt all treat an abort as a crash, and
// the first line is what ci/fuzz.sh and triage grep for.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "driver/driver.h"
#include "fuzz/gen/compare.h"
#include "fuzz/gen/generate.h"
#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/function.h"
#include "ir/op_registry.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/stmt.h"
#include "ir/structural_equal.h"
#include "pass/materialize_comm_domain_scopes.h"
#include "verifier/verifier.h"

namespace cds::fuzz::check {

[[noreturn]] inline void Finding(std::string_view target, std::string_view what,
                                 std::string_view detail, std::string_view program) {
  std::fprintf(stderr, "FINDING %.*s: %.*s\n%.*s\n--- program ---\n%.*s\n--- end ---\n",
               static_cast<int>(target.size()), target.data(), static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data(),
               static_cast<int>(program.size()), program.data());
  std::fflush(stderr);
  std::abort();
}

// Which pass threw: the pipeline is run with a recorder so that a ValueError can
// be attributed to the stage the generator planted its defect for.
class StageRecorder final : public pass::PassInstrumentation {
 public:
  void BeforePass(std::string_view name, const ir::ProgramPtr&) override { current = name; }
  std::string current;
};

struct PipelineRun {
  ir::ProgramPtr output;
  std::optional<ValueError> error;
  std::string stage;  // with an error: the pass that threw, or "parse"
};

inline std::string_view PassNameOf(Stage s) {
  switch (s) {
    case Stage::kParse:
      return "parse";
    case Stage::kSynthesize:
      return "synthesize-allreduce-signals";
    case Stage::kMaterialize:
      return "materialize-comm-domain-scopes";
  }
  return "?";
}

// The default pipeline without verify-each: the oracles below run the verifier
// once on the final output, which is both cheaper and relational against the
// original input rather than the intermediate one. The manager (pipeline string
// parsed, passes and the recorder attached) is built once per process, not per
// run: it holds no state between runs but the recorder's stage, reset here.
inline PipelineRun RunPipeline(const ir::ProgramPtr& input) {
  struct Pipeline {
    std::shared_ptr<StageRecorder> recorder = std::make_shared<StageRecorder>();
    pass::PassManager manager = driver::BuildPassManager(
        [] {
          driver::PipelineOptions options;
          options.verify_each = false;
          return options;
        }(),
        {recorder});
  };
  static Pipeline pipeline;
  PipelineRun run;
  pipeline.recorder->current.clear();
  try {
    run.output = pipeline.manager.Run(input);
  } catch (const ValueError& e) {
    run.error = e;
    // Only an error is attributed to a stage: a pass name is longer than a short
    // string, and a copy on every clean run would be a heap allocation per input.
    run.stage = pipeline.recorder->current;
  }
  return run;
}

inline PipelineRun ParseAndRun(std::string_view text, const char* filename) {
  ir::ParseOptions options;
  options.filename = filename;
  ir::ProgramPtr program;
  try {
    program = ir::ParseProgram(text, options);
  } catch (const ValueError& e) {
    return PipelineRun{nullptr, e, "parse"};
  }
  return RunPipeline(program);
}

// Running the pipeline on its own output must change nothing (docs/pass.md: the pass
// is idempotent; SynthesizeAllReduceSignals finds every allreduce signalled).
inline std::string IdempotenceProblem(const ir::ProgramPtr& output) {
  PipelineRun again = RunPipeline(output);
  if (again.error) return "rerunning the pipeline on its output failed: " + again.error->Format();
  if (again.output == output || ir::StructuralEqual(output, again.output)) return {};
  // The path-reporting comparison only to describe a difference.
  auto eq = ir::StructuralEqualWhere(output, again.output);
  if (eq.equal) return {};
  return fmt::format("rerunning the pipeline on its output changed it at {}: {}\n--- rerun ---\n{}",
                     eq.path, eq.reason, ir::PrintProgram(again.output));
}

inline bool MessageMatches(const ValueError& e, const InvalidSpec& spec) {
  if (spec.message_any_of.empty()) return true;
  for (const auto& s : spec.message_any_of) {
    if (e.message().find(s) != std::string::npos) return true;
  }
  return false;
}

inline std::string DescribeSpec(const InvalidSpec& spec, Stage stage) {
  std::string any;
  for (const auto& s : spec.message_any_of) any += (any.empty() ? "'" : ", '") + s + "'";
  return fmt::format(
      "planted {} in {}: expected a ValueError from {} at line {} containing one of {}",
      InvalidKindName(spec.kind), spec.function, PassNameOf(stage), spec.line, any);
}

// fuzz_pipeline generates valid programs without their text
// (GenOptions::render_text): only the thorough checks and a finding need it.
inline std::string TextOf(const GeneratedProgram& p) {
  return p.text.empty() ? RenderText(p.model) : p.text;
}

// The whole oracle for one generated program. Valid: the pipeline output
// verifies, its scopes are the model's, and the pipeline is idempotent. Invalid:
// the text path reports exactly the planted diagnostic (stage, line, message);
// the IR path reports it at the IR stage.
//
// `thorough` adds the two checks that cost most and target the printer and
// parser rather than the pass: the valid program's text must parse into the
// generator's IR (then the pipeline runs on the parsed program), and the output
// must survive the verifier's print/parse round trip. gen_sweep always sets it;
// fuzz_pipeline sets it for a fixed quarter of its inputs (decided by the input
// bytes, so each input is checked the same way every time).
inline void CheckGenerated(std::string_view target, const GeneratedProgram& p,
                           bool thorough = true) {
  if (p.valid()) {
    if (!p.expect.problems.empty()) {
      std::string why;
      for (const auto& s : p.expect.problems) why += s + "\n";
      Finding(target, "generator: a valid program has expectation problems", why, TextOf(p));
    }
    ir::ProgramPtr input = p.ir;
    if (thorough) {
      const std::string text = TextOf(p);
      try {
        ir::ParseOptions options;
        options.filename = "<generated>";
        input = ir::ParseProgram(text, options);
      } catch (const ValueError& e) {
        Finding(target, "a valid generated program does not parse", e.Format(), text);
      }
      if (!ir::StructuralEqual(input, p.ir)) {
        auto eq = ir::StructuralEqualWhere(input, p.ir);
        Finding(target, "the parsed text differs from the generator's IR",
                eq.path + ": " + eq.reason, text);
      }
    }
    PipelineRun run = RunPipeline(input);
    if (run.error) {
      Finding(target, "the pipeline rejected a valid program",
              fmt::format("in {}: {}", run.stage, run.error->Format()), TextOf(p));
    }
    verify::VerifyOptions vopts;
    vopts.round_trip = thorough;
    if (auto d = verify::VerifyAll(input, run.output, vopts); !d.empty()) {
      Finding(target, "the verifier rejected the pipeline output", verify::FormatDiagnostics(d),
              ir::PrintProgram(run.output));
    }
    if (auto m = ModelMismatch(p.expect, *run.output); !m.empty()) {
      Finding(target, "scopes differ from the model's expectation", m,
              ir::PrintProgram(run.output));
    }
    if (auto i = IdempotenceProblem(run.output); !i.empty()) {
      Finding(target, "the pipeline is not idempotent", i, ir::PrintProgram(run.output));
    }
    return;
  }

  const InvalidSpec& spec = *p.invalid;
  PipelineRun text_run = ParseAndRun(p.text, "<generated>");
  if (!text_run.error) {
    Finding(target, "text: a planted defect was accepted", DescribeSpec(spec, spec.text_stage),
            ir::PrintProgram(text_run.output));
  }
  const ValueError& te = *text_run.error;
  if (text_run.stage != PassNameOf(spec.text_stage) || te.span().line != spec.line ||
      !MessageMatches(te, spec)) {
    Finding(target, "text: the diagnostic is not the planted one",
            fmt::format("{}\n  got from {}: {}", DescribeSpec(spec, spec.text_stage),
                        text_run.stage, te.Format()),
            p.text);
  }
  PipelineRun ir_run = RunPipeline(p.ir);
  if (!ir_run.error) {
    Finding(target, "IR: a planted defect was accepted", DescribeSpec(spec, spec.ir_stage),
            ir::PrintProgram(ir_run.output));
  }
  if (ir_run.stage != PassNameOf(spec.ir_stage) || !MessageMatches(*ir_run.error, spec)) {
    Finding(target, "IR: the diagnostic is not the planted one",
            fmt::format("{}\n  got from {}: {}", DescribeSpec(spec, spec.ir_stage), ir_run.stage,
                        ir_run.error->Format()),
            p.text);
  }
}

}  // namespace cds::fuzz::check
