#pragma once

// Software prefetching for the printer (ir/printer.cc).
//
// Printing is a walk over nodes spread across the heap: on large programs nearly
// every node the printer reaches is a cache (and TLB) miss, and the walk takes them
// one after another. The printer therefore runs a few statements (or functions)
// ahead of itself, prefetching one level deeper each step: the statement node,
// then its children (variable, value), then theirs (types, argument arrays), and so
// on. Levels above the one prefetched are read, and by then they have arrived.
// Prefetches have no effect on what is printed.
//
// That tree walk re-reads every level above the one it prefetches, and was a
// fifth to a third of a 100 MB print. A parsed program needs none of it: the parser places
// nodes in the arena in text order (ir/node_arena.h), so what the printer reads
// next lies a little further along the same chunk. ArenaSweep prefetches by
// address along the arena instead, and the printer walks the tree only where the
// statements it prints are not close together in memory (a pass's output, where
// new statements live apart from the input's).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/function.h"
#include "ir/node_arena.h"
#include "ir/print_tables.h"

namespace cds::ir::print_detail {

inline void Prefetch(const void* p) { __builtin_prefetch(p, 0, 3); }

// The printer's per-function name tables: a variable's entries are prefetched
// with the variable (by address), and its name's once the variable has arrived.
struct NameTables {
  const PtrMap<std::string_view>* names = nullptr;
  const StringSet* used = nullptr;
};

void PrefetchLevel(const Node* n, int depth, int& budget, const NameTables& tables);

template <typename P>
inline void PrefetchVec(const NodeList<P>& v, int depth, int& budget, const NameTables& tables) {
  if (v.empty()) return;
  if (depth == 0) {
    Prefetch(v.data());
    --budget;
    return;
  }
  for (const auto& e : v) {
    if (budget <= 0) return;
    PrefetchLevel(e.get(), depth - 1, budget, tables);
  }
}

// Prefetches what lies `depth` levels below `n` (0: `n` itself; a vector's array
// counts as a level), at most `budget` lines.
inline void PrefetchLevel(const Node* n, int depth, int& budget, const NameTables& tables) {
  if (!n || budget <= 0) return;
  if (depth == 0) {
    Prefetch(n);
    --budget;
    return;
  }
  const int d = depth - 1;
  // An assignment reads its value's type (annotation or not).
  if (IsExprKind(n->kind()))
    PrefetchLevel(static_cast<const Expr&>(*n).type.get(), d, budget, tables);
  switch (n->kind()) {
    case NodeKind::kAssignStmt: {
      const auto& s = static_cast<const AssignStmt&>(*n);
      if (d == 0 && s.var && tables.names) {
        tables.names->PrefetchSlot(s.var.get());
      } else if (d == 1 && s.var && tables.used) {
        tables.used->PrefetchSlot(HashString(s.var->name_hint));
      }
      PrefetchLevel(s.var.get(), d, budget, tables);
      PrefetchLevel(s.value.get(), d, budget, tables);
      return;
    }
    case NodeKind::kEvalStmt:
      PrefetchLevel(static_cast<const EvalStmt&>(*n).expr.get(), d, budget, tables);
      return;
    case NodeKind::kReturnStmt:
      PrefetchVec(static_cast<const ReturnStmt&>(*n).values, d, budget, tables);
      return;
    case NodeKind::kYieldStmt:
      PrefetchVec(static_cast<const YieldStmt&>(*n).values, d, budget, tables);
      return;
    case NodeKind::kUnpackAssignStmt: {
      const auto& s = static_cast<const UnpackAssignStmt&>(*n);
      PrefetchVec(s.vars, d, budget, tables);
      PrefetchLevel(s.value.get(), d, budget, tables);
      return;
    }
    case NodeKind::kSubscriptAssignStmt: {
      const auto& s = static_cast<const SubscriptAssignStmt&>(*n);
      PrefetchLevel(s.target.get(), d, budget, tables);
      PrefetchLevel(s.value.get(), d, budget, tables);
      return;
    }
    case NodeKind::kSeqStmts:
      PrefetchVec(static_cast<const SeqStmts&>(*n).stmts, d, budget, tables);
      return;
    case NodeKind::kForStmt: {
      const auto& s = static_cast<const ForStmt&>(*n);
      PrefetchLevel(s.loop_var.get(), d, budget, tables);
      PrefetchLevel(s.start.get(), d, budget, tables);
      PrefetchLevel(s.stop.get(), d, budget, tables);
      PrefetchLevel(s.step.get(), d, budget, tables);
      PrefetchLevel(s.body.get(), d, budget, tables);
      return;
    }
    case NodeKind::kWhileStmt: {
      const auto& s = static_cast<const WhileStmt&>(*n);
      PrefetchLevel(s.cond.get(), d, budget, tables);
      PrefetchLevel(s.body.get(), d, budget, tables);
      return;
    }
    case NodeKind::kIfStmt: {
      const auto& s = static_cast<const IfStmt&>(*n);
      PrefetchLevel(s.cond.get(), d, budget, tables);
      PrefetchLevel(s.then_body.get(), d, budget, tables);
      PrefetchLevel(s.else_body.get(), d, budget, tables);
      return;
    }
    case NodeKind::kCommDomainScopeStmt: {
      const auto& s = static_cast<const CommDomainScopeStmt&>(*n);
      PrefetchLevel(s.body.get(), d, budget, tables);
      return;
    }
    case NodeKind::kScopeStmt: {
      const auto& s = static_cast<const ScopeStmt&>(*n);
      PrefetchVec(s.args, d, budget, tables);
      PrefetchLevel(s.body.get(), d, budget, tables);
      return;
    }
    case NodeKind::kCall: {
      const auto& c = static_cast<const Call&>(*n);
      PrefetchVec(c.args, d, budget, tables);
      if (d == 0 && !c.kwargs.empty()) {
        Prefetch(c.kwargs.data());
        --budget;
      }
      return;
    }
    case NodeKind::kBinaryExpr: {
      const auto& b = static_cast<const BinaryExpr&>(*n);
      PrefetchLevel(b.lhs.get(), d, budget, tables);
      PrefetchLevel(b.rhs.get(), d, budget, tables);
      return;
    }
    case NodeKind::kUnaryExpr:
      PrefetchLevel(static_cast<const UnaryExpr&>(*n).operand.get(), d, budget, tables);
      return;
    case NodeKind::kMakeTuple:
      PrefetchVec(static_cast<const MakeTuple&>(*n).elements, d, budget, tables);
      return;
    case NodeKind::kSubscript: {
      const auto& s = static_cast<const Subscript&>(*n);
      PrefetchLevel(s.value.get(), d, budget, tables);
      PrefetchVec(s.indices, d, budget, tables);
      return;
    }
    case NodeKind::kTensorType:
      PrefetchVec(static_cast<const TensorType&>(*n).shape, d, budget, tables);
      return;
    case NodeKind::kTileType:
      PrefetchVec(static_cast<const TileType&>(*n).shape, d, budget, tables);
      return;
    case NodeKind::kDistributedTensorType: {
      const auto& t = static_cast<const DistributedTensorType&>(*n);
      PrefetchVec(t.shape, d, budget, tables);
      PrefetchLevel(t.window_buffer.get(), d, budget, tables);
      return;
    }
    case NodeKind::kTupleType:
      PrefetchVec(static_cast<const TupleType&>(*n).types, d, budget, tables);
      return;
    case NodeKind::kFunction: {
      const auto& f = static_cast<const Function&>(*n);
      PrefetchVec(f.params, d, budget, tables);
      PrefetchLevel(f.body.get(), d, budget, tables);
      return;
    }
    default:
      return;
  }
}

// Called before printing element `i` of `v`: element i + m * step gets level ahead - m,
// so each element goes one level deeper every `step` elements printed.
template <typename L>
inline void PrefetchAhead(const L& v, size_t i, int ahead, int budget_each,
                          const NameTables& tables, int step = 1) {
  for (int m = 1; m <= ahead; ++m) {
    const size_t j = i + static_cast<size_t>(m * step);
    if (j >= v.size()) return;
    int budget = budget_each;
    PrefetchLevel(v[j].get(), ahead - m, budget, tables);
  }
}

// Prefetches the arena a fixed distance ahead of the nodes being printed, one
// step per statement (or function) handed to Step.
class ArenaSweep {
 public:
  // How far ahead of the current node the sweep runs. 32 and 64 KiB measured alike
  // on text_bench's programs, 16 KiB a little slower; 256 KiB and more evicted what
  // was about to be read.
  static constexpr uintptr_t kAhead = uintptr_t{32} << 10;
  // Lines prefetched at most per step, so that a restart (or a run of tiny
  // statements after a jump) does not issue hundreds of prefetches at once.
  static constexpr uintptr_t kMaxLinesPerStep = 64;
  static constexpr uintptr_t kLine = 64;

  // `run_needed`: how many nodes in a row must each lie within kAhead of the one
  // before before the sweep engages (0: always).
  explicit ArenaSweep(int run_needed) : run_needed_(run_needed) {}

  // Called with each node about to be printed. Returns whether an earlier step
  // already prefetched it, i.e. whether the nodes are arriving in arena order.
  bool Step(const void* node) {
    const auto p = reinterpret_cast<uintptr_t>(node);
    const bool near = p + kAhead > last_ && p < last_ + kAhead;
    last_ = p;
    run_ = near ? run_ + 1 : 0;
    if (run_ < run_needed_) return false;
    // Chunks are kChunkBytes-aligned: the end of this node's chunk is the end of
    // the memory known to hold nodes placed after it.
    const uintptr_t chunk_begin = p & ~(node_arena::kChunkBytes - 1);
    const uintptr_t chunk_end = chunk_begin + node_arena::kChunkBytes;
    const uintptr_t line = p & ~(kLine - 1);
    bool covered = p >= from_ && p < next_;
    if (from_ < chunk_begin || from_ >= chunk_end || next_ < line) {
      from_ = next_ = line;
      covered = false;
    }
    const uintptr_t to = std::min({chunk_end, p + kAhead, next_ + kMaxLinesPerStep * kLine});
    // Into L2 (prefetcht1): kAhead is all of L1 on these machines, and filling it
    // would evict what is being read now.
    for (; next_ < to; next_ += kLine)
      __builtin_prefetch(reinterpret_cast<const void*>(next_), 0, 2);
    return covered;
  }

  // The next Step(node) engages whatever came before: for a place where nodes in
  // arena order are known to start (a function's body), so that a jump there does
  // not leave its first statements to the tree walk while a new run builds up.
  void EngageAt(const void* node) {
    last_ = reinterpret_cast<uintptr_t>(node);
    run_ = run_needed_ > 0 ? run_needed_ - 1 : 0;
  }

  // For tests: the range prefetched so far since the last restart.
  uintptr_t swept_from() const { return from_; }
  uintptr_t swept_to() const { return next_; }

 private:
  int run_needed_;
  int run_ = 0;
  uintptr_t last_ = 0;
  uintptr_t from_ = 0, next_ = 0;
};

}  // namespace cds::ir::print_detail
