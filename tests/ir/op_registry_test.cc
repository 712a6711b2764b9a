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
  // allgather, all_to_all and all_to_all_v move rows of SIZE elements: one row
  // [1, SIZE] of this rank, NR rows [NR, SIZE] of all ranks.
  ExprPtr row = Window("row", {1, 64}, DataType::kFP32);
  ExprPtr rows = Window("rows", {4, 64}, DataType::kFP32);
  ExprPtr rows2 = Window("rows2", {4, 64}, DataType::kFP32);
  ExprPtr local_row = MakeVar("local_row", TensorTy(Shape({1, 64}), DataType::kFP32));
  ExprPtr local_rows = MakeVar("local_rows", TensorTy(Shape({4, 64}), DataType::kFP32));
  ExprPtr row_signal = Window("rsig", {4, 1}, DataType::kInt32);  // NR = 4, as in `rows`
  ExprPtr signal_1d = Window("sig1", {4}, DataType::kInt32);
  ExprPtr signal_wide = Window("sig2", {4, 2}, DataType::kInt32);
  VarPtr n = MakeVar("n", ScalarTy(DataType::kIndex));
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
  // The reductions PyPTO's allreduce takes; the member is the last part of the name.
  for (const char* op :
       {"pld.ReduceOp.Sum", "pld.ReduceOp.Max", "pld.ReduceOp.Min", "pld.ReduceOp.Prod"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(MakeOpCall(ops::kAllReduce, {data, signal}, {{"op", EnumAttr{op}}})->type,
              data->type);
  }
  EXPECT_EQ(MakeOpCall(ops::kAllReduce, {data, signal}, {{"core_num", int64_t{1}}})->type,
            data->type);
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
      "pld.tensor.allreduce: op= must be an enum value, pld.ReduceOp.Sum, Max, Min or Prod");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data}, {{"op", EnumAttr{"pld.ReduceOp.Foo"}}}, kAt);
      },
      "pld.tensor.allreduce: op= must be pld.ReduceOp.Sum, Max, Min or Prod, got "
      "pld.ReduceOp.Foo");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kAllReduce, {data}, {{"core_num", 2.0}}, kAt);
      },
      "pld.tensor.allreduce: core_num= must be a positive integer");
  // PyPTO's parser takes core_num= > 0 only.
  for (int64_t bad : {int64_t{0}, int64_t{-1}}) {
    SCOPED_TRACE(bad);
    ExpectValueError(
        [&] {
          MakeOpCall(ops::kAllReduce, {data, signal}, {{"core_num", bad}}, kAt);
        },
        "pld.tensor.allreduce: core_num= must be a positive integer");
  }
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

// PyPTO lowers the summing reduce_scatter only: op= is Sum when given.
TEST_F(OpRegistryTest, ReduceScatterSumsOnly) {
  EXPECT_EQ(MakeOpCall(ops::kReduceScatter, {data2d, signal}, {})->type, data2d->type);
  for (const char* op : {"pld.ReduceOp.Max", "pld.ReduceOp.Min", "pld.ReduceOp.Prod"}) {
    SCOPED_TRACE(op);
    const std::string msg = ExpectValueError(
        [&] {
          MakeOpCall(ops::kReduceScatter, {data2d, signal}, {{"op", EnumAttr{op}}}, kAt);
        },
        "pld.tensor.reduce_scatter: op= must be pld.ReduceOp.Sum, got ");
    EXPECT_THAT(msg, HasSubstr(op));
  }
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kReduceScatter, {data2d, signal}, {{"op", int64_t{0}}}, kAt);
      },
      "pld.tensor.reduce_scatter: op= must be an enum value, pld.ReduceOp.Sum");
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

// allgather: this rank's row [1, SIZE] into the target's NR rows [NR, SIZE].
TEST_F(OpRegistryTest, AllGatherGathersOneRowIntoNRows) {
  const std::string_view op = ops::kAllGather;
  CallPtr c = MakeOpCall(op, {row, rows, row_signal});
  EXPECT_EQ(c->type, rows->type);
  // The input may be local data (a pl.Tensor, as in PyPTO's kernels) or a window;
  // the signal [NR] or [NR, 1]; NR need not be a constant.
  EXPECT_EQ(MakeOpCall(op, {local_row, rows, row_signal})->type, rows->type);
  EXPECT_EQ(MakeOpCall(op, {row, rows, signal_1d})->type, rows->type);
  ExprPtr world_rows = MakeVar("wr", DistTensorTy({n, Int(64)}, DataType::kFP32));
  EXPECT_EQ(MakeOpCall(op, {row, world_rows, row_signal})->type, world_rows->type);
  EXPECT_EQ(MakeOpCall(op, {opaque, rows, row_signal})->type, rows->type);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, rows}, {}, kAt);
      },
      "takes 3 positional arguments, got 2");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {data, rows, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: input must be 2-D [1, SIZE] (this rank's one chunk), "
      "got 1 dims");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows2, rows, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: input must be [1, SIZE] (this rank's one chunk), got "
      "first dim 4");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, target, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: target must be 2-D [NR, SIZE], got 1 dims");
  ExprPtr narrow = Window("narrow", {4, 32}, DataType::kFP32);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, narrow, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: target SIZE (dim 1) must equal input SIZE");
  ExprPtr fp16_rows = Window("fp16_rows", {4, 64}, DataType::kFP16);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, fp16_rows, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: target dtype FP16 must match input dtype FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, rows, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: input and target must be different buffers, got the "
      "same one twice");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, rows, signal_wide}, {}, kAt);
      },
      "pld.tensor.allgather: signal second dim must be 1");
  // The signal has one slot per rank of the target (where both are constants).
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, rows, signal}, {}, kAt);
      },
      "pld.tensor.allgather: signal first dim 8 must equal target first dim 4 (NR)");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, rows, Window("sig8", {8}, DataType::kInt32)}, {}, kAt);
      },
      "pld.tensor.allgather: signal first dim 8 must equal target first dim 4 (NR)");
  EXPECT_EQ(
      MakeOpCall(op, {row, rows, MakeVar("wsig", DistTensorTy({n, Int(1)}, DataType::kInt32))})
          ->type,
      rows->type);
  ExprPtr signal_3d = Window("sig3", {2, 4, 1}, DataType::kInt32);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, rows, signal_3d}, {}, kAt);
      },
      "pld.tensor.allgather: signal must be [NR] or [NR, 1], got 3 dims");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {Int(3), rows, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: input must be a pl.Tensor or a pld.DistributedTensor");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, local_rows, row_signal}, {}, kAt);
      },
      "pld.tensor.allgather: target must be a pld.DistributedTensor window view");
  // PyPTO's DSL takes no keyword argument here (defer= is gone).
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, rows, row_signal}, {{"defer", true}}, kAt);
      },
      "pld.tensor.allgather got an unexpected keyword argument 'defer'");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {row, rows, row_signal}, sum, kAt);
      },
      "unexpected keyword argument 'op'");
}

// all_to_all: NR rows [NR, SIZE] out, NR rows in.
TEST_F(OpRegistryTest, AllToAllExchangesNRows) {
  const std::string_view op = ops::kAllToAll;
  CallPtr c = MakeOpCall(op, {rows, rows2, row_signal});
  EXPECT_EQ(c->type, rows2->type);
  EXPECT_EQ(MakeOpCall(op, {local_rows, rows2, row_signal})->type, rows2->type);
  EXPECT_EQ(MakeOpCall(op, {rows, rows2, signal_1d})->type, rows2->type);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, rows2}, {}, kAt);
      },
      "takes 3 positional arguments, got 2");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {data, rows2, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: input must be 2-D [NR, SIZE], got 1 dims");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, target, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: target must be 2-D [NR, SIZE], got 1 dims");
  ExprPtr more_rows = Window("more_rows", {8, 64}, DataType::kFP32);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, more_rows, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: target first dim 8 must equal input first dim 4");
  ExprPtr narrow = Window("narrow", {4, 32}, DataType::kFP32);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, narrow, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: target SIZE (dim 1) must equal input SIZE");
  ExprPtr fp16_rows = Window("fp16_rows", {4, 64}, DataType::kFP16);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, fp16_rows, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: target dtype FP16 must match input dtype FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, rows, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: input and target must be different buffers, got the "
      "same one twice");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, rows2, signal_wide}, {}, kAt);
      },
      "pld.tensor.all_to_all: signal second dim must be 1");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, rows2, signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: signal first dim 8 must equal input first dim 4 (NR)");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {Int(3), rows2, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: input must be a pl.Tensor or a pld.DistributedTensor");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, local_rows, row_signal}, {}, kAt);
      },
      "pld.tensor.all_to_all: target must be a pld.DistributedTensor window view");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {rows, rows2, row_signal}, sum, kAt);
      },
      "unexpected keyword argument 'op'");
}

// The signal of allgather and all_to_all is an INT32 window, as for every other
// collective (PyPTO's deducers check the element type and the kind).
TEST_F(OpRegistryTest, AllGatherAndAllToAllSignalIsAnInt32Window) {
  ExprPtr fp_row_signal = Window("fsig4", {4, 1}, DataType::kFP32);
  ExprPtr fp_signal_1d = Window("fsig1", {4}, DataType::kFP32);
  ExprPtr local_signal = MakeVar("lsig", TensorTy(Shape({4, 1}), DataType::kInt32));
  struct Case {
    std::string_view op;
    ExprPtr input, target;
  };
  for (const Case& k : {Case{ops::kAllGather, row, rows}, Case{ops::kAllToAll, rows, rows2}}) {
    SCOPED_TRACE(k.op);
    ExpectValueError(
        [&] {
          MakeOpCall(k.op, {k.input, k.target, fp_row_signal}, {}, kAt);
        },
        std::string(k.op) + ": signal must be an INT32 window view, got FP32");
    ExpectValueError(
        [&] {
          MakeOpCall(k.op, {k.input, k.target, fp_signal_1d}, {}, kAt);
        },
        std::string(k.op) + ": signal must be an INT32 window view, got FP32");
    ExpectValueError(
        [&] {
          MakeOpCall(k.op, {k.input, k.target, local_signal}, {}, kAt);
        },
        std::string(k.op) + ": signal must be a pld.DistributedTensor window view");
    ExpectValueError(
        [&] {
          MakeOpCall(k.op, {k.input, k.target, Int(4)}, {}, kAt);
        },
        std::string(k.op) + ": signal must be a pld.DistributedTensor window view");
  }
}

// all_to_all_v: input and target [NR*MAX_RECV, SIZE]; the signal [NR, 1] states
// NR, a positive constant; one count per rank on each side.
TEST_F(OpRegistryTest, AllToAllV) {
  const std::string_view op = ops::kAllToAllV;
  ExprPtr in = Window("in", {8, 16}, DataType::kFP32);
  ExprPtr tgt = Window("tgt", {8, 16}, DataType::kFP32);
  ExprPtr sig = Window("sig4", {4, 1}, DataType::kInt32);
  ExprPtr send = Window("send", {4}, DataType::kInt32);
  ExprPtr recv = Window("recv", {4, 1}, DataType::kInt32);
  CallPtr c = MakeOpCall(op, {in, tgt, sig, send, recv});
  EXPECT_EQ(c->type, tgt->type);
  // Input and send counts may be local tensors (a kernel's own data); send counts
  // [NR] or [NR, 1].
  ExprPtr local_in = MakeVar("li", TensorTy(Shape({8, 16}), DataType::kFP32));
  ExprPtr local_counts = MakeVar("lc", TensorTy(Shape({4, 1}), DataType::kInt32));
  EXPECT_EQ(MakeOpCall(op, {local_in, tgt, sig, local_counts, recv})->type, tgt->type);
  EXPECT_EQ(MakeOpCall(op, {in, tgt, sig, recv, recv})->type, tgt->type);
  // One expression as input and target is not rejected here (only allgather and
  // all_to_all are).
  EXPECT_EQ(MakeOpCall(op, {tgt, tgt, sig, send, recv})->type, tgt->type);

  // Kinds and element types.
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, Window("fc", {4}, DataType::kFP32), recv}, {}, kAt);
      },
      "send_counts must be an INT32 pl.Tensor or pld.DistributedTensor, got FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, send, Window("fr", {4, 1}, DataType::kFP32)}, {}, kAt);
      },
      "recv_counts must be an INT32 window view, got FP32");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, send}, {}, kAt);
      },
      "pld.tensor.all_to_all_v takes 5 positional arguments, got 4");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, send, local_counts}, {}, kAt);
      },
      "recv_counts must be a pld.DistributedTensor window view");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, Window("fs", {4, 1}, DataType::kFP32), send, recv}, {}, kAt);
      },
      "signal must be an INT32 window view");
  ExprPtr fp16_tgt = Window("fp16_tgt", {8, 16}, DataType::kFP16);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, fp16_tgt, sig, send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: target dtype FP16 must match input dtype FP32");

  // Shapes of input and target.
  ExpectValueError(
      [&] {
        MakeOpCall(op, {data, tgt, sig, send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: input must be 2-D [NR*MAX_RECV, SIZE], got 1 dims");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, target, sig, send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: target must be 2-D [NR*MAX_RECV, SIZE], got 1 dims");
  ExprPtr narrow = Window("narrow", {8, 8}, DataType::kFP32);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, narrow, sig, send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: target SIZE (dim 1) must equal input SIZE");

  // The signal gives NR.
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, Window("s1", {4}, DataType::kInt32), send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: signal must be 2-D [NR, 1], got 1 dims");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, Window("s2", {4, 2}, DataType::kInt32), send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: signal second dim must be 1");
  ExprPtr world_sig = MakeVar("ws", DistTensorTy({n, Int(1)}, DataType::kInt32));
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, world_sig, send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: signal first dim (NR) must be a positive integer "
      "constant");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, Window("s0", {0, 1}, DataType::kInt32), send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: signal first dim (NR) must be positive, got 0");

  // The target holds NR blocks.
  ExprPtr six = Window("six", {6, 16}, DataType::kFP32);
  ExpectValueError(
      [&] {
        MakeOpCall(op, {six, six, sig, send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: signal first dim 4 (NR) must divide target first "
      "dim 6");
  ExprPtr dyn_tgt = MakeVar("dt", DistTensorTy({n, Int(16)}, DataType::kFP32));
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, dyn_tgt, sig, send, recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: target first dim (NR*MAX_RECV) must be an integer "
      "constant");

  // One count per rank.
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, Window("c8", {8}, DataType::kInt32), recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: send_counts first dim must be the constant NR = 4 (the "
      "signal's first dim)");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, send, Window("r8", {8, 1}, DataType::kInt32)}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: recv_counts first dim must be the constant NR = 4 (the "
      "signal's first dim)");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, send, send}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: recv_counts must be 2-D [NR, 1], got 1 dims");
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, Window("c42", {4, 2}, DataType::kInt32), recv}, {}, kAt);
      },
      "pld.tensor.all_to_all_v: send_counts second dim must be 1");

  // PyPTO's DSL takes no keyword argument here (core_num= is gone).
  ExpectValueError(
      [&] {
        MakeOpCall(op, {in, tgt, sig, send, recv}, {{"core_num", int64_t{2}}}, kAt);
      },
      "pld.tensor.all_to_all_v got an unexpected keyword argument 'core_num'");
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

// layout=, manual_dep= and init_value= do not change the result type.
TEST_F(OpRegistryTest, TensorCreateLayoutManualDepInitValue) {
  const ExprPtr shape = Tuple(Shape({16, 16}));
  const TypePtr plain = MakeOpCall(ops::kTensorCreate, {shape}, {{"dtype", DataType::kFP16}})->type;
  for (const char* layout : {"pl.ND", "pl.DN", "pl.NZ", "pl.MX_A_ZZ", "pl.MX_B_NN",
                             "pl.TensorLayout.NZ", "pl.TensorLayout.MX_B_NN"}) {
    SCOPED_TRACE(layout);
    CallPtr c = MakeOpCall(ops::kTensorCreate, {shape},
                           {{"dtype", DataType::kFP16}, {"layout", EnumAttr{layout}}});
    EXPECT_TRUE(StructuralEqual(c->type, plain));
  }
  CallPtr all = MakeOpCall(ops::kTensorCreate, {shape},
                           {{"dtype", DataType::kFP16},
                            {"layout", EnumAttr{"pl.NZ"}},
                            {"manual_dep", true},
                            {"init_value", int64_t{0}}});
  EXPECT_TRUE(StructuralEqual(all->type, plain));
  EXPECT_EQ(all->kwargs.size(), 4u);
  CallPtr fp_init =
      MakeOpCall(ops::kTensorCreate, {shape},
                 {{"dtype", DataType::kFP16}, {"manual_dep", false}, {"init_value", 0.5}});
  EXPECT_TRUE(StructuralEqual(fp_init->type, plain));

  ExpectValueError(
      [&] {
        MakeOpCall(ops::kTensorCreate, {shape},
                   {{"dtype", DataType::kFP16}, {"layout", EnumAttr{"pl.XY"}}}, kAt);
      },
      "pl.tensor.create: layout= must be pl.ND, pl.DN, pl.NZ, pl.MX_A_ZZ or pl.MX_B_NN, got "
      "pl.XY");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kTensorCreate, {shape},
                   {{"dtype", DataType::kFP16}, {"layout", std::string("NZ")}}, kAt);
      },
      "pl.tensor.create: layout= must be an enum value");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kTensorCreate, {shape},
                   {{"dtype", DataType::kFP16}, {"manual_dep", int64_t{1}}}, kAt);
      },
      "pl.tensor.create: manual_dep= must be True or False");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kTensorCreate, {shape},
                   {{"dtype", DataType::kFP16}, {"init_value", std::string("0")}}, kAt);
      },
      "pl.tensor.create: init_value= must be a number");
  ExpectValueError(
      [&] {
        MakeOpCall(ops::kTensorCreate, {shape}, {{"dtype", DataType::kFP16}, {"fill", int64_t{0}}},
                   kAt);
      },
      "pl.tensor.create got an unexpected keyword argument 'fill'");
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
