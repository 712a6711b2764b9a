#pragma once

// Large deterministic host programs shared by the pipeline, verifier and hash
// benchmarks. They are built with the IR builder (no parser in the way), so a
// benchmark measures only what it times.

#include <cstdint>

#include "ir/function.h"

namespace cds::bench {

struct BigProgram {
  ir::ProgramPtr program;
  int64_t statements = 0;   // non-SeqStmts statements of the host body, nested ones included
  int64_t allocs = 0;       // written allocs (SynthesizeAllReduceSignals adds more)
  int64_t device_sets = 0;  // distinct merged device sets, i.e. comm domains expected
};

// One host orchestrator of about `statements` statements (rounded to blocks of
// ten) plus one chip orchestrator. Every block opens an alloc (so ~10% of the
// statements are allocs), views it, dispatches it with one of 37 device forms
// (constants, constant pairs, constant ranges, world_size), adds scalar and
// tensor noise and an alias; every tenth block ends with a signal-less allreduce
// for SynthesizeAllReduceSignals to complete. Same input, same program.
BigProgram BuildHostProgram(int64_t statements);

// Cached per size: building 10^6 statements takes seconds and the benchmarks of
// one binary share the programs.
const BigProgram& HostProgram(int64_t statements);

// The program the whole-process benchmark (tool_bench) gives cds-opt: one host
// orchestrator with `allocs` window allocs, each with one pld.window view, and
// `loops` pl.range loops that dispatch the views, in order and in equal shares,
// to four chip orchestrators in turn. Loop k runs over pl.range(k % 4 + 1), so the
// allocs fall into four comm domains. 30,000 allocs and 500 loops print as 6.8 MB
// of text (6.5 MiB; bench/run.sh reports MiB).
ir::ProgramPtr BuildDispatchLoopsProgram(int64_t allocs, int64_t loops);

// Number of nodes reachable from `root` counted with repetition (a node reached
// through two parents counts twice), which is what a structural walk visits.
int64_t CountNodesVisited(const ir::NodePtr& root);

}  // namespace cds::bench
