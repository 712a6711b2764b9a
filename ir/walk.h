#pragma once

// Direct-children enumeration derived from the field tables, for walks that look
// at statements and operands but not at types: the passes, the verifier's
// analyses, the DOT emitter. A node's children are whatever its Fields() table
// holds, classified by the field's static type, so a new field reaches every one
// of these walks without a per-kind case anywhere.
//
// Classification of a field value (after unwrapping lists, optionals, kwarg and
// attr pairs, and the expression alternative of an AttrValue):
//   - a statement: a sub-statement (ForEachSubStmt);
//   - an expression in a usual field: an operand (ForEachStmtOperand,
//     ForEachOperand). This includes a scope's WindowBuffer slots;
//   - an expression in a definition field (an assignment's LHS, a loop variable,
//     an iter arg, an `as` target): not an operand itself, but what the
//     definition reads is (an IterArg's init value);
//   - a type, an Op, a string or a scalar: never entered. A Call's op slot holds
//     an Op or a GlobalVar through a plain NodePtr and is never an operand.

#include <type_traits>
#include <variant>

#include "ir/dispatch.h"
#include "ir/field_values.h"

namespace cds::ir {

namespace walk_detail {

enum class Want { kStmts, kOperands, kDefinedVars };

template <Want W, typename F>
struct Children {
  F& f;

  template <typename T>
  void Value(const T& v, FieldRole role) {
    detail::ForEachNodeRef(v, [&](const auto& ref) {
      using N = typename std::decay_t<decltype(ref)>::element_type;
      if (!ref) return;
      if constexpr (W == Want::kDefinedVars) {
        if constexpr (std::is_base_of_v<Var, N>) {
          if (role == FieldRole::kDef) f(*ref);
        }
      } else if constexpr (std::is_base_of_v<Stmt, N>) {
        if constexpr (W == Want::kStmts) Pass<StmtPtr>(ref);
      } else if constexpr (std::is_base_of_v<Expr, N>) {
        if constexpr (W == Want::kOperands) {
          if (role == FieldRole::kDef) {
            DefinitionReads(*ref);
          } else {
            Pass<ExprPtr>(ref);
          }
        }
      }
    });
  }

  // A field already of the callback's pointer type goes through as is: a
  // converted copy would write the child's reference count on every visit.
  template <typename Ptr, typename T>
  void Pass(const T& v) {
    if constexpr (std::is_same_v<T, Ptr>) {
      f(v);
    } else {
      f(Ptr(v));
    }
  }

  // The expressions a definition node reads: its own usual expression fields.
  void DefinitionReads(const Expr& def) {
    DispatchNode(def, [&](const auto& node) {
      ForEachField(node, [&](std::string_view, const auto& value, FieldRole role) {
        if (role == FieldRole::kUsual) Value(value, role);
      });
    });
  }
};

template <Want W, typename F>
void ForEachChild(const Node& n, F& f) {
  Children<W, F> children{f};
  DispatchNode(n, [&](const auto& node) {
    ForEachField(node, [&](std::string_view, const auto& value, FieldRole role) {
      if (role != FieldRole::kIgnored) children.Value(value, role);
    });
  });
}

}  // namespace walk_detail

// f(const StmtPtr&) for each statement held directly by `s`: a SeqStmts' list, a
// loop's or scope's body, an if's branches, in field order.
template <typename F>
void ForEachSubStmt(const Stmt& s, F&& f) {
  walk_detail::ForEachChild<walk_detail::Want::kStmts>(s, f);
}

// f(const ExprPtr&) for each expression `s` holds directly (not through its
// sub-statements): the value an assignment computes, a loop's bounds and the
// init values of its loop-carried values, a condition, a scope's arguments and
// slots, the values of a return.
template <typename F>
void ForEachStmtOperand(const Stmt& s, F&& f) {
  walk_detail::ForEachChild<walk_detail::Want::kOperands>(s, f);
}

// f(const ExprPtr&) for each operand of `e`: a call's arguments, kwarg and attr
// expressions, a tuple's elements, a binary expression's sides, a WindowBuffer's
// base and size. Never its type, never a Call's op.
template <typename F>
void ForEachOperand(const Expr& e, F&& f) {
  walk_detail::ForEachChild<walk_detail::Want::kOperands>(e, f);
}

// f(const Var&) for each Var `s` defines: the fields its table marks as
// definitions (an assignment's targets, a loop variable, iter args and return
// vars, an `as` target), in field order.
template <typename F>
void ForEachDefinedVar(const Stmt& s, F&& f) {
  walk_detail::ForEachChild<walk_detail::Want::kDefinedVars>(s, f);
}

}  // namespace cds::ir
