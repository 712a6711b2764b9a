// The field-table walks of ir/walk.h: which children each kind of node yields,
// and that definitions, types and a call's op are not operands.

#include "ir/walk.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/builder.h"

namespace cds::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A short label per node: a Var's name, an integer's value, else the kind.
std::string Label(const NodePtr& n) {
  if (n->kind() == NodeKind::kVar || n->kind() == NodeKind::kIterArg ||
      n->kind() == NodeKind::kWindowBuffer) {
    return static_cast<const Var&>(*n).name_hint;
  }
  if (n->kind() == NodeKind::kConstInt)
    return std::to_string(static_cast<const ConstInt&>(*n).value);
  return std::string(NodeKindName(n->kind()));
}

std::vector<std::string> Operands(const Stmt& s) {
  std::vector<std::string> out;
  ForEachStmtOperand(s, [&](const ExprPtr& e) { out.push_back(Label(e)); });
  return out;
}

std::vector<std::string> Operands(const Expr& e) {
  std::vector<std::string> out;
  ForEachOperand(e, [&](const ExprPtr& x) { out.push_back(Label(x)); });
  return out;
}

std::vector<std::string> SubStmts(const Stmt& s) {
  std::vector<std::string> out;
  ForEachSubStmt(s, [&](const StmtPtr& c) { out.push_back(Label(c)); });
  return out;
}

const TypePtr kIndex = ScalarTy(DataType::kIndex);

TEST(WalkTest, AssignYieldsItsValueNotItsLhs) {
  auto x = MakeVar("x", kIndex);
  auto p = MakeVar("p", kIndex);
  auto s = Assign(x, Add(p, Int(1)));
  EXPECT_THAT(Operands(*s), ElementsAre("BinaryExpr"));
  EXPECT_THAT(SubStmts(*s), IsEmpty());
}

TEST(WalkTest, ForYieldsBoundsInitValuesAndBody) {
  auto i = MakeVar("i", kIndex);
  auto n = MakeVar("n", kIndex);
  auto seed = MakeVar("seed", kIndex);
  auto acc = MakeNode<IterArg>("acc", kIndex, seed);
  auto body = Seq({Eval(Add(i, acc))});
  auto loop = MakeNode<ForStmt>(i, Int(2), n, Int(1), body);
  loop->iter_args = NodeList<IterArgPtr>(std::vector<IterArgPtr>{acc});
  EXPECT_THAT(Operands(*loop), ElementsAre("2", "n", "1", "seed"));
  EXPECT_THAT(SubStmts(*loop), ElementsAre("SeqStmts"));
}

TEST(WalkTest, IfYieldsBothBranchesInOrder) {
  auto c = MakeVar("c", ScalarTy(DataType::kBool));
  auto s = If(c, Seq({Eval(Int(1))}), Eval(Int(2)));
  EXPECT_THAT(Operands(*s), ElementsAre("c"));
  EXPECT_THAT(SubStmts(*s), ElementsAre("SeqStmts", "EvalStmt"));
  auto no_else = If(c, Eval(Int(1)));
  EXPECT_THAT(SubStmts(*no_else), ElementsAre("EvalStmt"));
}

TEST(WalkTest, SeqYieldsEveryStatement) {
  auto s = Seq({Eval(Int(1)), Eval(Int(2)), Return({Int(3)})});
  EXPECT_THAT(SubStmts(*s), ElementsAre("EvalStmt", "EvalStmt", "ReturnStmt"));
  EXPECT_THAT(Operands(*s), IsEmpty());
}

TEST(WalkTest, CallYieldsArgsAndAttrsButNotItsOp) {
  auto d = MakeVar("d", kIndex);
  auto r = MakeVar("r", kIndex);
  auto call = MakeFunctionCall("chip", {d, Int(7)}, r, kIndex);
  EXPECT_THAT(Operands(*call), ElementsAre("d", "7", "r"));
}

TEST(WalkTest, ScopeYieldsItsSlotsAndTheirReads) {
  auto base = MakeVar("buf", PtrType::Get());
  auto wb = MakeNode<WindowBuffer>(base, Int(64), false, false);
  auto scope = MakeNode<CommDomainScopeStmt>(
      "comm_d0", DeviceSet::All(), NodeList<WindowBufferPtr>(std::vector<WindowBufferPtr>{wb}),
      Kwargs(), Eval(Int(1)));
  EXPECT_THAT(Operands(*scope), ElementsAre("buf"));
  EXPECT_THAT(SubStmts(*scope), ElementsAre("EvalStmt"));
  EXPECT_THAT(Operands(*wb), ElementsAre("buf", "64"));
}

TEST(WalkTest, LeavesHaveNoOperands) {
  EXPECT_THAT(Operands(*Int(4)), IsEmpty());
  EXPECT_THAT(Operands(*MakeVar("v", kIndex)), IsEmpty());
}

}  // namespace
}  // namespace cds::ir
