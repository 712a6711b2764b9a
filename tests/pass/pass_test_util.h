#pragma once

// Small builders for host-orchestration programs in pass tests, and accessors for
// the pass output. Every built node gets a span on the line the test names, so
// error tests can check where a diagnostic points.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/walk.h"

namespace cds::pass::testing {

using namespace cds::ir;  // NOLINT: test-only shorthand

inline Span At(int line) {
  static const ir::FileId file = ir::InternFileName("test.pyir");
  return Span{file, line, 5};
}

inline TypePtr F32View(int64_t n = 256) { return DistTensorTy(Shape({n}), DataType::kFP32); }

// A statement list under construction.
class Body {
 public:
  VarPtr Let(std::string name, ExprPtr value, int line) {
    VarPtr v = MakeVar(std::move(name), value->type, At(line));
    stmts.push_back(Assign(v, std::move(value), At(line)));
    return v;
  }
  // `name = pld.tensor.alloc_window_buffer(bytes)` with name= the LHS name (or `alloc_name`).
  VarPtr Alloc(const std::string& name, int64_t bytes, int line, std::string alloc_name = "") {
    if (alloc_name.empty()) alloc_name = name;
    return Let(name, Op(ops::kAllocWindowBuffer, {Int(bytes)}, {{"name", alloc_name}}, line), line);
  }
  VarPtr Window(const std::string& name, const VarPtr& buf, std::vector<int64_t> shape, int line,
                DataType dt = DataType::kFP32) {
    std::vector<ExprPtr> dims;
    for (int64_t d : shape) dims.push_back(Int(d));
    return Let(name, Op(ops::kWindow, {buf, Tuple(dims)}, {{"dtype", dt}}, line), line);
  }
  CallPtr Op(std::string_view op, std::vector<ExprPtr> args, KwargList kwargs, int line) {
    return MakeOpCall(op, std::move(args), std::move(kwargs), At(line));
  }
  void Do(ExprPtr e, int line) { stmts.push_back(Eval(std::move(e), At(line))); }
  void Dispatch(const std::string& callee, std::vector<ExprPtr> args, ExprPtr device, int line) {
    Do(MakeFunctionCall(callee, std::move(args), std::move(device), UnknownType::Get(), At(line)),
       line);
  }
  // `for name in pl.range(start, stop, step)`
  VarPtr Loop(const std::string& name, ExprPtr start, ExprPtr stop, ExprPtr step, int line,
              const std::function<void(Body&, const VarPtr&)>& fill,
              ForKind kind = ForKind::kRange) {
    VarPtr r = MakeVar(name, ScalarTy(DataType::kIndex), At(line));
    Body inner;
    fill(inner, r);
    auto f = ir::MakeNode<ForStmt>(r, std::move(start), std::move(stop), std::move(step),
                                   inner.Build(), kind);
    f->set_span(At(line));
    stmts.push_back(f);
    return r;
  }
  void Range(const std::string& name, int64_t stop, int line,
             const std::function<void(Body&, const VarPtr&)>& fill) {
    Loop(name, Int(0), Int(stop), Int(1), line, fill);
  }
  void WorldLoop(const std::string& name, int line,
                 const std::function<void(Body&, const VarPtr&)>& fill) {
    Loop(name, Int(0), WorldSize(line), Int(1), line, fill);
  }
  void WhileTrue(int line, const std::function<void(Body&)>& fill) {
    Body inner;
    fill(inner);
    stmts.push_back(While(Bool(true), inner.Build(), At(line)));
  }
  CallPtr WorldSize(int line) { return Op(ops::kWorldSize, {}, {}, line); }
  void Ret(std::vector<ExprPtr> values, int line) {
    stmts.push_back(Return(std::move(values), At(line)));
  }
  SeqStmtsPtr Build() const { return Seq(stmts); }

  std::vector<StmtPtr> stmts;
};

inline FunctionPtr ChipOrch(const std::string& name, std::vector<TypePtr> param_types,
                            FunctionType type = FunctionType::kOrchestration) {
  std::vector<VarPtr> params;
  std::vector<ParamDirection> dirs;
  for (size_t i = 0; i < param_types.size(); ++i) {
    params.push_back(MakeVar("p" + std::to_string(i), param_types[i]));
    dirs.push_back(ParamDirection::kIn);
  }
  std::vector<ExprPtr> ret;
  if (!params.empty()) ret.push_back(params[0]);
  std::vector<TypePtr> ret_types;
  if (!params.empty()) ret_types.push_back(param_types[0]);
  return ir::MakeNode<Function>(name, params, dirs, ret_types, Seq({Return(ret)}), type);
}

inline FunctionPtr Host(const std::string& name, const Body& body,
                        std::vector<VarPtr> params = {}) {
  std::vector<ParamDirection> dirs(params.size(), ParamDirection::kIn);
  return ir::MakeNode<Function>(name, std::move(params), dirs, std::vector<TypePtr>{}, body.Build(),
                                FunctionType::kOpaque, Level::kHost, Role::kOrchestrator);
}

inline ProgramPtr Prog(std::vector<FunctionPtr> fns) {
  return ir::MakeNode<Program>("P", std::vector<VarPtr>{}, std::move(fns));
}

// The scopes wrapping a host body, outermost first. Checks the nesting shape of
// docs/ir-conventions.md on the way: Seq[scope], each scope body Seq[next scope].
inline std::vector<CommDomainScopeStmtPtr> Scopes(const FunctionPtr& f) {
  std::vector<CommDomainScopeStmtPtr> out;
  StmtPtr cur = f->body;
  while (cur && cur->kind() == NodeKind::kSeqStmts) {
    const auto& seq = static_cast<const SeqStmts&>(*cur);
    if (seq.stmts.size() != 1 || seq.stmts[0]->kind() != NodeKind::kCommDomainScopeStmt) break;
    auto scope = As<CommDomainScopeStmt>(seq.stmts[0]);
    out.push_back(scope);
    cur = scope->body;
  }
  return out;
}

// The innermost statements (the original body) of a wrapped host function.
inline std::vector<StmtPtr> InnerStmts(const FunctionPtr& f) {
  auto scopes = Scopes(f);
  StmtPtr body = scopes.empty() ? f->body : scopes.back()->body;
  return Flatten(body);
}

inline std::vector<std::string> SlotNames(const CommDomainScopeStmtPtr& s) {
  std::vector<std::string> names;
  for (const auto& wb : s->slots) names.push_back(wb->base ? wb->base->name_hint : "<null>");
  return names;
}

// Every statement below `s`, pre-order.
inline void Walk(const StmtPtr& s, std::vector<StmtPtr>& out) {
  if (!s) return;
  out.push_back(s);
  ForEachSubStmt(*s, [&](const StmtPtr& sub) { Walk(sub, out); });
}

inline std::vector<StmtPtr> AllStmts(const FunctionPtr& f) {
  std::vector<StmtPtr> out;
  Walk(f->body, out);
  return out;
}

// The (first) assignment defining a Var named `name`; null if none.
inline ir::NodeRef<const AssignStmt> DefOf(const FunctionPtr& f, const std::string& name) {
  for (const auto& s : AllStmts(f)) {
    if (s->kind() == NodeKind::kAssignStmt &&
        static_cast<const AssignStmt&>(*s).var->name_hint == name) {
      return As<AssignStmt>(s);
    }
  }
  return nullptr;
}

inline const DistributedTensorType* DistOf(const VarPtr& v) {
  if (!v || v->type->kind() != NodeKind::kDistributedTensorType) return nullptr;
  return static_cast<const DistributedTensorType*>(v->type.get());
}

struct CaughtError {
  bool thrown = false;
  std::string message;
  int line = 0;
};

template <typename F>
CaughtError ErrorOf(F&& f) {
  CaughtError e;
  try {
    f();
  } catch (const ValueError& err) {
    e.thrown = true;
    e.message = err.message();
    e.line = err.span().line;
  }
  return e;
}

}  // namespace cds::pass::testing
