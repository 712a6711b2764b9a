// The op registry: arity, kwargs and result types of every modelled op, and the
// ValueError each misuse raises.

#include "ir/op_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/error.h"
#include "ir/structural_equal.h"

namespace cds::ir {
namespace {

using ::testing::HasSubstr;

const Span kAt{InternFileName("ops.pyir"), 4, 2};

// Runs `f`, which must throw a ValueError whose message contains `needle` and
// whose span is kAt; returns the message so callers can check more.
template <typename F>
std::string ExpectValueError(F&& f, const std::string& needle) {
  try {
    f();
  } catch (const ValueError& e) {
    EXPECT_THAT(e.message(), HasSubstr(needle));
    EXPECT_EQ(e.span().line, kAt.line) << e.message();
    EXPECT_EQ(e.span().column, kAt.column) << e.message();
    return e.message();
  }
  ADD_FAILURE() << "expected a ValueError containing: " << needle;
  return {};
}

ExprPtr Window(const std::string& name, std::initializer_list<int64_t> shape, DataType dt) {
  return MakeVar(name, DistTensorTy(Shape(shape), dt));
}

const DistributedTensorType& AsDistType(const TypePtr& t) {
  EXPECT_EQ(t->kind(), NodeKind::kDistributedTensorType);
  return static_cast<const DistributedTensorType&>(*t);
}

class OpRegistryTest : public ::testing::Test {
 protected:
  VarPtr buf = MakeVar("buf", PtrType::Get());
  ExprPtr data = Window("data", {256}, DataType::kFP32);
  ExprPtr data2d = Window("data2d", {4, 64}, DataType::kFP32);
  ExprPtr target = Window("target", {1024}, DataType::kFP32);
  ExprPtr signal = Window("sig", {8, 1}, DataType::kInt32);
  ExprPtr fp_signal = Window("fsig", {8}, DataType::kFP32);
  ExprPtr local = MakeVar("local", TensorTy(Shape({256}), DataType::kFP32));
  ExprPtr opaque = MakeVar("opq", UnknownType::Get());
  KwargList sum = {{"op", EnumAttr{"pld.ReduceOp.Sum"}}};
};

TEST_F(OpRegistryTest, KnowsEveryModelledOp) {
  for (const char* n : {"pld.tensor.alloc_window_buffer", "pld.tensor.window",
                        "pld.system.world_size", "pld.tensor.allreduce", "pld.tensor.broadcast",
                        "pld.tensor.reduce_scatter", "pld.tensor.barrier", "pld.tensor.allgather",
                        "pld.tensor.all_to_all", "pld.tensor.all_to_all_v", "pl.tensor.create",
                        "pl.tensor.add", "pl.tensor.sub", "pl.tensor.mul"}) {
    const OpInfo* info = OpRegistry::Get().Find(n);
    ASSERT_NE(info, nullptr) << n;
    EXPECT_EQ(info->name, n);
  }
}

TEST_F(OpRegistryTest, RegisteredOpNodesAreSharedOpaqueOnesAreNot) {
  OpPtr a = OpRegistry::Get().GetOp(ops::kWindow);
  EXPECT_EQ(a, OpRegistry::Get().GetOp("pld.tensor.window"));
  EXPECT_EQ(a->info, OpRegistry::Get().Find(ops::kWindow));
  OpPtr o = OpRegistry::Get().GetOp("pl.tile.load");
  EXPECT_EQ(o->name, "pl.tile.load");
  EXPECT_EQ(o->info, nullptr);
  EXPECT_EQ(OpRegistry::Get().Find("pl.tile.load"), nullptr);
}

TEST_F(OpRegistryTest, UnknownOpIsAnError) {
  ExpectValueError([&] { MakeOpCall("pld.tensor.nonesuch", {}, {}, kAt); },
                   "unknown op 'pld.tensor.nonesuch'");
}

// --- alloc_window_buffer ----------------------------------------------------

TEST_F(OpRegistryTest, AllocSizeForm) {
  ExprPtr size = Int(1024);
  CallPtr c = MakeOpCall(ops::kAllocWindowBuffer, {size}, {{"name", std::string("buf")}}, kAt);
  EXPECT_EQ(c->type, PtrType::Get());
  EXPECT_EQ(c->OpName(), "pld.tensor.alloc_window_buffer");
  EXPECT_EQ(c->span().line, 4);
  EXPECT_EQ(c->args[0], size);
  auto n = MakeVar("n", ScalarTy(DataType::kIndex));
  EXPECT_EQ(MakeOpCall(ops::kAllocWindowBuffer, {Mul(n, Int(4))})->type, PtrType::Get());
}

// The byte size an alloc asks for is the pass's rule (tests/pass/pass_rules_test.cc);
// the registry only types the call.
TEST_F(OpRegistryTest, AllocShapeFormIsAPointer) {
  CallPtr c = MakeOpCall(ops::kAllocWindowBuffer, {Tuple(Shape({4, 256}))},
                         {{"dtype", DataType::kFP32}, {"name", std::string("b")}}, kAt);
  EXPECT_EQ(c->type, PtrType::Get());
  CallPtr scalar = MakeOpCall(ops::kAllocWindowBuffer, {Tuple({})}, {{"dtype", DataType::kFP16}});
  EXPECT_EQ(scalar->type, PtrType::Get());
}

TEST_F(OpRegistryTest, AllocErrors) {
  ExpectValueError([&] { MakeOpCall(ops::kAllocWindowBuffer, {}, {}, kAt); },
                   "pld.tensor.alloc_window_buffer takes 1 positional argument, got 0");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllocWindowBuffer, {Int(1), Int(2)}, {}, kAt);
      },
      "takes 1 positional argument, got 2");
  ExpectValueError([&] { MakeOpCall(ops::kAllocWindowBuffer, {Float(4.0)}, {}, kAt); },
                   "size must be an integer scalar (bytes)");
  ExpectValueError([&] { MakeOpCall(ops::kAllocWindowBuffer, {data}, {}, kAt); },
                   "size must be an integer scalar (bytes)");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllocWindowBuffer, {Int(64)}, {{"dtype", DataType::kFP32}}, kAt);
      },
      "dtype= is only allowed with a shape list");
  ExpectValueError([&] { MakeOpCall(ops::kAllocWindowBuffer, {Tuple(Shape({4}))}, {}, kAt); },
                   "dtype= must be a data type such as pl.FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllocWindowBuffer, {Tuple(Shape({4}))}, {{"dtype", std::string("FP32")}},
                   kAt);
      },
      "dtype= must be a data type");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllocWindowBuffer, {Tuple({Float(1.5)})}, {{"dtype", DataType::kFP32}},
                   kAt);
      },
      "shape dimensions must be integer scalars");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllocWindowBuffer, {Int(64)}, {{"name", int64_t{3}}}, kAt);
      },
      "name= must be a string");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllocWindowBuffer, {Int(64)}, {{"shape", int64_t{3}}}, kAt);
      },
      "pld.tensor.alloc_window_buffer got an unexpected keyword argument 'shape'");
}

// --- window -----------------------------------------------------------------

TEST_F(OpRegistryTest, WindowDeducesDistributedTensor) {
  CallPtr c =
      MakeOpCall(ops::kWindow, {buf, Tuple(Shape({16, 32}))}, {{"dtype", DataType::kBF16}}, kAt);
  const auto& t = AsDistType(c->type);
  ASSERT_EQ(t.shape.size(), 2u);
  EXPECT_TRUE(StructuralEqual(t.shape[0], Int(16)));
  EXPECT_TRUE(StructuralEqual(t.shape[1], Int(32)));
  EXPECT_EQ(t.dtype, DataType::kBF16);
  EXPECT_EQ(t.window_buffer, nullptr);
  EXPECT_EQ(t.memref, nullptr);
  // The shape's dimension expressions are reused, not copied.
  EXPECT_EQ(t.shape[0], static_cast<const MakeTuple&>(*c->args[1]).elements[0]);
  // A pointer of unknown type (an opaque call's result) is let through.
  EXPECT_NO_THROW(
      MakeOpCall(ops::kWindow, {opaque, Tuple(Shape({4}))}, {{"dtype", DataType::kFP32}}));
}

TEST_F(OpRegistryTest, WindowErrors) {
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kWindow, {buf, Tuple(Shape({4}))}, {}, kAt);
      },
      "pld.tensor.window requires keyword argument 'dtype='");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kWindow, {buf}, {{"dtype", DataType::kFP32}}, kAt);
      },
      "pld.tensor.window takes 2 positional arguments, got 1");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kWindow, {data, Tuple(Shape({4}))}, {{"dtype", DataType::kFP32}}, kAt);
      },
      "first argument must be a window buffer pointer (pl.Ptr)");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kWindow, {buf, Int(4)}, {{"dtype", DataType::kFP32}}, kAt);
      },
      "expected a shape list such as [256]");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kWindow, {buf, Tuple(Shape({4}))},
                   {{"dtype", DataType::kFP32}, {"name", std::string("x")}}, kAt);
      },
      "unexpected keyword argument 'name'");
}

// --- world_size ---------------------------------------------------------------

TEST_F(OpRegistryTest, WorldSizeIsIndexScalar) {
  CallPtr c = MakeOpCall(ops::kWorldSize, {});
  ASSERT_EQ(c->type->kind(), NodeKind::kScalarType);
  EXPECT_EQ(static_cast<const ScalarType&>(*c->type).dtype, DataType::kIndex);
  ExpectValueError([&] { MakeOpCall(ops::kWorldSize, {Int(1)}, {}, kAt); },
                   "pld.system.world_size takes 0 positional arguments, got 1");
}

// --- collectives ------------------------------------------------------------

TEST_F(OpRegistryTest, AllReduceReturnsTypeOfData) {
  CallPtr one = MakeOpCall(ops::kAllReduce, {data}, sum);
  EXPECT_EQ(one->type, data->type);
  CallPtr two = MakeOpCall(ops::kAllReduce, {data, signal},
                           {{"op", EnumAttr{"pld.ReduceOp.Sum"}}, {"core_num", int64_t{2}}});
  EXPECT_EQ(two->type, data->type);
  EXPECT_EQ(MakeOpCall(ops::kAllReduce, {opaque})->type, opaque->type);
}

TEST_F(OpRegistryTest, AllReduceErrors) {
  ExpectValueError([&] { MakeOpCall(ops::kAllReduce, {}, sum, kAt); },
                   "pld.tensor.allreduce takes 1 to 2 positional arguments, got 0");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data, signal, signal}, sum, kAt);
      },
      "takes 1 to 2 positional arguments, got 3");
  ExpectValueError([&] { MakeOpCall(ops::kAllReduce, {local}, sum, kAt); },
                   "pld.tensor.allreduce: data must be a pld.DistributedTensor window view");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data, fp_signal}, sum, kAt);
      },
      "pld.tensor.allreduce: signal must be an INT32 window view, got FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data, local}, sum, kAt);
      },
      "signal must be a pld.DistributedTensor window view");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data}, {{"op", std::string("sum")}}, kAt);
      },
      "op= must be an enum value such as pld.ReduceOp.Sum");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data}, {{"core_num", 2.0}}, kAt);
      },
      "core_num= must be an integer");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data}, {{"root", int64_t{0}}}, kAt);
      },
      "pld.tensor.allreduce got an unexpected keyword argument 'root'");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data},
                   {{"op", EnumAttr{"pld.ReduceOp.Sum"}}, {"op", EnumAttr{"pld.ReduceOp.Sum"}}},
                   kAt);
      },
      "keyword argument 'op' repeated");
}

TEST_F(OpRegistryTest, Broadcast) {
  const Kwargs root{{"root", int64_t{0}}};
  CallPtr c = MakeOpCall(ops::kBroadcast, {data, signal}, root);
  EXPECT_EQ(c->type, data->type);
  ExpectValueError([&] { MakeOpCall(ops::kBroadcast, {data}, root, kAt); },
                   "pld.tensor.broadcast takes 2 positional arguments, got 1");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kBroadcast, {data, fp_signal}, root, kAt);
      },
      "pld.tensor.broadcast: signal must be an INT32 window view, got FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kBroadcast, {local, signal}, root, kAt);
      },
      "pld.tensor.broadcast: data must be a pld.DistributedTensor window view");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kBroadcast, {data, signal}, {{"root", int64_t{0}}, {"op", EnumAttr{"x"}}},
                   kAt);
      },
      "unexpected keyword argument 'op'");
  // PyPTO requires the root rank, a non-negative integer.
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kBroadcast, {data, signal}, {}, kAt);
      },
      "pld.tensor.broadcast requires keyword argument 'root='");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kBroadcast, {data, signal}, {{"root", int64_t{-1}}}, kAt);
      },
      "pld.tensor.broadcast: root= must be a non-negative integer");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kBroadcast, {data, signal}, {{"root", std::string("0")}}, kAt);
      },
      "root= must be a non-negative integer");
}

TEST_F(OpRegistryTest, ReduceScatterNeedsTwoDimensionalData) {
  CallPtr c = MakeOpCall(ops::kReduceScatter, {data2d, signal}, sum);
  EXPECT_EQ(c->type, data2d->type);
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kReduceScatter, {data, signal}, sum, kAt);
      },
      "pld.tensor.reduce_scatter: data must be a 2-D window view");
  ExprPtr three_d = Window("d3", {2, 2, 2}, DataType::kFP32);
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kReduceScatter, {three_d, signal}, sum, kAt);
      },
      "2-D window view");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kReduceScatter, {data2d, fp_signal}, sum, kAt);
      },
      "signal must be an INT32 window view");
  ExpectValueError([&] { MakeOpCall(ops::kReduceScatter, {data2d}, sum, kAt); },
                   "takes 2 positional arguments, got 1");
}

TEST_F(OpRegistryTest, Barrier) {
  // The signal comes back (PyPTO: `signal = pld.tensor.barrier(signal)`).
  CallPtr c = MakeOpCall(ops::kBarrier, {signal});
  EXPECT_EQ(c->type, signal->type);
  ExpectValueError([&] { MakeOpCall(ops::kBarrier, {local}, {}, kAt); },
                   "pld.tensor.barrier: signal must be a pld.DistributedTensor window view");
  ExpectValueError([&] { MakeOpCall(ops::kBarrier, {fp_signal}, {}, kAt); },
                   "pld.tensor.barrier: signal must be an INT32 window view, got FP32");
  ExpectValueError([&] { MakeOpCall(ops::kBarrier, {}, {}, kAt); },
                   "pld.tensor.barrier takes 1 positional argument, got 0");
}

TEST_F(OpRegistryTest, AllGatherAndAllToAllReturnTypeOfTarget) {
  for (std::string_view op : {ops::kAllGather, ops::kAllToAll}) {
    SCOPED_TRACE(op);
    CallPtr c = MakeOpCall(op, {data, target, signal});
    EXPECT_EQ(c->type, target->type);
    ExpectValueError(
        [&] {
          MakeOpCall(op, {data, target}, {}, kAt);
        },
        "takes 3 positional arguments, got 2");
    // The input may be local data (a pl.Tensor, as in PyPTO's kernels) or a window.
    EXPECT_EQ(MakeOpCall(op, {local, target, signal})->type, target->type);
    ExprPtr fp16_target = Window("fp16_target", {1024}, DataType::kFP16);
    ExpectValueError(
        [&] {
          MakeOpCall(op, {data, fp16_target, signal}, {}, kAt);
        },
        std::string(op) + ": target dtype FP16 must match input dtype FP32");
    ExpectValueError(
        [&] {
          MakeOpCall(op, {Int(3), target, signal}, {}, kAt);
        },
        std::string(op) + ": input must be a pl.Tensor or a pld.DistributedTensor");
    ExpectValueError(
        [&] {
          MakeOpCall(op, {data, local, signal}, {}, kAt);
        },
        std::string(op) + ": target must be a pld.DistributedTensor window view");
    ExpectValueError(
        [&] {
          MakeOpCall(op, {data, target, fp_signal}, {}, kAt);
        },
        "signal must be an INT32 window view, got FP32");
    ExpectValueError(
        [&] {
          MakeOpCall(op, {data, target, signal}, sum, kAt);
        },
        "unexpected keyword argument 'op'");
  }
}

TEST_F(OpRegistryTest, AllToAllV) {
  ExprPtr counts = Window("counts", {8}, DataType::kInt32);
  CallPtr c = MakeOpCall(ops::kAllToAllV, {data, target, signal, counts, counts});
  EXPECT_EQ(c->type, target->type);
  // Input and send counts may be local tensors (a kernel's own data).
  ExprPtr local_counts = MakeVar("lc", TensorTy(Shape({8, 1}), DataType::kInt32));
  EXPECT_EQ(MakeOpCall(ops::kAllToAllV, {local, target, signal, local_counts, counts})->type,
            target->type);
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllToAllV, {data, target, signal, local, counts}, {}, kAt);
      },
      "send_counts must be an INT32 pl.Tensor or pld.DistributedTensor, got FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllToAllV, {data, target, signal, counts, fp_signal}, {}, kAt);
      },
      "recv_counts must be an INT32 window view, got FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllToAllV, {data, target, signal, counts}, {}, kAt);
      },
      "pld.tensor.all_to_all_v takes 5 positional arguments, got 4");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllToAllV, {data, target, signal, counts, local}, {}, kAt);
      },
      "recv_counts must be a pld.DistributedTensor window view");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllToAllV, {data, target, fp_signal, counts, counts}, {}, kAt);
      },
      "signal must be an INT32 window view");
}

// --- plain tensor ops -------------------------------------------------------

TEST_F(OpRegistryTest, TensorCreate) {
  CallPtr c =
      MakeOpCall(ops::kTensorCreate, {Tuple(Shape({16, 16}))}, {{"dtype", DataType::kFP16}});
  ASSERT_EQ(c->type->kind(), NodeKind::kTensorType);
  const auto& t = static_cast<const TensorType&>(*c->type);
  EXPECT_EQ(t.dtype, DataType::kFP16);
  ASSERT_EQ(t.shape.size(), 2u);
  EXPECT_TRUE(StructuralEqual(t.shape[1], Int(16)));
  ExpectValueError([&] { MakeOpCall(ops::kTensorCreate, {Tuple(Shape({16}))}, {}, kAt); },
                   "pl.tensor.create requires keyword argument 'dtype='");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kTensorCreate, {Int(16)}, {{"dtype", DataType::kFP16}}, kAt);
      },
      "expected a shape list");
}

TEST_F(OpRegistryTest, TensorElementwise) {
  for (std::string_view op : {ops::kTensorAdd, ops::kTensorSub, ops::kTensorMul}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(MakeOpCall(op, {local, data})->type, local->type);
    EXPECT_EQ(MakeOpCall(op, {data, local})->type, data->type);
    ExpectValueError(
        [&] {
          MakeOpCall(op, {local, Int(1)}, {}, kAt);
        },
        std::string(op) + ": operands must be tensors");
    ExpectValueError([&] { MakeOpCall(op, {local}, {}, kAt); },
                     "takes 2 positional arguments, got 1");
  }
}

// --- typed calls and re-deduction -------------------------------------------

TEST_F(OpRegistryTest, MakeOpCallWithTypeKeepsTheRecordedType) {
  auto wb = ir::MakeNode<const WindowBuffer>(buf, Int(1024), false, false);
  TypePtr minted = DistTensorTy(Shape({256}), DataType::kFP32, wb);
  CallPtr c = MakeOpCallWithType(ops::kWindow, {buf, Tuple(Shape({256}))},
                                 {{"dtype", DataType::kFP32}}, minted);
  EXPECT_EQ(c->type, minted);
  // Still checked.
  ExpectValueError(
      [&] {
        MakeOpCallWithType(ops::kWindow, {buf}, {{"dtype", DataType::kFP32}}, minted, kAt);
      },
      "takes 2 positional arguments, got 1");
  // Opaque ops are not checked at all.
  CallPtr o =
      MakeOpCallWithType("pl.tile.load", {Int(1), Int(2), Int(3)}, {{"x", int64_t{1}}}, minted);
  EXPECT_EQ(o->type, minted);
  EXPECT_EQ(static_cast<const Op&>(*o->op).info, nullptr);
}

TEST_F(OpRegistryTest, DeduceCallType) {
  CallPtr c = MakeOpCall(ops::kWindow, {buf, Tuple(Shape({8}))}, {{"dtype", DataType::kInt32}});
  TypePtr again = DeduceCallType(*c);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(StructuralEqual(again, c->type));
  EXPECT_NE(again, c->type);  // freshly built
  EXPECT_EQ(DeduceCallType(*MakeFunctionCall("f", {}, nullptr, nullptr)), nullptr);
  EXPECT_EQ(DeduceCallType(*MakeOpCallWithType("pl.tile.load", {}, {}, UnknownType::Get())),
            nullptr);
  // A call whose args were rewritten into something ill-typed reports it.
  Call bad(OpRegistry::Get().GetOp(ops::kBarrier), {fp_signal}, {}, {}, UnknownType::Get());
  bad.set_span(kAt);
  ExpectValueError([&] { DeduceCallType(bad); }, "signal must be an INT32 window view");
}

}  // namespace
}  // namespace cds::ir
