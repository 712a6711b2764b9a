// The default pipeline (SynthesizeAllReduceSignals, MaterializeCommDomainScopes)
// on one host orchestrator of 10^3 .. 10^6 statements, in ns per statement: the
// pipeline must scale linearly (10^6 within 2x of 10^4 per statement) and stay
// under 1 us per statement at 10^6.

#include <benchmark/benchmark.h>

#include "bench/programs.h"
#include "driver/driver.h"
#include "pass/materialize_comm_domain_scopes.h"
#include "pass/synthesize_allreduce_signals.h"

namespace {

using cds::bench::HostProgram;

// ns per statement, derived by the library from the measured time: the counter
// holds statements in units of 1e-9 so that the inverted rate reads in ns.
void SetPerStatement(benchmark::State& state, int64_t statements) {
  state.SetItemsProcessed(state.iterations() * statements);
  state.counters["ns_per_stmt"] = benchmark::Counter(
      static_cast<double>(statements) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["stmts"] = static_cast<double>(statements);
}

// The output shares most nodes with the input; freeing the rest is not the
// pass's work, so it happens with the clock stopped. One run before the clock maps
// and faults in the memory the timed runs reuse (the node arena's dead chunks, the
// allocator's pages): the small sizes amortize that first run over hundreds of
// iterations, 10^6 runs three, so without it sizes would differ in how much of
// their time is first-touch page faults rather than in the pipeline's work.
template <typename F>
void TimeRuns(benchmark::State& state, F&& run) {
  run();
  for (auto _ : state) {
    cds::ir::ProgramPtr out = run();
    benchmark::DoNotOptimize(out.get());
    state.PauseTiming();
    out.reset();
    state.ResumeTiming();
  }
}

void BM_Pipeline(benchmark::State& state) {
  const auto& big = HostProgram(state.range(0));
  cds::driver::PipelineOptions options;
  options.verify_each = false;
  TimeRuns(state, [&] { return cds::driver::RunPipeline(big.program, options); });
  SetPerStatement(state, big.statements);
  state.counters["allocs"] = static_cast<double>(big.allocs);
  state.counters["domains"] = static_cast<double>(big.device_sets);
}

// The two passes on their own, to see which one a regression belongs to.
void BM_SynthesizeAllReduceSignals(benchmark::State& state) {
  const auto& big = HostProgram(state.range(0));
  TimeRuns(state, [&] { return cds::pass::SynthesizeAllReduceSignals(big.program); });
  SetPerStatement(state, big.statements);
}

void BM_MaterializeCommDomainScopes(benchmark::State& state) {
  const auto& big = HostProgram(state.range(0));
  const cds::ir::ProgramPtr input = cds::pass::SynthesizeAllReduceSignals(big.program);
  TimeRuns(state, [&] { return cds::pass::MaterializeCommDomainScopes(input); });
  SetPerStatement(state, big.statements);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond);
  b->Arg(1000)->Arg(10000)->Arg(100000);
}

}  // namespace

BENCHMARK(BM_Pipeline)->Apply(Sizes);
BENCHMARK(BM_SynthesizeAllReduceSignals)->Apply(Sizes);
BENCHMARK(BM_MaterializeCommDomainScopes)->Apply(Sizes);

// The 10^6 cases last: their programs stay cached and would otherwise
// fragment the heap and the caches under every smaller case.
BENCHMARK(BM_Pipeline)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_SynthesizeAllReduceSignals)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(BM_MaterializeCommDomainScopes)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
