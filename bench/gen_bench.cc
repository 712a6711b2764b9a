// Generator throughput: programs per second at 10, 100 and 1000 host statements,
// for the model alone and for the full GeneratedProgram (IR, text, expectation).

#include <benchmark/benchmark.h>

#include "fuzz/gen/generate.h"

namespace {

cds::fuzz::GenOptions Sized(int64_t size) {
  cds::fuzz::GenOptions o;
  o.size = static_cast<int>(size);
  o.fixed_size = true;
  return o;
}

void BM_GenerateModel(benchmark::State& state) {
  const cds::fuzz::GenOptions options = Sized(state.range(0));
  uint64_t seed = 1;
  int64_t stmts = 0;
  for (auto _ : state) {
    cds::fuzz::PrngChoices choices(seed++);
    cds::fuzz::ProgramModel m = cds::fuzz::GenerateModel(choices, options);
    stmts += m.num_stmts;
    benchmark::DoNotOptimize(m);
  }
  state.counters["programs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["stmts/program"] =
      static_cast<double>(stmts) / static_cast<double>(state.iterations());
}

void BM_GenerateProgram(benchmark::State& state) {
  const cds::fuzz::GenOptions options = Sized(state.range(0));
  uint64_t seed = 1;
  for (auto _ : state) {
    cds::fuzz::GeneratedProgram p = cds::fuzz::Generate(seed++, options);
    benchmark::DoNotOptimize(p);
  }
  state.counters["programs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_GenerateModel)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GenerateProgram)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
