#pragma once

// The expected result of SynthesizeAllReduceSignals + MaterializeCommDomainScopes,
// derived from the program model alone (never by running a pass).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/gen/model.h"
#include "ir/stmt.h"

namespace cds::fuzz {

// What dispatches give: only calls of chip-level orchestrators count (Graph and
// InCore callees add nothing).
bool IsDispatchTarget(const FunctionModel& f);
ir::DeviceSet LoopCoverage(const LoopModel& loop);
bool LoopIsEmpty(const LoopModel& loop);
// The descriptor of a dispatch's device=, or nullopt for a form the pass rejects.
std::optional<ir::DeviceSet> DeviceDescriptor(const ProgramModel& m, const DispatchModel& d);
// The alloc a value resolves to as a window view, or -1.
int ViewAlloc(const ProgramModel& m, int value);
// Dispatch-derived coverage of every alloc (indexed like m.allocs; empty subset
// for allocs no dispatch reaches). Invalid device forms are skipped.
std::vector<ir::DeviceSet> DispatchCoverage(const ProgramModel& m);
// The (paired alloc -> inheriting alloc) edges of a collective: signal and
// recv_counts inherit from data (allreduce/broadcast/reduce_scatter) or target
// (allgather/all_to_all/all_to_all_v). barrier and implicit signals give none here.
std::vector<std::pair<int, int>> InheritancePairs(const ProgramModel& m, const CollectiveModel& c);

// Calls f(stmt) for every statement of a body, in source (pre-)order.
template <typename F>
void ForEachStmt(const std::vector<StmtModel>& body, F&& f) {
  for (const StmtModel& s : body) {
    f(s);
    ForEachStmt(s.body, f);
    ForEachStmt(s.orelse, f);
  }
}

struct AllocExpect {
  std::string name;      // logical alloc name (the slot's name)
  std::string var_name;  // the alloc's LHS variable
  bool synthesized = false;  // an implicit allreduce signal buffer
  ir::DeviceSet dispatch_coverage;
  ir::DeviceSet coverage;  // merged: dispatch-derived + inherited
  int scope = -1;
};

struct ScopeExpect {
  std::string name;  // comm_d0, comm_d1, ...
  ir::DeviceSet devices;
  std::vector<std::string> slots;      // alloc names, source order
  std::vector<std::string> slot_vars;  // their LHS variable names
};

struct FunctionExpect {
  std::string name;
  std::vector<AllocExpect> allocs;  // source order, synthesized ones included
  std::vector<ScopeExpect> scopes;  // outermost first
};

// A signal SynthesizeAllReduceSignals inserts for a signal-less allreduce.
struct SynthesizedSignal {
  std::string function;
  int counter = 0;
  std::string world_size_var;  // __allreduce_signal_world_size_K
  std::string buffer;          // __allreduce_signal_buf_K (an alloc)
  std::string view;            // __allreduce_signal_K
  std::string data_alloc;      // the allreduce's data alloc
  int stmt = -1;
};

struct LiftedResult {
  std::string function;
  std::string name;  // __allreduce_result_K
  int stmt = -1;
};

struct Expectation {
  std::vector<FunctionExpect> functions;  // host orchestrators, name order
  std::vector<SynthesizedSignal> signals;
  std::vector<LiftedResult> results;
  // Reasons the model would be rejected (empty for every valid program; a
  // non-empty list for a "valid" program is a generator bug).
  std::vector<std::string> problems;

  const FunctionExpect* Find(std::string_view function) const;
};

Expectation ComputeExpectation(const ProgramModel& m);

nlohmann::json ToJson(const Expectation& e);
nlohmann::json ToJson(const InvalidSpec& s);

}  // namespace cds::fuzz
