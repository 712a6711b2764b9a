#pragma once

#include <span>

// Direct-children enumeration for the passes' hot walks. The generic IRVisitor
// also walks types and every field through the field tables; on 10^6-statement
// host programs these hand-written switches are several times cheaper. Types are
// never entered: no view, dispatch or collective can hide in one.

#include "ir/dispatch.h"

namespace cds::pass::detail {

// f(const ir::StmtPtr&) for each statement body directly below `s`.
template <typename F>
void ForEachSubBody(const ir::Stmt& s, F&& f) {
  using ir::NodeKind;
  switch (s.kind()) {
    case NodeKind::kSeqStmts:
      for (const auto& c : static_cast<const ir::SeqStmts&>(s).stmts) f(c);
      break;
    case NodeKind::kForStmt:
      f(static_cast<const ir::ForStmt&>(s).body);
      break;
    case NodeKind::kWhileStmt:
      f(static_cast<const ir::WhileStmt&>(s).body);
      break;
    case NodeKind::kIfStmt: {
      const auto& i = static_cast<const ir::IfStmt&>(s);
      f(i.then_body);
      if (i.else_body) f(i.else_body);
      break;
    }
    case NodeKind::kScopeStmt:
      f(static_cast<const ir::ScopeStmt&>(s).body);
      break;
    case NodeKind::kCommDomainScopeStmt:
      f(static_cast<const ir::CommDomainScopeStmt&>(s).body);
      break;
    default:
      break;
  }
}

template <typename F>
void ForEachKwargExpr(std::span<const ir::Kwarg> kwargs, F&& f) {
  for (const auto& kv : kwargs) {
    if (const auto* e = std::get_if<ir::ExprPtr>(&kv.second); e && *e) f(*e);
  }
}

// f(const ir::ExprPtr&) for each expression held directly by `s` (not by its bodies).
template <typename F>
void ForEachStmtExpr(const ir::Stmt& s, F&& f) {
  using ir::NodeKind;
  switch (s.kind()) {
    case NodeKind::kAssignStmt:
      f(static_cast<const ir::AssignStmt&>(s).value);
      break;
    case NodeKind::kUnpackAssignStmt:
      f(static_cast<const ir::UnpackAssignStmt&>(s).value);
      break;
    case NodeKind::kSubscriptAssignStmt: {
      const auto& a = static_cast<const ir::SubscriptAssignStmt&>(s);
      f(a.target);
      f(a.value);
      break;
    }
    case NodeKind::kEvalStmt:
      f(static_cast<const ir::EvalStmt&>(s).expr);
      break;
    case NodeKind::kReturnStmt:
      for (const auto& v : static_cast<const ir::ReturnStmt&>(s).values) f(v);
      break;
    case NodeKind::kYieldStmt:
      for (const auto& v : static_cast<const ir::YieldStmt&>(s).values) f(v);
      break;
    case NodeKind::kForStmt: {
      const auto& fs = static_cast<const ir::ForStmt&>(s);
      if (fs.start) f(fs.start);
      f(fs.stop);
      if (fs.step) f(fs.step);
      for (const auto& ia : fs.iter_args) {
        if (ia->init_value) f(ia->init_value);
      }
      break;
    }
    case NodeKind::kWhileStmt:
      f(static_cast<const ir::WhileStmt&>(s).cond);
      break;
    case NodeKind::kIfStmt:
      f(static_cast<const ir::IfStmt&>(s).cond);
      break;
    case NodeKind::kScopeStmt: {
      const auto& sc = static_cast<const ir::ScopeStmt&>(s);
      for (const auto& a : sc.args) f(a);
      ForEachKwargExpr(sc.kwargs, f);
      break;
    }
    default:
      break;
  }
}

// f(const ir::ExprPtr&) for each operand of `e` (call arguments, kwarg and attr
// expressions, tuple elements, ...), never its type.
template <typename F>
void ForEachSubExpr(const ir::Expr& e, F&& f) {
  using ir::NodeKind;
  switch (e.kind()) {
    case NodeKind::kCall: {
      const auto& c = static_cast<const ir::Call&>(e);
      for (const auto& a : c.args) {
        if (a) f(a);
      }
      ForEachKwargExpr(c.kwargs, f);
      for (const auto& kv : c.attrs) {
        if (kv.second) f(kv.second);
      }
      break;
    }
    case NodeKind::kMakeTuple:
      for (const auto& x : static_cast<const ir::MakeTuple&>(e).elements) {
        if (x) f(x);
      }
      break;
    case NodeKind::kBinaryExpr: {
      const auto& b = static_cast<const ir::BinaryExpr&>(e);
      f(b.lhs);
      f(b.rhs);
      break;
    }
    case NodeKind::kUnaryExpr:
      f(static_cast<const ir::UnaryExpr&>(e).operand);
      break;
    case NodeKind::kTupleGetItem:
      f(static_cast<const ir::TupleGetItem&>(e).tuple);
      break;
    case NodeKind::kSubscript: {
      const auto& s = static_cast<const ir::Subscript&>(e);
      f(s.value);
      for (const auto& i : s.indices) {
        if (i) f(i);
      }
      break;
    }
    case NodeKind::kSlice: {
      const auto& s = static_cast<const ir::Slice&>(e);
      if (s.start) f(s.start);
      if (s.stop) f(s.stop);
      if (s.step) f(s.step);
      break;
    }
    default:
      break;
  }
}

// ---------------------------------------------------------------------------
// Prefetching for the walks over large bodies. Once a program is larger than the
// last-level cache, a walk is a chain of dependent loads (statement, its value,
// the call's argument array, the arguments, a Var's type), each a miss. A loop
// over a body calls PrefetchAhead(stmts, i) before handling stmts[i]: it requests
// the statement 16 ahead, then each following level of the statements 8, 4 and 2
// ahead, whose upper levels earlier iterations have brought in. Only reads
// pointers out of nodes; never changes what a walk does.

inline void Prefetch(const void* p) { __builtin_prefetch(p); }

// The nodes and arrays `e` (in cache) points to.
inline void PrefetchOperands(const ir::Expr& e) {
  using ir::NodeKind;
  switch (e.kind()) {
    case NodeKind::kCall: {
      const auto& c = static_cast<const ir::Call&>(e);
      Prefetch(c.args.data());
      if (!c.attrs.empty()) Prefetch(c.attrs.data());
      break;
    }
    case NodeKind::kBinaryExpr: {
      const auto& b = static_cast<const ir::BinaryExpr&>(e);
      Prefetch(b.lhs.get());
      Prefetch(b.rhs.get());
      break;
    }
    case NodeKind::kMakeTuple:
      Prefetch(static_cast<const ir::MakeTuple&>(e).elements.data());
      break;
    case NodeKind::kVar:
    case NodeKind::kIterArg:
      Prefetch(e.type.get());
      break;
    default:
      break;
  }
}

// The expression a simple statement computes, null for others.
inline const ir::Expr* StmtValue(const ir::Stmt& s) {
  switch (s.kind()) {
    case ir::NodeKind::kAssignStmt:
      return static_cast<const ir::AssignStmt&>(s).value.get();
    case ir::NodeKind::kEvalStmt:
      return static_cast<const ir::EvalStmt&>(s).expr.get();
    default:
      return nullptr;
  }
}

// Level 1: the nodes the statement points to.
inline void PrefetchLevel1(const ir::Stmt& s) {
  using ir::NodeKind;
  switch (s.kind()) {
    case NodeKind::kAssignStmt: {
      const auto& a = static_cast<const ir::AssignStmt&>(s);
      Prefetch(a.var.get());
      Prefetch(a.value.get());
      break;
    }
    case NodeKind::kEvalStmt:
      Prefetch(static_cast<const ir::EvalStmt&>(s).expr.get());
      break;
    case NodeKind::kForStmt: {
      const auto& f = static_cast<const ir::ForStmt&>(s);
      Prefetch(f.loop_var.get());
      Prefetch(f.start.get());
      Prefetch(f.stop.get());
      Prefetch(f.step.get());
      Prefetch(f.body.get());
      break;
    }
    default:
      break;
  }
}

// Level 2: what those nodes point to (the LHS Var's type, the value's operands,
// a loop body's statement array).
inline void PrefetchLevel2(const ir::Stmt& s) {
  using ir::NodeKind;
  if (s.kind() == NodeKind::kAssignStmt) {
    Prefetch(static_cast<const ir::AssignStmt&>(s).var->type.get());
  } else if (s.kind() == NodeKind::kForStmt) {
    const auto& body = *static_cast<const ir::ForStmt&>(s).body;
    if (body.kind() == NodeKind::kSeqStmts) {
      Prefetch(static_cast<const ir::SeqStmts&>(body).stmts.data());
    }
    return;
  }
  if (const ir::Expr* v = StmtValue(s)) PrefetchOperands(*v);
}

// Level 3: a call's arguments; a loop body's first statement.
inline void PrefetchLevel3(const ir::Stmt& s) {
  using ir::NodeKind;
  if (s.kind() == NodeKind::kForStmt) {
    const auto& body = *static_cast<const ir::ForStmt&>(s).body;
    if (body.kind() == NodeKind::kSeqStmts) {
      const auto& stmts = static_cast<const ir::SeqStmts&>(body).stmts;
      if (!stmts.empty()) Prefetch(stmts.front().get());
    }
    return;
  }
  const ir::Expr* v = StmtValue(s);
  if (v == nullptr || v->kind() != NodeKind::kCall) return;
  for (const auto& a : static_cast<const ir::Call&>(*v).args) Prefetch(a.get());
}

inline void PrefetchAhead(std::span<const ir::StmtPtr> stmts, size_t i) {
  const size_t n = stmts.size();
  if (i + 16 < n) Prefetch(stmts[i + 16].get());
  if (i + 8 < n) PrefetchLevel1(*stmts[i + 8]);
  if (i + 4 < n) PrefetchLevel2(*stmts[i + 4]);
  if (i + 2 < n) PrefetchLevel3(*stmts[i + 2]);
}

}  // namespace cds::pass::detail
