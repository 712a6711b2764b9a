#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace cds::ir {

class Stmt : public Node {
 protected:
  using Node::Node;
};
using StmtPtr = NodeRef<const Stmt>;

class AssignStmt final : public Stmt {
 public:
  AssignStmt(VarPtr v, ExprPtr e)
      : Stmt(NodeKind::kAssignStmt), var(std::move(v)), value(std::move(e)) {}
  VarPtr var;
  ExprPtr value;
  static constexpr auto Fields() {
    return std::make_tuple(DefField("var", &AssignStmt::var),
                           UsualField("value", &AssignStmt::value));
  }
};

// `a, b = f(...)`
class UnpackAssignStmt final : public Stmt {
 public:
  UnpackAssignStmt(NodeList<VarPtr> v, ExprPtr e)
      : Stmt(NodeKind::kUnpackAssignStmt), vars(std::move(v)), value(std::move(e)) {}
  NodeList<VarPtr> vars;
  ExprPtr value;
  static constexpr auto Fields() {
    return std::make_tuple(DefField("vars", &UnpackAssignStmt::vars),
                           UsualField("value", &UnpackAssignStmt::value));
  }
};

// `out[0:8, r] = x` (target is a Subscript)
class SubscriptAssignStmt final : public Stmt {
 public:
  SubscriptAssignStmt(ExprPtr t, ExprPtr e)
      : Stmt(NodeKind::kSubscriptAssignStmt), target(std::move(t)), value(std::move(e)) {}
  ExprPtr target;
  ExprPtr value;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("target", &SubscriptAssignStmt::target),
                           UsualField("value", &SubscriptAssignStmt::value));
  }
};

class EvalStmt final : public Stmt {
 public:
  explicit EvalStmt(ExprPtr e) : Stmt(NodeKind::kEvalStmt), expr(std::move(e)) {}
  ExprPtr expr;
  static constexpr auto Fields() { return std::make_tuple(UsualField("expr", &EvalStmt::expr)); }
};

class ReturnStmt final : public Stmt {
 public:
  explicit ReturnStmt(NodeList<ExprPtr> v) : Stmt(NodeKind::kReturnStmt), values(std::move(v)) {}
  NodeList<ExprPtr> values;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("values", &ReturnStmt::values));
  }
};

// `pl.yield_(a, b)` at the end of a loop body with init_values.
class YieldStmt final : public Stmt {
 public:
  explicit YieldStmt(NodeList<ExprPtr> v) : Stmt(NodeKind::kYieldStmt), values(std::move(v)) {}
  NodeList<ExprPtr> values;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("values", &YieldStmt::values));
  }
};

class SeqStmts final : public Stmt {
 public:
  explicit SeqStmts(NodeList<StmtPtr> s) : Stmt(NodeKind::kSeqStmts), stmts(std::move(s)) {}
  NodeList<StmtPtr> stmts;
  static constexpr auto Fields() { return std::make_tuple(UsualField("stmts", &SeqStmts::stmts)); }
};
using SeqStmtsPtr = NodeRef<const SeqStmts>;

// kParallel is PyPTO's pl.parallel(...): a range loop whose iterations may run
// concurrently; for the passes it is a range loop like the others.
enum class ForKind : uint8_t { kRange, kUnroll, kParallel };
std::string_view ForKindName(ForKind k);  // "range", "unroll", "parallel"
std::optional<ForKind> ForKindFromName(std::string_view s);

// `for loop_var in pl.range(start, stop, step)`; with init_values the iter_args
// carry values around the loop and return_vars receive them after it.
class ForStmt final : public Stmt {
 public:
  ForStmt(VarPtr lv, ExprPtr a, ExprPtr b, ExprPtr c, StmtPtr bd, ForKind k = ForKind::kRange)
      : Stmt(NodeKind::kForStmt),
        loop_var(std::move(lv)),
        start(std::move(a)),
        stop(std::move(b)),
        step(std::move(c)),
        body(std::move(bd)),
        kind(k) {}
  VarPtr loop_var;
  ExprPtr start, stop, step;
  NodeList<IterArgPtr> iter_args;
  NodeList<VarPtr> return_vars;
  StmtPtr body;
  ForKind kind;
  static constexpr auto Fields() {
    return std::make_tuple(
        DefField("loop_var", &ForStmt::loop_var), UsualField("start", &ForStmt::start),
        UsualField("stop", &ForStmt::stop), UsualField("step", &ForStmt::step),
        UsualField("kind", &ForStmt::kind), DefField("iter_args", &ForStmt::iter_args),
        UsualField("body", &ForStmt::body), DefField("return_vars", &ForStmt::return_vars));
  }
};

class WhileStmt final : public Stmt {
 public:
  WhileStmt(ExprPtr c, StmtPtr b)
      : Stmt(NodeKind::kWhileStmt), cond(std::move(c)), body(std::move(b)) {}
  ExprPtr cond;
  StmtPtr body;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("cond", &WhileStmt::cond),
                           UsualField("body", &WhileStmt::body));
  }
};

class IfStmt final : public Stmt {
 public:
  IfStmt(ExprPtr c, StmtPtr t, StmtPtr e)
      : Stmt(NodeKind::kIfStmt),
        cond(std::move(c)),
        then_body(std::move(t)),
        else_body(std::move(e)) {}
  ExprPtr cond;
  StmtPtr then_body;
  StmtPtr else_body;  // optional
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("cond", &IfStmt::cond),
                           UsualField("then_body", &IfStmt::then_body),
                           UsualField("else_body", &IfStmt::else_body));
  }
};

// The devices of a comm domain: all devices, or an explicit sorted subset (the
// empty subset is a subset, never "all").
struct DeviceSet {
  bool all = false;
  std::vector<int64_t> ids;  // sorted, unique; empty when all

  static DeviceSet All() { return {true, {}}; }
  bool operator==(const DeviceSet& o) const { return all == o.all && ids == o.ids; }
  bool operator!=(const DeviceSet& o) const { return !(*this == o); }
  bool Empty() const { return !all && ids.empty(); }
  std::string ToString() const;  // "all" or "[0, 1]"
};

class CommDomainScopeStmt final : public Stmt {
 public:
  CommDomainScopeStmt(std::string n, DeviceSet d, NodeList<WindowBufferPtr> s, Kwargs a, StmtPtr b)
      : Stmt(NodeKind::kCommDomainScopeStmt),
        name_hint(std::move(n)),
        devices(std::move(d)),
        slots(std::move(s)),
        attrs(std::move(a)),
        body(std::move(b)) {}
  std::string name_hint;
  DeviceSet devices;
  NodeList<WindowBufferPtr> slots;
  Kwargs attrs;
  StmtPtr body;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("name_hint", &CommDomainScopeStmt::name_hint),
                           UsualField("devices", &CommDomainScopeStmt::devices),
                           UsualField("slots", &CommDomainScopeStmt::slots),
                           UsualField("attrs", &CommDomainScopeStmt::attrs),
                           UsualField("body", &CommDomainScopeStmt::body));
  }
};
using CommDomainScopeStmtPtr = NodeRef<const CommDomainScopeStmt>;

// Any other `with` scope: `with pl.manual_scope():`, `with pl.at(level=...) as t:`.
class ScopeStmt final : public Stmt {
 public:
  ScopeStmt(std::string k, NodeList<ExprPtr> a, Kwargs kw, VarPtr v, StmtPtr b)
      : Stmt(NodeKind::kScopeStmt),
        kind_name(std::move(k)),
        args(std::move(a)),
        kwargs(std::move(kw)),
        as_var(std::move(v)),
        body(std::move(b)) {}
  std::string kind_name;  // the callee as written: "pl.at"
  NodeList<ExprPtr> args;
  Kwargs kwargs;
  VarPtr as_var;  // optional
  StmtPtr body;
  static constexpr auto Fields() {
    return std::make_tuple(
        UsualField("kind_name", &ScopeStmt::kind_name), UsualField("args", &ScopeStmt::args),
        UsualField("kwargs", &ScopeStmt::kwargs), DefField("as_var", &ScopeStmt::as_var),
        UsualField("body", &ScopeStmt::body));
  }
};

}  // namespace cds::ir
