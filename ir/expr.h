#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/type.h"

namespace cds::ir {

class Expr : public Node {
 public:
  TypePtr type;  // never null once built (UnknownType when nothing is known)

 protected:
  Expr(NodeKind kind, TypePtr t) : Node(kind), type(std::move(t)) {}
};

// Whether `e` is present and typed with a type of kind `type_kind`.
inline bool HasTypeKind(const ExprPtr& e, NodeKind type_kind) {
  return e && e->type && e->type->kind() == type_kind;
}

// A variable. Identity is the object: two Vars with one name are different
// variables. name_hint is for printing only.
class Var : public Expr {
 public:
  Var(std::string name, TypePtr t)
      : Expr(NodeKind::kVar, std::move(t)), name_hint(std::move(name)) {}
  std::string name_hint;
  static constexpr auto Fields() {
    return std::make_tuple(IgnoredField("name_hint", &Var::name_hint),
                           UsualField("type", &Var::type));
  }

 protected:
  Var(NodeKind kind, std::string name, TypePtr t)
      : Expr(kind, std::move(t)), name_hint(std::move(name)) {}
};
using VarPtr = NodeRef<const Var>;

// A loop-carried value of a ForStmt with init_values.
class IterArg final : public Var {
 public:
  IterArg(std::string name, TypePtr t, ExprPtr init)
      : Var(NodeKind::kIterArg, std::move(name), std::move(t)), init_value(std::move(init)) {}
  ExprPtr init_value;
  static constexpr auto Fields() {
    return std::make_tuple(IgnoredField("name_hint", &IterArg::name_hint),
                           UsualField("type", &IterArg::type),
                           UsualField("init_value", &IterArg::init_value));
  }
};
using IterArgPtr = NodeRef<const IterArg>;

// The back-reference object the pass builds, one per alloc. A Var subclass whose
// name_hint is its base's; compared as a definition (mapped on first sight), so
// sharing between views is part of structural equality.
class WindowBuffer final : public Var {
 public:
  WindowBuffer(VarPtr b, ExprPtr sz, bool load, bool store);
  VarPtr base;   // the alloc's LHS Var
  ExprPtr size;  // the alloc's size expression, in bytes
  bool load_from_host;
  bool store_to_host;
  static constexpr auto Fields() {
    return std::make_tuple(IgnoredField("name_hint", &WindowBuffer::name_hint),
                           UsualField("base", &WindowBuffer::base),
                           UsualField("size", &WindowBuffer::size),
                           UsualField("load_from_host", &WindowBuffer::load_from_host),
                           UsualField("store_to_host", &WindowBuffer::store_to_host));
  }
};

// A function reference (the op of a cross-function call). Compared by name.
class GlobalVar final : public Expr {
 public:
  explicit GlobalVar(std::string n);
  std::string name;
  static constexpr auto Fields() { return std::make_tuple(UsualField("name", &GlobalVar::name)); }
};
using GlobalVarPtr = NodeRef<const GlobalVar>;

class ConstInt final : public Expr {
 public:
  ConstInt(int64_t v, DataType dt);
  int64_t value;
  DataType dtype;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("value", &ConstInt::value),
                           UsualField("dtype", &ConstInt::dtype));
  }
};

class ConstFloat final : public Expr {
 public:
  ConstFloat(double v, DataType dt);
  double value;
  DataType dtype;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("value", &ConstFloat::value),
                           UsualField("dtype", &ConstFloat::dtype));
  }
};

class ConstBool final : public Expr {
 public:
  explicit ConstBool(bool v);
  bool value;
  static constexpr auto Fields() { return std::make_tuple(UsualField("value", &ConstBool::value)); }
};

// Only as a kwarg/attr value or an opaque call argument; never a scalar operand.
class ConstString final : public Expr {
 public:
  explicit ConstString(std::string v);
  std::string value;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("value", &ConstString::value));
  }
};

// Comparisons and logic (the operators that give BOOL) come last, from kEq on.
enum class BinaryOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kFloorDiv,
  kFloorMod,
  kDiv,
  kMin,
  kMax,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr
};
enum class UnaryOp : uint8_t { kNot, kNeg };
std::string_view BinaryOpName(BinaryOp op);  // "Add", ...
std::string_view UnaryOpName(UnaryOp op);

class BinaryExpr final : public Expr {
 public:
  BinaryExpr(BinaryOp o, ExprPtr l, ExprPtr r, TypePtr t)
      : Expr(NodeKind::kBinaryExpr, std::move(t)), op(o), lhs(std::move(l)), rhs(std::move(r)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("op", &BinaryExpr::op), UsualField("lhs", &BinaryExpr::lhs),
                           UsualField("rhs", &BinaryExpr::rhs),
                           UsualField("type", &BinaryExpr::type));
  }
};

class UnaryExpr final : public Expr {
 public:
  UnaryExpr(UnaryOp o, ExprPtr x, TypePtr t)
      : Expr(NodeKind::kUnaryExpr, std::move(t)), op(o), operand(std::move(x)) {}
  UnaryOp op;
  ExprPtr operand;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("op", &UnaryExpr::op),
                           UsualField("operand", &UnaryExpr::operand),
                           UsualField("type", &UnaryExpr::type));
  }
};

// A list or tuple literal: shapes `[256, 4]`, `deps=[t]`, a tuple value `(a, b)`,
// `(a,)`, `()`. Both read as one IR in PyPTO; `parenthesized` records which one the
// text wrote, so that it prints back as written.
class MakeTuple final : public Expr {
 public:
  explicit MakeTuple(NodeList<ExprPtr> e, bool parenthesized = false);
  NodeList<ExprPtr> elements;
  bool parenthesized;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("elements", &MakeTuple::elements),
                           UsualField("parenthesized", &MakeTuple::parenthesized),
                           UsualField("type", &MakeTuple::type));
  }
};

class TupleGetItem final : public Expr {
 public:
  TupleGetItem(ExprPtr t, int64_t i, TypePtr ty)
      : Expr(NodeKind::kTupleGetItem, std::move(ty)), tuple(std::move(t)), index(i) {}
  ExprPtr tuple;
  int64_t index;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("tuple", &TupleGetItem::tuple),
                           UsualField("index", &TupleGetItem::index),
                           UsualField("type", &TupleGetItem::type));
  }
};

// `a:b:c` inside a subscript; each part optional.
class Slice final : public Expr {
 public:
  Slice(ExprPtr a, ExprPtr b, ExprPtr c);
  ExprPtr start, stop, step;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("start", &Slice::start), UsualField("stop", &Slice::stop),
                           UsualField("step", &Slice::step));
  }
};

// `x[i]`, `out[0:8, 0:64]`.
class Subscript final : public Expr {
 public:
  Subscript(ExprPtr v, NodeList<ExprPtr> idx, TypePtr t)
      : Expr(NodeKind::kSubscript, std::move(t)), value(std::move(v)), indices(std::move(idx)) {}
  ExprPtr value;
  NodeList<ExprPtr> indices;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("value", &Subscript::value),
                           UsualField("indices", &Subscript::indices),
                           UsualField("type", &Subscript::type));
  }
};

// Keyword-argument values. Literals stay literals (`-1` is an int64 attribute,
// not an IR constant); dotted enum names keep their spelling.
struct EnumAttr {
  std::string qualified;  // "pld.ReduceOp.Sum"
  bool operator==(const EnumAttr& o) const { return qualified == o.qualified; }
};
using AttrValue = std::variant<bool, int64_t, double, std::string, DataType, EnumAttr, ExprPtr>;
using Kwarg = std::pair<std::string, AttrValue>;
using ExprAttr = std::pair<std::string, ExprPtr>;
// Builders collect kwargs in a KwargList; a node holds them in a Kwargs.
using KwargList = std::vector<Kwarg>;
using ExprAttrList = std::vector<ExprAttr>;
using Kwargs = NodeList<Kwarg>;
using ExprAttrs = NodeList<ExprAttr>;

// Looks up a kwarg by name; nullptr if absent.
const AttrValue* FindKwarg(std::span<const Kwarg> kwargs, std::string_view name);
ExprPtr FindAttr(std::span<const ExprAttr> attrs, std::string_view name);

struct OpInfo;
// A registered (or opaque) operator. Compared by name.
class Op final : public Node {
 public:
  Op(std::string n, const OpInfo* i) : Node(NodeKind::kOp), name(std::move(n)), info(i) {}
  std::string name;
  const OpInfo* info;  // null for opaque ops the registry does not model
  static constexpr auto Fields() { return std::make_tuple(UsualField("name", &Op::name)); }
};
using OpPtr = NodeRef<const Op>;

// A call of an Op or (op is a GlobalVar) of another function of the program.
// For cross-function calls `device=` lives in attrs["device"].
class Call final : public Expr {
 public:
  Call(NodePtr o, NodeList<ExprPtr> a, Kwargs kw, ExprAttrs at, TypePtr t)
      : Expr(NodeKind::kCall, std::move(t)),
        op(std::move(o)),
        args(std::move(a)),
        kwargs(std::move(kw)),
        attrs(std::move(at)) {}
  NodePtr op;  // Op or GlobalVar
  NodeList<ExprPtr> args;
  Kwargs kwargs;
  ExprAttrs attrs;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("op", &Call::op), UsualField("args", &Call::args),
                           UsualField("kwargs", &Call::kwargs), UsualField("attrs", &Call::attrs),
                           UsualField("type", &Call::type));
  }
  // The op name for op calls ("pld.tensor.window"), empty for cross-function calls.
  const std::string& OpName() const;
  // The callee for cross-function calls, null for op calls.
  GlobalVarPtr Callee() const;
};
using CallPtr = NodeRef<const Call>;

using ConstIntPtr = NodeRef<const ConstInt>;

}  // namespace cds::ir
