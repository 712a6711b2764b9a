#pragma once

// What the verifier re-derives about one host orchestrator of a materialized
// program, in one walk of its body: the scope chain, the allocs, which Vars are
// views of which alloc (windows, aliases, in-place collective results), the
// dispatch coverage of every alloc, the collective pairings and the assignments
// the type-symmetry check looks at. Every rule here is the verifier's own
// statement of what the pass must do; none is shared with pass code.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "ir/function.h"
#include "verifier/devices.h"
#include "verifier/diagnostic.h"

namespace cds::verify {

inline constexpr size_t kNone = std::numeric_limits<size_t>::max();

struct AllocInfo {
  const ir::Var* var = nullptr;  // the LHS: the expected WindowBuffer base
  const ir::Call* call = nullptr;
  ir::Span span;              // the alloc statement's
  std::string name;           // the logical name (name= kwarg), else the Var's name
  std::vector<size_t> views;  // indices into HostAnalysis::views, source order

  // Coverage (coverage.cc): dispatch descriptors, then inheritance on top.
  Devices dispatch_cov;
  bool dispatched = false;
  bool unplaced = false;  // passed to a dispatch without device=, which covers nothing
  Devices coverage;
  bool covered = false;

  // Sharing (window_buffer_sharing.cc): the WindowBuffer the alloc's views agree on
  // (its first view's), else the one its slot holds; and where it sits as a slot.
  ir::WindowBufferPtr canonical;
  std::vector<std::pair<size_t, size_t>> slot_refs;  // (scope index, slot index)
};

enum class ViewKind { kWindow, kAlias, kCollectiveResult };

struct ViewInfo {
  const ir::Var* var = nullptr;
  const ir::AssignStmt* stmt = nullptr;
  size_t alloc = kNone;
  ViewKind kind = ViewKind::kWindow;
};

struct ScopeInfo {
  const ir::CommDomainScopeStmt* stmt = nullptr;
  bool in_chain = false;           // part of the outer wrapper chain
  std::vector<size_t> slot_owner;  // alloc per slot, kNone when it has none
};

// A collective's signal (or all_to_all_v's recv_counts) takes over the dispatch
// coverage of the paired data/target alloc.
struct Inheritance {
  size_t from = kNone;
  size_t to = kNone;
};

struct ChainProblem {
  std::string message;
  ir::Span span;
};

// A loop's or a dispatch's device descriptor; `why` says what made it unusable.
struct Descriptor {
  bool ok = false;
  Devices set;
  std::string why;
};

enum class BoundKind { kWorldSize, kConst };
struct BoundValue {
  BoundKind kind = BoundKind::kConst;
  int64_t value = 0;
};
// Every Var assigned a constant or world_size() so far, and the descriptor of
// every enclosing loop's induction variable.
using BoundEnv = absl::flat_hash_map<const ir::Var*, BoundValue>;
using LoopEnv = absl::flat_hash_map<const ir::Var*, Descriptor>;

// coverage.cc: the descriptor of a dispatch loop and of a dispatch's device=.
Descriptor LoopDescriptor(const ir::ForStmt& loop, const BoundEnv& bounds);
Descriptor DeviceDescriptor(const ir::ExprPtr& device, const LoopEnv& loops);

struct HostAnalysis {
  const ir::Program* program = nullptr;
  const ir::Function* fn = nullptr;
  std::vector<ScopeInfo> scopes;  // chain first (outer first), then stray scopes in walk order
  size_t chain_length = 0;
  std::vector<ChainProblem> chain_problems;
  std::vector<AllocInfo> allocs;                              // source order
  std::vector<ViewInfo> views;                                // source order
  absl::flat_hash_map<const ir::Var*, size_t> alloc_of_ptr;   // alloc LHS -> alloc
  absl::flat_hash_map<const ir::Var*, size_t> alloc_of_view;  // view-like Var -> alloc
  // Assignments whose RHS is a Call or a Var and whose LHS type does not agree with
  // the RHS type (TypesAgree, decided during the walk while both are in cache);
  // type_symmetry.cc reports them.
  std::vector<const ir::AssignStmt*> asymmetric_assigns;
  std::vector<const ir::Call*> allreduces;
  std::vector<Inheritance> inheritances;

  size_t ViewAlloc(const ir::ExprPtr& e) const;  // kNone unless e is a view-like Var
};

// Walks `fn` (a host orchestrator of `program`). Reports malformed nodes and
// unresolvable dispatch devices into `sink`; everything else is left to the checks.
HostAnalysis AnalyzeHostOrchestrator(const ir::Program& program, const ir::Function& fn,
                                     DiagnosticSink& sink);

}  // namespace cds::verify
