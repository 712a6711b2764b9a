// Structural hash and structural equality on large materialized programs, in ns
// per visited node (a Var-like node counts once per occurrence, as the walks see it).

#include <map>

#include <benchmark/benchmark.h>

#include "bench/programs.h"
#include "driver/driver.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"

namespace {

struct Pair {
  cds::ir::ProgramPtr lhs, rhs;  // equal, but no node shared apart from the op registry's
  int64_t nodes = 0;
};

cds::ir::ProgramPtr Materialize(const cds::ir::ProgramPtr& p) {
  cds::driver::PipelineOptions options;
  options.verify_each = false;
  return cds::driver::RunPipeline(p, options);
}

// Built once per size for the whole binary (10^6 takes seconds).
const Pair& ProgramsOf(int64_t statements) {
  static std::map<int64_t, Pair> cache;
  auto it = cache.find(statements);
  if (it != cache.end()) return it->second;
  Pair p;
  p.lhs = Materialize(cds::bench::BuildHostProgram(statements).program);
  p.rhs = Materialize(cds::bench::BuildHostProgram(statements).program);
  p.nodes = cds::bench::CountNodesVisited(p.lhs);
  return cache.emplace(statements, std::move(p)).first->second;
}

void SetPerNode(benchmark::State& state, int64_t nodes) {
  state.SetItemsProcessed(state.iterations() * nodes);
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(nodes) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["nodes"] = static_cast<double>(nodes);
}

void BM_StructuralHash(benchmark::State& state) {
  const Pair& p = ProgramsOf(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(cds::ir::StructuralHash(p.lhs));
  if (cds::ir::StructuralHash(p.lhs) != cds::ir::StructuralHash(p.rhs)) {
    state.SkipWithError("equal programs hash differently");
  }
  SetPerNode(state, p.nodes);
}

void BM_StructuralEqual(benchmark::State& state) {
  const Pair& p = ProgramsOf(state.range(0));
  bool equal = true;
  for (auto _ : state) {
    equal = cds::ir::StructuralEqual(p.lhs, p.rhs);
    benchmark::DoNotOptimize(equal);
  }
  if (!equal) state.SkipWithError("the two builds differ");
  SetPerNode(state, p.nodes);
}

// What callers pay for a difference path when the programs turn out equal.
void BM_StructuralEqualWhere(benchmark::State& state) {
  const Pair& p = ProgramsOf(state.range(0));
  bool equal = true;
  for (auto _ : state) {
    equal = cds::ir::StructuralEqualWhere(p.lhs, p.rhs).equal;
    benchmark::DoNotOptimize(equal);
  }
  if (!equal) state.SkipWithError("the two builds differ");
  SetPerNode(state, p.nodes);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->Arg(10000)->Arg(100000);
}
void Huge(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->Arg(1000000)->Iterations(2);
}

}  // namespace

BENCHMARK(BM_StructuralHash)->Apply(Sizes);
BENCHMARK(BM_StructuralEqual)->Apply(Sizes);
BENCHMARK(BM_StructuralEqualWhere)->Apply(Sizes);

// The 10^6 cases last: their programs stay cached and would otherwise
// fragment the heap and the caches under every smaller case.
BENCHMARK(BM_StructuralHash)->Apply(Huge);
BENCHMARK(BM_StructuralEqual)->Apply(Huge);
BENCHMARK(BM_StructuralEqualWhere)->Apply(Huge);
