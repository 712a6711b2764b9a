// The verifier on the pipeline's output for the programs of pipeline_bench, as a
// ratio to the time the pipeline itself takes (x_pass): the pipeline with the
// verify-each instrument (invariant checks after every pass, the round trip once
// after the last), VerifyAll, and their parts: the self-check, the relational
// check and the round trip's print, parse, comparison and hashes.

#include <algorithm>
#include <map>
#include <string>

#include <benchmark/benchmark.h>
#include <time.h>

#include "bench/programs.h"
#include "driver/driver.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "verifier/verifier.h"

namespace {

using cds::ir::ProgramPtr;

// Thread CPU time: the same clock Google Benchmark reports as "CPU", and far less
// sensitive than wall time to the other work sharing this machine's two cores.
double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

ProgramPtr RunDefaultPipeline(const ProgramPtr& p) {
  cds::driver::PipelineOptions options;
  options.verify_each = false;
  return cds::driver::RunPipeline(p, options);
}

struct Case {
  ProgramPtr before, after;
  int64_t statements = 0;
  double pass_seconds = 0;  // best of a few pipeline runs
  std::string text;         // PrintProgram(after)
  ProgramPtr reparsed;
};

const Case& CaseOf(int64_t statements) {
  static std::map<int64_t, Case> cache;
  auto it = cache.find(statements);
  if (it != cache.end()) return it->second;
  const auto& big = cds::bench::HostProgram(statements);
  Case c;
  c.before = big.program;
  c.statements = big.statements;
  c.pass_seconds = 1e30;
  const int runs = statements >= 1000000 ? 2 : 5;
  for (int i = 0; i < runs; ++i) {
    double t0 = CpuSeconds();
    ProgramPtr out = RunDefaultPipeline(c.before);
    c.pass_seconds = std::min(c.pass_seconds, CpuSeconds() - t0);
    c.after = out;
  }
  c.text = cds::ir::PrintProgram(c.after);
  cds::ir::ParseOptions po;
  po.max_input_bytes = size_t{1} << 31;
  c.reparsed = cds::ir::ParseProgram(c.text, po);
  return cache.emplace(statements, std::move(c)).first->second;
}

void SetPerStatement(benchmark::State& state, int64_t statements) {
  state.SetItemsProcessed(state.iterations() * statements);
  state.counters["ns_per_stmt"] = benchmark::Counter(
      static_cast<double>(statements) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Runs `body` once per iteration and reports its best CPU time against the
// pipeline's best (both measured here, with the same clock). A program `body`
// returns is freed with both clocks stopped: freeing is not the measured work.
template <typename F>
void TimeAgainstPass(benchmark::State& state, const Case& c, F&& body) {
  // One untimed run first: the first large allocation after the previous case
  // freed millions of nodes pays for malloc's consolidation of them.
  if (c.statements < 1000000) body().reset();
  double best = 1e30;
  for (auto _ : state) {
    double t0 = CpuSeconds();
    ProgramPtr result = body();
    best = std::min(best, CpuSeconds() - t0);
    state.PauseTiming();
    result.reset();
    state.ResumeTiming();
  }
  SetPerStatement(state, c.statements);
  state.counters["x_pass"] = best / c.pass_seconds;
  state.counters["pass_ms"] = c.pass_seconds * 1e3;
}

// The pipeline as the dev preset runs it: verify-each on, so the invariant checks
// run after each of its two passes and the round trip once, after the last.
void BM_PipelineVerifyEach(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  cds::driver::PipelineOptions options;
  options.verify_each = true;
  TimeAgainstPass(state, c, [&] { return cds::driver::RunPipeline(c.before, options); });
}

// The same without the final round trip: what the per-pass invariant checks cost.
void BM_PipelineVerifyEachInvariantsOnly(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  cds::pass::PassManager pm = cds::pass::PassManager::FromPipeline(cds::pass::kDefaultPipeline);
  for (auto& inst : cds::driver::VerifyEachInstrumentations(/*last_pass=*/""))
    pm.AddInstrumentation(std::move(inst));
  TimeAgainstPass(state, c, [&] { return pm.Run(c.before); });
}

void BM_VerifyAll(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  size_t diagnostics = 0;
  TimeAgainstPass(state, c, [&] {
    auto d = cds::verify::VerifyAll(c.before, c.after);
    diagnostics = d.size();
    benchmark::DoNotOptimize(d);
    return ProgramPtr();
  });
  state.counters["diagnostics"] = static_cast<double>(diagnostics);
  if (diagnostics != 0) {
    auto d = cds::verify::VerifyAll(c.before, c.after);
    state.SkipWithError(("the verifier rejects the pass output: " + d.front().message).c_str());
  }
}

void BM_VerifySelfCheck(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  cds::verify::VerifyOptions o;
  o.round_trip = false;
  TimeAgainstPass(state, c, [&] {
    benchmark::DoNotOptimize(cds::verify::VerifyProgram(c.after, o));
    return ProgramPtr();
  });
}

void BM_VerifyRelational(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  cds::verify::VerifyOptions o;
  o.round_trip = false;
  TimeAgainstPass(state, c, [&] {
    benchmark::DoNotOptimize(cds::verify::VerifyRelational(c.before, c.after, o));
    return ProgramPtr();
  });
}

void BM_RoundTripPrint(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  TimeAgainstPass(state, c, [&] {
    benchmark::DoNotOptimize(cds::ir::PrintProgram(c.after));
    return ProgramPtr();
  });
  state.counters["text_MB"] = static_cast<double>(c.text.size()) / (1 << 20);
}

void BM_RoundTripParse(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  cds::ir::ParseOptions po;
  po.max_input_bytes = size_t{1} << 31;
  TimeAgainstPass(state, c, [&] { return cds::ir::ParseProgram(c.text, po); });
}

void BM_RoundTripCompare(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  TimeAgainstPass(state, c, [&] {
    bool eq = cds::ir::StructuralEqual(c.after, c.reparsed);
    benchmark::DoNotOptimize(eq);
    return ProgramPtr();
  });
}

void BM_RoundTripHashes(benchmark::State& state) {
  const Case& c = CaseOf(state.range(0));
  TimeAgainstPass(state, c, [&] {
    benchmark::DoNotOptimize(cds::ir::StructuralHash(c.after));
    benchmark::DoNotOptimize(cds::ir::StructuralHash(c.reparsed));
    return ProgramPtr();
  });
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->Arg(1000)->Arg(10000)->Arg(100000);
}
void Huge(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->Arg(1000000)->Iterations(1);
}

}  // namespace

BENCHMARK(BM_PipelineVerifyEach)->Apply(Sizes);
BENCHMARK(BM_PipelineVerifyEachInvariantsOnly)->Apply(Sizes);
BENCHMARK(BM_VerifyAll)->Apply(Sizes);
BENCHMARK(BM_VerifySelfCheck)->Apply(Sizes);
BENCHMARK(BM_VerifyRelational)->Apply(Sizes);
BENCHMARK(BM_RoundTripPrint)->Apply(Sizes);
BENCHMARK(BM_RoundTripParse)->Apply(Sizes);
BENCHMARK(BM_RoundTripCompare)->Apply(Sizes);
BENCHMARK(BM_RoundTripHashes)->Apply(Sizes);

// The 10^6 cases last: their programs stay cached and would otherwise
// fragment the heap and the caches under every smaller case.
BENCHMARK(BM_VerifyAll)->Apply(Huge);
BENCHMARK(BM_VerifySelfCheck)->Apply(Huge);
BENCHMARK(BM_VerifyRelational)->Apply(Huge);
BENCHMARK(BM_RoundTripPrint)->Apply(Huge);
BENCHMARK(BM_RoundTripParse)->Apply(Huge);
BENCHMARK(BM_RoundTripCompare)->Apply(Huge);
BENCHMARK(BM_RoundTripHashes)->Apply(Huge);
