#pragma once

// What the verifier re-derives about one host orchestrator of a materialized
// program, in one walk of its body: the scope chain, the allocs, which Vars are
// views of which alloc (windows, aliases, in-place collective results), the
// dispatch coverage of every alloc, the collective pairings and the assignments
// the type-symmetry check looks at. Nothing here comes from pass code: the
// rules are DESIGN §4 steps 1-4, implemented again.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/function.h"
#include "ir/ptr_table.h"
#include "verifier/diagnostic.h"

namespace cds::verify {

inline constexpr size_t kNone = std::numeric_limits<size_t>::max();

using ir::PtrTable;

struct AllocInfo {
  const ir::Var* var = nullptr;  // the LHS: the expected WindowBuffer base
  const ir::Call* call = nullptr;
  ir::Span span;              // the alloc statement's
  std::string name;           // the logical name (name= kwarg), else the Var's name
  std::vector<size_t> views;  // indices into HostAnalysis::views, source order

  // Coverage (coverage.cc): dispatch descriptors, then inheritance on top.
  ir::DeviceSet dispatch_cov;
  bool dispatched = false;
  ir::DeviceSet coverage;
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
  ir::DeviceSet set;
  std::string why;
};

enum class BoundKind { kWorldSize, kConst };
struct BoundValue {
  BoundKind kind = BoundKind::kConst;
  int64_t value = 0;
};
using BoundEnv = std::unordered_map<const ir::Var*, BoundValue>;
using LoopEnv = std::unordered_map<const ir::Var*, Descriptor>;
// The walk's own bound environment (every Var assigned a constant or world_size()).
using BoundTable = PtrTable<BoundValue>;  // keyed by const ir::Var*

// Largest explicit device range the verifier expands (bigger ones are reported as
// unresolvable rather than exhausting memory).
inline constexpr int64_t kMaxDeviceRange = 1 << 16;

// coverage.cc: DESIGN §4 step 3, re-implemented.
Descriptor LoopDescriptor(const ir::ForStmt& loop, const BoundEnv& bounds);
Descriptor LoopDescriptor(const ir::ForStmt& loop, const BoundTable& bounds);
Descriptor DeviceDescriptor(const ir::ExprPtr& device, const LoopEnv& loops);

struct HostAnalysis {
  const ir::Program* program = nullptr;
  const ir::Function* fn = nullptr;
  std::vector<ScopeInfo> scopes;  // chain first (outer first), then stray scopes in walk order
  size_t chain_length = 0;
  std::vector<ChainProblem> chain_problems;
  std::vector<AllocInfo> allocs;                             // source order
  std::vector<ViewInfo> views;                               // source order
  PtrTable<size_t> alloc_of_ptr;   // alloc LHS (const ir::Var*) -> alloc
  PtrTable<size_t> alloc_of_view;  // view-like Var (const ir::Var*) -> alloc
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
