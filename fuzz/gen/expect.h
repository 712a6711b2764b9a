#pragma once

// The expected result of SynthesizeAllReduceSignals + MaterializeCommDomainScopes,
// derived from the program model alone (never by running a pass).

#include <optional>
#include <string>
#include <vector>

#include <absl/container/inlined_vector.h>
#include <nlohmann/json.hpp>

#include "fuzz/gen/model.h"
#include "ir/stmt.h"

namespace cds::fuzz {

// A set of device ids in the model's own form: ALL, or a union of half-open id
// intervals kept sorted, disjoint and coalesced, so that equal sets compare equal.
// Dispatches and loops produce intervals directly ({N} is [N, N+1), a range loop
// [a, b)).
class Coverage {
 public:
  static Coverage All();
  static Coverage Interval(int64_t lo, int64_t hi);  // empty when hi <= lo
  static Coverage Device(int64_t id) { return Interval(id, id + 1); }

  bool all() const { return all_; }
  bool Empty() const { return !all_ && intervals_.empty(); }
  // ALL absorbs everything; otherwise the union of the two sets.
  void Absorb(const Coverage& other);
  bool operator==(const Coverage&) const = default;

  // The ids in increasing order (nothing for ALL).
  std::vector<int64_t> Ids() const;
  // The IR's plain device list: `all`, or every id once, in increasing order.
  ir::DeviceSet ToDeviceSet() const;
  // "all" or "[0, 1, 5]".
  std::string Text() const;

 private:
  bool all_ = false;
  // Almost every set is one interval (a device, a range loop); inline storage keeps
  // the per-alloc coverage tables the generator rebuilds for every program off the heap.
  absl::InlinedVector<std::pair<int64_t, int64_t>, 2> intervals_;
};

// An alloc's byte size as a function of the world size: constant +
// per_world_size * world_size. Every size form the generator writes is linear in
// it (`n * 4` with `n = pld.world_size()`, a synthesized signal's
// `world_size * core_num * 4`, or a constant).
struct SizeExpect {
  int64_t constant = 0;
  int64_t per_world_size = 0;
  int64_t At(int64_t world_size) const { return constant + per_world_size * world_size; }
  bool operator==(const SizeExpect&) const = default;
};

// What dispatches give: only calls of chip-level orchestrators count (Graph and
// InCore callees add nothing).
bool IsDispatchTarget(const FunctionModel& f);
Coverage LoopCoverage(const LoopModel& loop);
bool LoopIsEmpty(const LoopModel& loop);
// The descriptor of a dispatch's device=, or nullopt for a form the pass rejects.
// A dispatch without device= (DeviceForm::kUnplaced) has no descriptor and is no
// error: the runtime places it, and it covers no device.
std::optional<Coverage> DeviceDescriptor(const ProgramModel& m, const DispatchModel& d);
// The alloc a value resolves to as a window view, or -1.
int ViewAlloc(const ProgramModel& m, int value);
// Dispatch-derived coverage of every alloc (indexed like m.allocs; empty for
// allocs no dispatch reaches). Unplaced dispatches and invalid device forms add
// nothing.
std::vector<Coverage> DispatchCoverage(const ProgramModel& m);
// The (paired alloc -> inheriting alloc) edges of a collective: signal and
// recv_counts inherit from data (allreduce/broadcast/reduce_scatter) or target
// (allgather/all_to_all/all_to_all_v). barrier and implicit signals give none here.
// At most two edges (all_to_all_v), so returned inline.
using InheritanceEdges = absl::InlinedVector<std::pair<int, int>, 2>;
InheritanceEdges InheritancePairs(const ProgramModel& m, const CollectiveModel& c);
// The byte size the alloc asks for, from its size form.
SizeExpect AllocSize(const ProgramModel& m, const AllocModel& a);

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
  std::string name;          // logical alloc name (the slot's name)
  std::string var_name;      // the alloc's LHS variable
  bool synthesized = false;  // an implicit allreduce signal buffer
  Coverage dispatch_coverage;
  Coverage coverage;  // merged: dispatch-derived + inherited
  SizeExpect size;    // the WindowBuffer's size
  int scope = -1;
};

struct ScopeExpect {
  std::string name;                    // comm_d0, comm_d1, ...
  ir::DeviceSet devices;               // the IR's device list, as the output must carry it
  std::vector<SizeExpect> sizes;       // the slots' WindowBuffer sizes
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
