#include "tests/text/random_program.h"

#include <random>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/op_registry.h"

namespace cds::ir::testing {

namespace {

class Gen {
 public:
  Gen(uint64_t seed, const RandomProgramOptions& o) : rng_(seed), opt_(o) {}

  ProgramPtr Program() {
    std::vector<FunctionPtr> fns;
    fns.push_back(ChipOrch());
    int hosts = Uniform(1, 2);
    for (int h = 0; h < hosts; ++h) fns.push_back(HostOrch(fmt::format("host_{}", h)));
    return ir::MakeNode<ir::Program>(Pick<std::string>({"P", "Prog", "M"}), std::vector<VarPtr>{},
                                     std::move(fns));
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Uniform(0, 99) < percent; }
  template <typename T>
  T Pick(std::initializer_list<T> xs) {
    auto it = xs.begin();
    std::advance(it, Uniform(0, static_cast<int>(xs.size()) - 1));
    return *it;
  }
  template <typename T>
  const T& PickFrom(const std::vector<T>& xs) {
    return xs[static_cast<size_t>(Uniform(0, static_cast<int>(xs.size()) - 1))];
  }

  FunctionPtr ChipOrch() {
    chip_params_.clear();
    std::vector<VarPtr> params;
    std::vector<ParamDirection> dirs;
    int n = Uniform(1, 3);
    for (int i = 0; i < n; ++i) {
      auto t = DistTensorTy(Shape({256}), DataType::kFP32);
      params.push_back(MakeVar(Pick<std::string>({"data", "x", "data"}), t));
      dirs.push_back(Pick({ParamDirection::kIn, ParamDirection::kOut, ParamDirection::kInOut}));
    }
    chip_params_ = params;
    std::vector<TypePtr> rets;
    std::vector<StmtPtr> body;
    if (Chance(70)) {
      rets.push_back(params[0]->type);
      body.push_back(Return({params[0]}));
    }
    chip_ret_ = rets.empty() ? TypePtr(UnknownType::Get()) : rets[0];
    return ir::MakeNode<Function>("chip_orch", params, dirs, rets, Seq(body),
                                  FunctionType::kOrchestration);
  }

  // ---- host

  struct Alloc {
    VarPtr ptr;
    ExprPtr size;
    std::vector<WindowBufferPtr> wbs;  // materialized windows over this base
  };

  FunctionPtr HostOrch(const std::string& name) {
    scalars_.clear();
    views_.clear();
    allocs_.clear();
    all_wbs_.clear();
    materialize_ = opt_.materialized && Chance(50);
    std::vector<StmtPtr> body;
    int n = Uniform(0, opt_.max_stmts);
    for (int i = 0; i < n; ++i) Stmt(&body, 0);
    std::vector<TypePtr> rets;
    if (Chance(50)) {
      body.push_back(Return({Int(0)}));
      if (Chance(70)) rets.push_back(ScalarTy(DataType::kInt64));  // else printed `-> None`
    }
    StmtPtr fbody = Seq(body);
    if (materialize_ && !all_wbs_.empty()) {
      // Nested scopes, outer first; each takes a share of the windows in order.
      int scopes = Uniform(1, std::min<int>(3, static_cast<int>(all_wbs_.size())));
      std::vector<std::vector<WindowBufferPtr>> slots(static_cast<size_t>(scopes));
      for (size_t i = 0; i < all_wbs_.size(); ++i) {
        slots[std::min(i, slots.size() - 1)].push_back(all_wbs_[i]);
      }
      for (int s = scopes - 1; s >= 0; --s) {
        DeviceSet d = DeviceSet::All();
        if (Chance(50)) {
          const int64_t lo = Uniform(0, 3), hi = Uniform(4, 7);
          d = DeviceSet{false,
                        Chance(50) ? std::vector<int64_t>{lo} : std::vector<int64_t>{lo, hi}};
        }
        KwargList attrs;
        if (Chance(20)) attrs.emplace_back("note", std::string("x"));
        fbody = Seq({ir::MakeNode<CommDomainScopeStmt>(fmt::format("comm_d{}", s), d, slots[s],
                                                       attrs, fbody)});
      }
    }
    return ir::MakeNode<Function>(name, std::vector<VarPtr>{}, std::vector<ParamDirection>{}, rets,
                                  fbody, FunctionType::kOpaque, Level::kHost, Role::kOrchestrator);
  }

  std::string VarName() {
    return Pick<std::string>(
        {"x", "y", "n", "data", "buf", "x_1", "tmp", "pl", "for", "9lives", "a b", ""});
  }

  ExprPtr ScalarExpr(int depth) {
    if (depth <= 0 || Chance(35)) {
      switch (Uniform(0, 6)) {
        case 0:
          return Int(Uniform(-1000, 1000));
        case 1:
          return Int(Uniform(0, 64), Pick({DataType::kInt32, DataType::kIndex, DataType::kUInt8}));
        case 2:
          return Float(Pick({0.5, -2.25, 1e20, 3.0, -0.0}),
                       Pick({DataType::kFP32, DataType::kFP64}));
        case 3:
          return Bool(Chance(50));
        case 4:
          return MakeOpCall(ops::kWorldSize, {});
        default:
          if (!scalars_.empty()) return PickFrom(scalars_);
          return Int(Uniform(0, 9));
      }
    }
    switch (Uniform(0, 3)) {
      case 0:
        return Unary(Pick({UnaryOp::kNeg, UnaryOp::kNot}), ScalarExpr(depth - 1));
      default: {
        BinaryOp op = Pick({BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kFloorDiv,
                            BinaryOp::kFloorMod, BinaryOp::kDiv, BinaryOp::kMin, BinaryOp::kMax,
                            BinaryOp::kEq, BinaryOp::kNe, BinaryOp::kLt, BinaryOp::kLe,
                            BinaryOp::kGt, BinaryOp::kGe, BinaryOp::kAnd, BinaryOp::kOr});
        return Binary(op, ScalarExpr(depth - 1), ScalarExpr(depth - 1));
      }
    }
  }

  ExprPtr SizeExpr() {
    ExprPtr s = Int(Uniform(1, 512));
    if (Chance(50)) s = Mul(s, Int(Pick<int64_t>({1, 2, 4, 8})));
    if (!scalars_.empty() && Chance(20)) {
      const VarPtr& v = PickFrom(scalars_);
      if (IsInteger(static_cast<const ScalarType&>(*v->type).dtype)) s = Mul(v, s);
    }
    return s;
  }

  void Stmt(std::vector<StmtPtr>* out, int depth) {
    int kind = Uniform(0, 11);
    if (depth >= opt_.max_depth && kind >= 8) kind = Uniform(0, 7);
    switch (kind) {
      case 0:
      case 1: {  // scalar assignment, sometimes with a differing annotation
        ExprPtr e = ScalarExpr(Uniform(0, 3));
        TypePtr t = e->type;
        if (Chance(15)) t = ScalarTy(DataType::kIndex);
        if (Chance(5)) t = UnknownType::Get();
        VarPtr v = MakeVar(VarName(), t);
        out->push_back(Assign(v, e));
        if (t->kind() == NodeKind::kScalarType) scalars_.push_back(v);
        return;
      }
      case 2: {  // alloc
        VarPtr v = MakeVar(VarName(), PtrType::Get());
        KwargList kw;
        std::vector<ExprPtr> args;
        ExprPtr size;
        if (Chance(20)) {
          const int64_t cols = Uniform(1, 8);
          args.push_back(Tuple(Shape({4, cols})));
          kw.emplace_back("dtype", DataType::kFP32);
          // Any size expression round-trips; this one is what an FP32 [4, cols] alloc asks for.
          size = Int(4 * cols * 4);
        } else {
          size = SizeExpr();
          args.push_back(size);
        }
        kw.emplace_back("name", Chance(70) ? v->name_hint
                                           : std::string("alloc_") + std::to_string(Uniform(0, 5)));
        CallPtr call = MakeOpCall(ops::kAllocWindowBuffer, args, kw);
        out->push_back(Assign(v, call));
        Alloc a{v, size, {}};
        if (materialize_) {
          int n = Chance(20) ? 2 : 1;
          for (int i = 0; i < n; ++i) {
            auto wb = ir::MakeNode<WindowBuffer>(v, a.size, Chance(20), Chance(20));
            a.wbs.push_back(wb);
            all_wbs_.push_back(wb);
          }
        }
        allocs_.push_back(a);
        return;
      }
      case 3:
      case 4: {  // view (needs an alloc)
        if (allocs_.empty()) return Stmt(out, depth);
        const Alloc& a = PickFrom(allocs_);
        auto shape = Shape({256});
        DataType dt = Pick({DataType::kFP32, DataType::kInt32});
        KwargList kw{{"dtype", dt}};
        std::vector<ExprPtr> args{a.ptr, Tuple(shape)};
        CallPtr call;
        TypePtr t;
        if (!a.wbs.empty()) {
          t = DistTensorTy(shape, dt, PickFrom(a.wbs));
          call = MakeOpCallWithType(ops::kWindow, args, kw, t);
        } else {
          call = MakeOpCall(ops::kWindow, args, kw);
          t = call->type;
        }
        VarPtr v = MakeVar(Pick<std::string>({"data", "view", "signal"}), t);
        out->push_back(Assign(v, call));
        views_.push_back(v);
        if (Chance(30)) {  // an alias
          VarPtr w = MakeVar(Pick<std::string>({"alias", "data"}), t);
          out->push_back(Assign(w, v));
          views_.push_back(w);
        }
        return;
      }
      case 5: {  // dispatch
        if (views_.empty()) return Stmt(out, depth);
        std::vector<ExprPtr> args;
        for (size_t i = 0; i < chip_params_.size(); ++i) args.push_back(PickFrom(views_));
        ExprPtr device =
            Chance(50) && !loop_vars_.empty() ? ExprPtr(PickFrom(loop_vars_)) : Int(Uniform(0, 7));
        if (Chance(10)) device = nullptr;
        CallPtr c = MakeFunctionCall("chip_orch", args, device, chip_ret_);
        out->push_back(Eval(c));
        return;
      }
      case 6: {  // allreduce, on an FP32 view (PyPTO's allreduce takes FP16 or FP32 data)
        std::vector<VarPtr> fp32;
        for (const VarPtr& v : views_) {
          if (static_cast<const DistributedTensorType&>(*v->type).dtype == DataType::kFP32)
            fp32.push_back(v);
        }
        if (fp32.empty()) return Stmt(out, depth);
        VarPtr data = PickFrom(fp32);
        KwargList kw;
        if (Chance(60)) kw.emplace_back("op", EnumAttr{"pld.ReduceOp.Sum"});
        if (Chance(20)) kw.emplace_back("core_num", int64_t{4});
        CallPtr c = MakeOpCall(ops::kAllReduce, {data}, kw);
        if (Chance(50)) {
          out->push_back(Eval(c));
        } else {
          VarPtr v = MakeVar(data->name_hint, c->type);
          out->push_back(Assign(v, c));
          views_.push_back(v);
        }
        return;
      }
      case 7: {  // world size temp
        CallPtr c = MakeOpCall(ops::kWorldSize, {});
        VarPtr v = MakeVar("n", c->type);
        out->push_back(Assign(v, c));
        scalars_.push_back(v);
        return;
      }
      case 8: {  // for
        VarPtr lv = MakeVar(Pick<std::string>({"r", "i", "_"}), ScalarTy(DataType::kIndex));
        ExprPtr start = Chance(60) ? Int(0) : Int(Uniform(0, 4));
        ExprPtr stop = Chance(50) ? ExprPtr(MakeOpCall(ops::kWorldSize, {})) : Int(Uniform(0, 8));
        ExprPtr step = Chance(70) ? Int(1) : Int(Uniform(2, 3));
        auto body = Block(depth, lv);
        ForKind kind = Chance(70)   ? ForKind::kRange
                       : Chance(50) ? ForKind::kUnroll
                                    : ForKind::kParallel;
        auto f = ir::MakeNode<ForStmt>(lv, start, stop, step, body, kind);
        out->push_back(f);
        return;
      }
      case 9: {  // while
        ExprPtr cond = ScalarExpr(1);
        out->push_back(While(cond, Block(depth, nullptr)));
        return;
      }
      default: {  // if / elif / else
        ExprPtr cond = ScalarExpr(2);
        StmtPtr then_body = Block(depth, nullptr);
        StmtPtr else_body;
        int e = Uniform(0, 2);
        if (e == 1) else_body = Block(depth, nullptr);
        if (e == 2)
          else_body = Seq({If(ScalarExpr(1), Block(depth, nullptr),
                              Chance(50) ? Block(depth, nullptr) : nullptr)});
        out->push_back(If(cond, then_body, else_body));
        return;
      }
    }
  }

  SeqStmtsPtr Block(int depth, const VarPtr& loop_var) {
    // Names defined inside a block stay visible after it (as in Python), but a
    // loop variable only makes sense as a device inside its loop.
    if (loop_var) {
      loop_vars_.push_back(loop_var);
      scalars_.push_back(loop_var);
    }
    std::vector<StmtPtr> stmts;
    int n = Uniform(0, 3);
    for (int i = 0; i < n; ++i) Stmt(&stmts, depth + 1);
    if (loop_var) loop_vars_.pop_back();
    return Seq(stmts);
  }

  std::mt19937_64 rng_;
  RandomProgramOptions opt_;
  std::vector<VarPtr> chip_params_;
  TypePtr chip_ret_;
  std::vector<VarPtr> scalars_;
  std::vector<VarPtr> views_;
  std::vector<VarPtr> loop_vars_;
  std::vector<Alloc> allocs_;
  std::vector<WindowBufferPtr> all_wbs_;
  bool materialize_ = false;
};

}  // namespace

ProgramPtr RandomProgram(uint64_t seed, const RandomProgramOptions& options) {
  Gen g(seed, options);
  return g.Program();
}

}  // namespace cds::ir::testing
