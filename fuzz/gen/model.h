#pragma once

// A random host-orchestration program as plain data. The model is valid by
// construction (or carries exactly one planted defect, see InvalidKind), and is
// the single source for the IR (RenderIR), the user-form text (RenderText) and the
// expected result of the pass (ComputeExpectation), so none of those depends on
// the code under test.

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "fuzz/gen/choices.h"
#include "ir/dtype.h"
#include "ir/expr.h"

namespace cds::fuzz {

// ---------------------------------------------------------------------------
// Features. Each program enables a random subset (swarm testing), so rare
// interactions are not drowned by the usual mix. The names are the --features
// spellings of cds-gen.
#define CDS_GEN_FEATURES(X)                                                        \
  X(MultiHost, "multi_host")               /* 2-4 host orchestrators */            \
  X(HostByType, "host_by_type")            /* type=Orchestration, level=HOST */    \
  X(ChipByType, "chip_by_type")            /* type=Orchestration */                \
  X(ChipByLevelRole, "chip_by_level_role") /* level=CHIP, role=Orchestrator */     \
  X(GraphFunc, "graph")                    /* Graph function, also dispatched */   \
  X(InCoreFunc, "incore")                  /* InCore function, also dispatched */  \
  X(SizeLiteral, "size_literal")           /* alloc_window_buffer(1024) */         \
  X(SizeBytes, "size_bytes")               /* 256 * pl.FP32.get_byte() */          \
  X(SizeWorldSize, "size_world_size")      /* n * 4, n = pld.world_size() */       \
  X(SizeShape, "size_shape")               /* alloc_window_buffer([..], dtype=) */ \
  X(SizeSymbolic, "size_symbolic")         /* a shape dim n = pld.world_size() */  \
  X(MultiView, "multi_view")               /* 2-3 views of one alloc */            \
  X(Alias, "alias")                        /* w = v */                             \
  X(Rebind, "rebind")                      /* a view name bound twice */           \
  X(DeviceConst, "device_const")           /* device=2 */                          \
  X(DeviceOutsideLoop, "dispatch_outside_loop")                                    \
  X(DeviceUnplaced, "dispatch_unplaced") /* self.f(x): no device= */               \
  X(LoopWorldSize, "loop_world_size")    /* pl.range(pld.world_size()) */          \
  X(LoopRange, "loop_range")             /* pl.range(N) */                         \
  X(LoopStartStop, "loop_start_stop")    /* pl.range(a, b) and (a, b, 1) */        \
  X(LoopBoundTemp, "loop_bound_temp")    /* n = ...; pl.range(n) */                \
  X(LoopEmpty, "loop_empty")             /* pl.range(0) beside real coverage */    \
  X(NestedLoop, "nested_loop")                                                     \
  X(WhileLoop, "while")                                                            \
  X(IfElse, "if_else")                                                             \
  X(AllReduce, "allreduce") /* explicit signal */                                  \
  X(AllReduceImplicit, "allreduce_implicit")                                       \
  X(AllReduceReturn, "allreduce_return") /* return pld.tensor.allreduce(..) */     \
  X(Broadcast, "broadcast")                                                        \
  X(ReduceScatter, "reduce_scatter")                                               \
  X(Barrier, "barrier")                                                            \
  X(AllGather, "allgather")                                                        \
  X(AllToAll, "all_to_all")                                                        \
  X(AllToAllV, "all_to_all_v")                                                     \
  X(CollectiveResult, "collective_result") /* x = pld.tensor.allreduce(..) */      \
  X(NoiseTensor, "noise_tensor")           /* pl.tensor.create / add */            \
  X(NoiseScalar, "noise_scalar")           /* s = (n * 2) + 1 */                   \
  X(NameCollision, "name_collision")       /* a Var named __allreduce_signal_K */  \
  X(WholeProgram, "whole_program")         /* unroll/parallel, scopes, -(x) */     \
  X(OpaqueCall, "opaque_call")             /* pl.touch(v, (x, 1), tag=x[..]) */    \
  X(IterArgs, "iter_args")                 /* init_values= loops + pl.yield_ */    \
  X(Unpack, "unpack")                      /* a, b = pl.split(v, 2) */             \
  X(Subscript, "subscript")                /* x[i], x[a:b], t[..] = x[..] */       \
  X(TupleValue, "tuple_value")             /* t = (x, 1), (), nested; return t */  \
  X(KernelCollective, "kernel_collective") /* pld.tensor.* in an InCore kernel */  \
  X(ChipCollective, "chip_collective")     /* pld.tensor.* in a chip orchestrator */

enum class Feature : uint8_t {
#define CDS_GEN_FEATURE_ENUM(N, S) k##N,
  CDS_GEN_FEATURES(CDS_GEN_FEATURE_ENUM)
#undef CDS_GEN_FEATURE_ENUM
      kCount
};
inline constexpr size_t kNumFeatures = static_cast<size_t>(Feature::kCount);
using FeatureSet = std::bitset<kNumFeatures>;

std::string_view FeatureName(Feature f);
std::optional<Feature> FeatureFromName(std::string_view name);
FeatureSet AllFeatures();

// ---------------------------------------------------------------------------
// Values. Every name the program binds is one ValueModel (SSA: a rebound name is a
// new value with the same name). Statements refer to values by index.

enum class ValueKind : uint8_t {
  kParam,   // a parameter of a function other than a host (see ValueModel::local)
  kPtr,     // an alloc's LHS
  kView,    // resolves to a window view of `alloc` (window, alias, in-place collective)
  kScalar,  // world_size temp, constant temp, arithmetic
  kLoopVar,
  kTensor,  // pl.tensor.create / add result
  kOpaque,  // a typed value that is not a view (dispatch result, broadcast result)
  kTuple,   // a tuple value: `t = (x, 1)`
};

// A shape dimension: a constant, or a scalar value (`[n, 1]`).
struct Dim {
  int64_t constant = 0;
  int var = -1;
};

// One or two dimensions in every generated signature: stored inline, since every
// value of the model carries one and copies them.
struct TensorSig {
  absl::InlinedVector<Dim, 2> dims;
  ir::DataType dtype = ir::DataType::kFP32;
};

struct ValueModel {
  std::string name;
  ValueKind kind = ValueKind::kScalar;
  int function = -1;
  int alloc = -1;                                    // kPtr and kView: the alloc
  TensorSig sig;                                     // tensor-typed values
  ir::DataType scalar_dtype = ir::DataType::kInt64;  // kScalar / kLoopVar
  // kParam of an InCore kernel: a local `pl.Tensor` (local) or a window passed
  // `pl.InOut` (inout); otherwise a plain `pld.DistributedTensor`.
  bool local = false;
  bool inout = false;
};

// A scalar expression: temps, loop bounds, conditions, computed alloc sizes.
struct SExpr {
  // kSubscript: `var[operands...]` (unknown type); kSlice: `a:b:c`, each part an
  // operand whose kind is kNone when absent (only inside a kSubscript); kTuple:
  // `(operands...)`, a tuple value (`()`, `(x,)`, `(a, (b, 1))`).
  enum class Kind : uint8_t {
    kConst,
    kVar,
    kWorldSize,
    kBytesOf,
    kBinary,
    kNeg,
    kSubscript,
    kSlice,
    kNone,
    kTuple
  } kind = Kind::kConst;
  int64_t constant = 0;
  int var = -1;
  ir::DataType dtype = ir::DataType::kInt64;  // kBytesOf: the dtype named
  ir::BinaryOp op = ir::BinaryOp::kAdd;
  std::vector<SExpr> operands;  // kBinary: two; kNeg: one

  static SExpr Const(int64_t c) {
    SExpr e;
    e.constant = c;
    return e;
  }
  static SExpr VarRef(int v) {
    SExpr e;
    e.kind = Kind::kVar;
    e.var = v;
    return e;
  }
  static SExpr WorldSize() {
    SExpr e;
    e.kind = Kind::kWorldSize;
    return e;
  }
  static SExpr BytesOf(ir::DataType dt) {
    SExpr e;
    e.kind = Kind::kBytesOf;
    e.dtype = dt;
    return e;
  }
  // `-(x)`: a UnaryExpr; never a literal (the parser folds `-5` into ConstInt(-5)).
  static SExpr Neg(SExpr x) {
    SExpr e;
    e.kind = Kind::kNeg;
    e.operands = {std::move(x)};
    return e;
  }
  static SExpr None() {
    SExpr e;
    e.kind = Kind::kNone;
    return e;
  }
  static SExpr Sub(int base, std::vector<SExpr> indices) {
    SExpr e;
    e.kind = Kind::kSubscript;
    e.var = base;
    e.operands = std::move(indices);
    return e;
  }
  static SExpr TupleOf(std::vector<SExpr> elements) {
    SExpr e;
    e.kind = Kind::kTuple;
    e.operands = std::move(elements);
    return e;
  }
  static SExpr SliceOf(SExpr a, SExpr b, SExpr c) {
    SExpr e;
    e.kind = Kind::kSlice;
    e.operands = {std::move(a), std::move(b), std::move(c)};
    return e;
  }
  // Whether the expression mentions a subscript (its type is then unknown).
  bool HasSubscript() const {
    if (kind == Kind::kSubscript) return true;
    for (const SExpr& o : operands) {
      if (o.HasSubscript()) return true;
    }
    return false;
  }
  static SExpr Bin(ir::BinaryOp op, SExpr a, SExpr b) {
    SExpr e;
    e.kind = Kind::kBinary;
    e.op = op;
    e.operands = {std::move(a), std::move(b)};
    return e;
  }
};

// ---------------------------------------------------------------------------
// Functions

enum class FuncRole : uint8_t { kHostOrch, kChipOrch, kGraph, kInCore };
// How the @pl.function decorator spells the role.
enum class DeclForm : uint8_t {
  kHostLevelRole,   // level=pl.Level.HOST, role=pl.Role.Orchestrator
  kHostTypeLevel,   // type=pl.FunctionType.Orchestration, level=pl.Level.HOST
  kChipType,        // type=pl.FunctionType.Orchestration
  kChipLevelRole,   // level=pl.Level.CHIP, role=pl.Role.Orchestrator
  kGraphType,       // type=pl.FunctionType.Graph
  kGraphLevelRole,  // type=Graph, level=CHIP, role=Orchestrator: still not a target
  kInCoreType,      // type=pl.FunctionType.InCore
};

struct StmtModel;

struct FunctionModel {
  std::string name;
  FuncRole role = FuncRole::kHostOrch;
  DeclForm decl = DeclForm::kHostLevelRole;
  std::vector<int> params;  // value ids (chip-level functions)
  // Host orchestrators; an InCore kernel's collectives (feature kernel_collective).
  // Every function but a host returns its first param after it.
  std::vector<StmtModel> body;
  int line = 0;  // line of `def`
};

// ---------------------------------------------------------------------------
// Host statements and the tables they index

enum class SizeForm : uint8_t { kLiteral, kBytes, kWorldSize, kShape };

struct AllocModel {
  std::string name;  // logical alloc name (name=); the LHS unless dump_form
  int var = -1;      // the LHS value
  int function = -1;
  SizeForm size_form = SizeForm::kLiteral;
  SExpr size;                                // kLiteral / kBytes / kWorldSize: the size argument
  absl::InlinedVector<Dim, 2> shape;         // kShape
  ir::DataType dtype = ir::DataType::kFP32;  // element type its views usually use
  bool dump_form = false;                    // pl._dump.alloc_window_buffer(size, name="...")
  int stmt = -1;                             // statement id
};

enum class LoopForm : uint8_t {
  kWorldSize,          // pl.range(pld.world_size())             -> ALL
  kWorldSizeExplicit,  // pl.range(0, pld.world_size(), 1)       -> ALL
  kWorldSizeTemp,      // n = pld.world_size(); pl.range(n)      -> ALL
  kStop,               // pl.range(N)                            -> {0..N-1}
  kStopTemp,           // k = N; pl.range(k)                     -> {0..N-1}
  kStartStop,          // pl.range(a, b)                         -> {a..b-1}
  kStartStopStep1,     // pl.range(a, b, 1)                      -> {a..b-1}
  // Invalid as a device= source:
  kStep,            // pl.range(a, b, s), s != 1
  kWorldSizeStart,  // pl.range(a, pld.world_size()), a != 0
  kVarBound,        // pl.range(c), c = n + K: a Var neither constant nor world_size
  // kStartStop with a negative start, or with more than kMaxModelDevices ids, is
  // invalid too (see DeviceDescriptor): the form is fine, the values are not.
};

// The largest constant range a dispatch may enumerate (docs/pass.md bounds it so a
// hostile pl.range(10**12) cannot exhaust memory); the model's own copy of it.
inline constexpr int64_t kMaxModelDevices = 65536;

// How the loop is spelled: the pass must treat pl.unroll / pl.parallel as pl.range.
enum class LoopKind : uint8_t { kRange, kUnroll, kParallel };

struct LoopModel {
  int var = -1;  // loop variable value
  LoopForm form = LoopForm::kStop;
  LoopKind kind = LoopKind::kRange;
  int64_t start = 0, stop = 0, step = 1;
  int bound_var = -1;  // kWorldSizeTemp / kStopTemp: the temp holding the stop
  // Loop-carried values (feature iter_args): `for r, (a0, a1) in pl.range(...,
  // init_values=(i0, i1)):` whose body ends with `res0, res1 = pl.yield_(y0, y1)`.
  std::vector<int> iter_args;  // the carried names (values typed as their init)
  std::vector<SExpr> inits;    // kConst or kVar
  std::vector<SExpr> yields;   // one per iter arg
  std::vector<int> results;    // the yield's targets (bound after the loop); may be empty
};

enum class DeviceForm : uint8_t {
  kConst,     // device=N, N >= 0
  kLoopVar,   // device=r, r an enclosing for loop's variable
  kUnplaced,  // no device=: the runtime places it, it covers no device
  // Invalid:
  kNegative,    // device=-1
  kNotLoopVar,  // device=d, d a scalar temp
  kExpr,        // device=r + 1
};

struct DispatchModel {
  int function = -1;  // the host
  int callee = -1;    // function index
  std::vector<int> args;
  DeviceForm form = DeviceForm::kConst;
  int64_t constant = 0;           // kConst / kNegative / kExpr addend
  int device_var = -1;            // kLoopVar / kNotLoopVar / kExpr
  int loop = -1;                  // kLoopVar / kExpr: the loop of device_var
  std::vector<int> loop_context;  // enclosing for loops, outer first
  bool in_while = false;
  int stmt = -1;
};

enum class CollKind : uint8_t {
  kAllReduce,
  kBroadcast,
  kReduceScatter,
  kBarrier,
  kAllGather,
  kAllToAll,
  kAllToAllV
};
std::string_view CollOpName(CollKind k);  // "pld.tensor.allreduce"

struct CollectiveModel {
  int function = -1;
  CollKind kind = CollKind::kAllReduce;
  // Positional args as written (value ids). allreduce without a signal has one.
  std::vector<int> args;
  int64_t core_num = 0;            // allreduce core_num= (0: absent unless explicit_core_num)
  bool explicit_core_num = false;  // core_num= written even though it is not positive (invalid)
  int64_t root = 0;                // broadcast root=
  int result = -1;                 // value bound to the result, or -1 (a bare statement)
  bool in_return = false;          // `return pld.tensor.allreduce(...)`
  // Invalid shapes: the allreduce sits inside another expression: a call
  // (`pl.tensor.add`, a dispatch) or a tuple `(allreduce(..),)`.
  enum class Nest : uint8_t { kNone, kTensorAdd, kDispatch, kTuple } nested = Nest::kNone;
  int nest_other = -1;  // kTensorAdd: the other operand; kDispatch: callee
  bool in_loop = false;
  int stmt = -1;

  bool ImplicitSignal() const { return kind == CollKind::kAllReduce && args.size() == 1; }
};

enum class StmtKind : uint8_t {
  kAlloc,         // ref: alloc
  kView,          // def; ref: alloc
  kAlias,         // def = src
  kScalar,        // def = expr
  kDispatch,      // ref: dispatch; def optional (dispatch result, kOpaque)
  kCollective,    // ref: collective
  kFor,           // ref: loop; body
  kWhile,         // cond; body
  kIf,            // cond; body, orelse
  kTensorCreate,  // def
  kTensorAdd,     // def = src + src2
  kReturn,        // returns `0`, ref: collective (in_return), or src: a tuple value
  kScope,         // `with pl.manual_scope():` body (a generic ScopeStmt)
  kOpaque,        // `pl.touch([src][, src2][, tuple_args...][, tag=expr])`: views in an opaque call
  kUnpack,        // `defs... = pl.split(src, len(defs))`
  kSubscriptAssign,  // `expr[...] = expr2` (expr is a kSubscript)
  kYield,            // ref: loop; `results = pl.yield_(yields)`, last statement of its body
};

struct StmtModel {
  StmtKind kind = StmtKind::kScalar;
  int id = -1;   // program-wide statement id (lines, invalid specs)
  int ref = -1;  // index into allocs / dispatches / collectives / loops
  int def = -1;  // value bound by the statement
  int src = -1, src2 = -1;
  SExpr expr;   // kScalar value, kWhile / kIf condition, kSubscriptAssign target, tag= (flag)
  SExpr expr2;  // kSubscriptAssign value
  std::vector<int> defs;          // kUnpack targets
  std::vector<SExpr> tuple_args;  // kOpaque: tuple-valued positional arguments
  // kScope: `with pl.at(name_hint=..., tag=expr):` instead of pl.manual_scope();
  // kOpaque: the call carries `tag=expr`.
  bool flag = false;
  std::vector<StmtModel> body, orelse;
};

// An InCore kernel whose body calls collectives (feature kernel_collective).
bool IsCollectiveKernel(const FunctionModel& f);

struct ProgramModel {
  std::string name = "P";
  std::vector<FunctionModel> functions;  // class (source) order
  std::vector<ValueModel> values;
  std::vector<AllocModel> allocs;
  std::vector<LoopModel> loops;
  std::vector<DispatchModel> dispatches;
  std::vector<CollectiveModel> collectives;
  FeatureSet enabled;           // what the swarm draw allowed
  std::vector<int> stmt_lines;  // statement id -> 1-based line in RenderText (0: none); AssignLines
  int num_stmts = 0;
  // The value of a module-level `NR = pl.dynamic("NR")` (size_symbolic), or -1.
  int dynamic_dim = -1;

  std::vector<int> HostFunctions() const;
  int FindFunction(std::string_view name) const;
  const StmtModel* FindStmt(int id) const;
  // Features that actually occur in the program (not just enabled).
  FeatureSet UsedFeatures() const;
};

// ---------------------------------------------------------------------------
// Generation

struct GenOptions {
  // Approximate number of host statements over all host orchestrators.
  int size = 24;
  // Use exactly `size` (cds-gen, benchmarks) instead of drawing it from [4, size]
  // (RapidCheck and libFuzzer, where an exhausted source should mean small).
  bool fixed_size = false;
  // Features that may be drawn; each program enables a random subset of them
  // (swarm) unless `swarm` is false, in which case all of them are on.
  FeatureSet features = AllFeatures();
  bool swarm = true;
  // Finish (generate.h) leaves a valid program's text and stmt_lines out when
  // false: a fuzz target that checks the text of only some programs renders it
  // with RenderText when it needs it, instead of paying for it on every input.
  bool render_text = true;
};

ProgramModel GenerateModel(Choices& choices, const GenOptions& options);

// ---------------------------------------------------------------------------
// Invalid programs: one planted defect in an otherwise valid program.

#define CDS_GEN_INVALID_KINDS(X)                                                 \
  X(DeadAlloc, "dead_alloc")                                                     \
  X(UnconsumedAlloc, "unconsumed_alloc")                                         \
  X(EmptyCoverage, "empty_coverage") /* only pl.range(0) */                      \
  X(DeviceStep, "device_step")       /* pl.range(0, 8, 2) */                     \
  X(DeviceNotLoopVar, "device_not_loop_var")                                     \
  X(DeviceExpr, "device_expr") /* device=r + 1 */                                \
  X(DeviceNegative, "device_negative")                                           \
  X(DeviceWorldSizeStart, "device_world_size_start")                             \
  X(DuplicateName, "duplicate_name")                                             \
  X(AllToAllVInFor, "all_to_all_v_in_for")                                       \
  X(AllToAllVInWhile, "all_to_all_v_in_while")                                   \
  X(ImplicitAllReduceInLoop, "implicit_allreduce_in_loop")                       \
  X(NestedAllReduce, "nested_allreduce")                                         \
  X(AllReduceArity, "allreduce_arity")                                           \
  X(CollectiveNotView, "collective_not_view")                                    \
  X(NoTransitiveCoverage, "no_transitive_coverage")                              \
  X(OnlyUnplacedDispatch, "only_unplaced_dispatch") /* self.f(x) alone */        \
  X(DeviceLoopNonconstBounds, "device_loop_nonconst_bounds")                     \
  X(DeviceRangeNegativeStart, "device_range_negative_start")                     \
  X(DeviceRangeTooLarge, "device_range_too_large") /* pl.range(0, 1e5) */        \
  X(BarrierUncovered, "barrier_uncovered")         /* signal never dispatched */ \
  X(AllReduceCoreNum, "allreduce_core_num")        /* core_num=0 or negative */  \
  X(CarriedView, "carried_view")                   /* init_values=(view,) */

enum class InvalidKind : uint8_t {
#define CDS_GEN_INVALID_ENUM(N, S) k##N,
  CDS_GEN_INVALID_KINDS(CDS_GEN_INVALID_ENUM)
#undef CDS_GEN_INVALID_ENUM
      kCount
};
inline constexpr size_t kNumInvalidKinds = static_cast<size_t>(InvalidKind::kCount);
std::string_view InvalidKindName(InvalidKind k);
std::optional<InvalidKind> InvalidKindFromName(std::string_view name);

// Which stage reports the defect.
enum class Stage : uint8_t { kParse, kSynthesize, kMaterialize };
std::string_view StageName(Stage s);

struct InvalidSpec {
  InvalidKind kind = InvalidKind::kDeadAlloc;
  Stage text_stage = Stage::kMaterialize;  // for ParseProgram(RenderText(m)) + pipeline
  Stage ir_stage = Stage::kMaterialize;    // for RenderIR(m) + pipeline
  std::string function;                    // the host holding the defect
  int stmt = -1;                           // the planted statement's id
  int line = 0;                            // its 1-based line in RenderText(m)
  // The diagnostic should contain at least one of these (alloc name or construct).
  std::vector<std::string> message_any_of;
};

struct InvalidModel {
  ProgramModel model;
  InvalidSpec spec;
  std::string text;  // RenderText(model): placing the spec's line renders it anyway
};

InvalidModel GenerateInvalid(Choices& choices, InvalidKind kind, const GenOptions& options = {});

}  // namespace cds::fuzz
