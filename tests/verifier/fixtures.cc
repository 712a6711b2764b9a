#include "tests/verifier/fixtures.h"

#include <fmt/format.h>

namespace cds::verify::testing {

using namespace cds::ir;

HostBuilder::HostBuilder(bool materialized, std::string file)
    : materialized_(materialized), file_(ir::InternFileName(file)) {
  frames_.emplace_back();
}

Span HostBuilder::NextSpan() { return Span{file_, line_++, 9}; }

WindowBufferPtr HostBuilder::WindowBufferOf(const VarPtr& alloc) const {
  for (const auto& [v, wb] : wbs_) {
    if (v == alloc.get()) return wb;
  }
  return nullptr;
}

VarPtr HostBuilder::Alloc(const std::string& name, ExprPtr size_bytes) {
  Span span = NextSpan();
  CallPtr call =
      MakeOpCall(ops::kAllocWindowBuffer, {std::move(size_bytes)}, {{"name", name}}, span);
  VarPtr var = MakeVar(name, call->type, span);
  Emit(Assign(var, call, span));
  // The WindowBuffer's size is the alloc's size argument itself.
  wbs_.emplace_back(var.get(), ir::MakeNode<const WindowBuffer>(var, call->args[0], false, false));
  return var;
}

VarPtr HostBuilder::AllocShape(const std::string& name, std::vector<int64_t> shape, DataType dt) {
  Span span = NextSpan();
  std::vector<ExprPtr> dims;
  for (int64_t d : shape) dims.push_back(Int(d));
  CallPtr call =
      MakeOpCall(ops::kAllocWindowBuffer, {Tuple(dims)}, {{"dtype", dt}, {"name", name}}, span);
  VarPtr var = MakeVar(name, call->type, span);
  Emit(Assign(var, call, span));
  // The shape form's byte size: the dims multiplied left to right, then the width.
  ExprPtr size;
  for (const ExprPtr& d : dims) size = size ? Mul(size, d) : d;
  size = Mul(size, Int(DataTypeBytes(dt)));
  wbs_.emplace_back(var.get(), ir::MakeNode<const WindowBuffer>(var, size, false, false));
  return var;
}

VarPtr HostBuilder::Window(const std::string& name, const VarPtr& alloc, std::vector<ExprPtr> shape,
                           DataType dt) {
  Span span = NextSpan();
  CallPtr call;
  if (materialized_) {
    TypePtr type = DistTensorTy(shape, dt, WindowBufferOf(alloc));
    call = MakeOpCallWithType(ops::kWindow, {alloc, Tuple(shape)}, {{"dtype", dt}}, type, span);
  } else {
    call = MakeOpCall(ops::kWindow, {alloc, Tuple(shape)}, {{"dtype", dt}}, span);
  }
  VarPtr var = MakeVar(name, call->type, span);
  Emit(Assign(var, call, span));
  return var;
}

VarPtr HostBuilder::Let(const std::string& name, ExprPtr value) {
  Span span = NextSpan();
  VarPtr var = MakeVar(name, value->type, span);
  Emit(Assign(var, std::move(value), span));
  return var;
}

void HostBuilder::Dispatch(const std::string& callee, std::vector<ExprPtr> args, ExprPtr device,
                           TypePtr result_type) {
  Span span = NextSpan();
  Emit(ir::Eval(
      MakeFunctionCall(callee, std::move(args), std::move(device), std::move(result_type), span),
      span));
}

void HostBuilder::Eval(ExprPtr e) { Emit(ir::Eval(std::move(e), NextSpan())); }

void HostBuilder::Return(std::vector<ExprPtr> values) {
  Emit(ir::Return(std::move(values), NextSpan()));
}

VarPtr HostBuilder::BeginFor(const std::string& var, ExprPtr start, ExprPtr stop, ExprPtr step,
                             ForKind kind) {
  Frame f;
  f.kind = Frame::kFor;
  f.span = NextSpan();
  f.loop_var = MakeVar(var, ScalarTy(DataType::kIndex), f.span);
  f.start = std::move(start);
  f.stop = std::move(stop);
  f.step = step ? std::move(step) : Int(1);
  f.for_kind = kind;
  VarPtr lv = f.loop_var;
  frames_.push_back(std::move(f));
  return lv;
}

void HostBuilder::EndFor() {
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  auto loop = ir::MakeNode<ForStmt>(f.loop_var, f.start, f.stop, f.step,
                                    Seq(std::move(f.stmts), f.span), f.for_kind);
  loop->set_span(f.span);
  Emit(loop);
}

void HostBuilder::BeginIf(ExprPtr cond) {
  Frame f;
  f.kind = Frame::kIf;
  f.span = NextSpan();
  f.cond = std::move(cond);
  frames_.push_back(std::move(f));
}

void HostBuilder::EndIf() {
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  Emit(If(f.cond, Seq(std::move(f.stmts), f.span), nullptr, f.span));
}

VarPtr HostBuilder::SynthesizedSignal(int k, int64_t core_num) {
  if (!materialized_) return nullptr;
  VarPtr ws = Let(fmt::format("__allreduce_signal_world_size_{}", k),
                  MakeOpCall(ops::kWorldSize, {}, {}, NextSpan()));
  VarPtr buf =
      Alloc(fmt::format("__allreduce_signal_buf_{}", k), Mul(Mul(ws, Int(core_num)), Int(4)));
  synthesized_allocs_.push_back(buf);
  return Window(fmt::format("__allreduce_signal_{}", k), buf, {ws, Int(core_num)},
                DataType::kInt32);
}

CallPtr HostBuilder::AllReduce(const VarPtr& data, const VarPtr& signal) {
  std::vector<ExprPtr> args{data};
  if (signal) args.push_back(signal);
  return MakeOpCall(ops::kAllReduce, std::move(args), {{"op", EnumAttr{"pld.ReduceOp.Sum"}}},
                    NextSpan());
}

void HostBuilder::ReturnAllReduce(int k, const VarPtr& data) {
  if (!materialized_) {
    Return({AllReduce(data, nullptr)});
    return;
  }
  VarPtr sig = SynthesizedSignal(k);
  VarPtr result = Let(fmt::format("__allreduce_result_{}", k + 1), AllReduce(data, sig));
  Return({result});
}

StmtPtr HostBuilder::Body(const std::vector<ScopeSpec>& scopes) {
  StmtPtr body = Seq(frames_.front().stmts);
  if (!materialized_) return body;
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    std::vector<WindowBufferPtr> slots;
    for (const auto& a : it->allocs) slots.push_back(WindowBufferOf(a));
    auto scope = ir::MakeNode<CommDomainScopeStmt>(it->name, it->devices, std::move(slots),
                                                   KwargList{}, body);
    scope->set_span(Span{file_, 1000 + static_cast<int>(scopes.rend() - it), 5});
    body = Seq({scope});
  }
  return body;
}

FunctionPtr ChipOrch(const std::string& name, std::vector<std::vector<int64_t>> param_shapes) {
  std::vector<VarPtr> params;
  std::vector<ParamDirection> dirs;
  for (size_t i = 0; i < param_shapes.size(); ++i) {
    std::vector<ExprPtr> shape;
    for (int64_t d : param_shapes[i]) shape.push_back(Int(d));
    params.push_back(MakeVar(fmt::format("p{}", i), DistTensorTy(shape, DataType::kFP32)));
    dirs.push_back(ParamDirection::kIn);
  }
  TypePtr ret = params[0]->type;
  return ir::MakeNode<Function>(name, params, dirs, std::vector<TypePtr>{ret},
                                Seq({Return({params[0]})}), FunctionType::kOrchestration);
}

TypePtr ChipReturnType(const FunctionPtr& chip) { return chip->return_types.at(0); }

FunctionPtr HostFunction(const std::string& name, StmtPtr body, std::vector<TypePtr> ret) {
  if (ret.empty()) ret.push_back(ScalarTy(DataType::kInt64));
  return ir::MakeNode<Function>(name, std::vector<VarPtr>{}, std::vector<ParamDirection>{},
                                std::move(ret), std::move(body), FunctionType::kOpaque,
                                Level::kHost, Role::kOrchestrator);
}

namespace {

// A collective used as a bare statement keeps the type it was parsed with: the
// pass only re-mints Calls that define a view.
ExprPtr Unminted(const CallPtr& call) {
  if (!call->type || call->type->kind() != NodeKind::kDistributedTensorType) return call;
  auto t =
      ir::MakeNode<DistributedTensorType>(static_cast<const DistributedTensorType&>(*call->type));
  if (!t->window_buffer) return call;
  t->window_buffer = nullptr;
  auto copy = ir::MakeNode<Call>(*call);
  copy->type = t;
  return copy;
}

ExprPtr WorldSize(HostBuilder& b) { return MakeOpCall(ops::kWorldSize, {}, {}, b.NextSpan()); }

ProgramPtr Program1(const std::string& name, std::vector<FunctionPtr> fns) {
  return ir::MakeNode<Program>(name, std::vector<VarPtr>{}, std::move(fns));
}

// One alloc, dispatched on every device.
ProgramPtr SingleAllocAll(bool m) {
  auto chip = ChipOrch("chip_orch", {{256}});
  HostBuilder b(m, "single_alloc_all.pyir");
  VarPtr buf = b.Alloc("buf", Mul(Int(256), Int(4)));
  VarPtr data = b.Window("data", buf, Shape({256}), DataType::kFP32);
  VarPtr r = b.BeginFor("r", Int(0), WorldSize(b));
  b.Dispatch("chip_orch", {data}, r, ChipReturnType(chip));
  b.EndFor();
  b.Return({Int(0)});
  auto body = b.Body({{"comm_d0", DeviceSet::All(), {buf}}});
  return Program1("SingleAllocAll", {chip, HostFunction("host_orch", body)});
}

// Several domains: ALL through a world_size Var bound, subsets from pl.range(N),
// pl.range(a, b) and constants; two allocs with equal coverage share a scope. A
// dispatch without device= (placed at run time) adds nothing to c's coverage.
ProgramPtr Subsets(bool m) {
  auto chip = ChipOrch("chip_orch", {{64}});
  HostBuilder b(m, "subsets.pyir");
  TypePtr ret = ChipReturnType(chip);
  VarPtr a = b.Alloc("a", Int(256));
  VarPtr va = b.Window("va", a, Shape({64}), DataType::kFP32);
  VarPtr bb = b.Alloc("b", Int(256));
  VarPtr vb = b.Window("vb", bb, Shape({64}), DataType::kFP32);
  VarPtr c = b.Alloc("c", Int(256));
  VarPtr vc = b.Window("vc", c, Shape({64}), DataType::kFP32);
  VarPtr d = b.Alloc("d", Int(256));
  VarPtr vd = b.Window("vd", d, Shape({64}), DataType::kFP32);
  VarPtr n = b.Let("n", WorldSize(b));
  VarPtr r = b.BeginFor("r", Int(0), n);
  b.Dispatch("chip_orch", {va}, r, ret);
  b.EndFor();
  VarPtr i = b.BeginFor("i", Int(0), Int(2));
  b.Dispatch("chip_orch", {vb}, i, ret);
  b.EndFor();
  b.Dispatch("chip_orch", {vc}, Int(3), ret);
  VarPtr j = b.BeginFor("j", Int(2), Int(4));
  b.Dispatch("chip_orch", {vc}, j, ret);
  b.Dispatch("chip_orch", {vc}, nullptr, ret);
  b.EndFor();
  b.Dispatch("chip_orch", {vd}, Int(1), ret);
  b.Dispatch("chip_orch", {vd}, Int(0), ret);
  b.Return({Int(0)});
  auto body = b.Body({{"comm_d0", DeviceSet::All(), {a}},
                      {"comm_d1", DeviceSet{false, {0, 1}}, {bb, d}},
                      {"comm_d2", DeviceSet{false, {2, 3}}, {c}}});
  return Program1("Subsets", {chip, HostFunction("host_orch", body)});
}

// Several views of one alloc (a shape-form alloc), an alias, and pl.unroll.
ProgramPtr MultiViewAlias(bool m) {
  auto chip2 = ChipOrch("chip_two", {{256}, {2, 128}});
  auto chip = ChipOrch("chip_orch", {{256}});
  HostBuilder b(m, "multi_view_alias.pyir");
  VarPtr buf = b.AllocShape("buf", {2, 128}, DataType::kFP32);
  VarPtr v1 = b.Window("v1", buf, Shape({256}), DataType::kFP32);
  VarPtr v2 = b.Window("v2", buf, Shape({2, 128}), DataType::kFP32);
  VarPtr w = b.Let("w", v1);
  VarPtr other = b.Alloc("other", Int(1024));
  VarPtr x = b.Window("x", other, Shape({256}), DataType::kFP32);
  VarPtr x2 = b.Let("x2", x);
  b.Dispatch("chip_two", {w, v2}, Int(0), ChipReturnType(chip2));
  VarPtr u = b.BeginFor("u", Int(1), Int(2), Int(1), ForKind::kUnroll);
  b.Dispatch("chip_orch", {x2}, u, ChipReturnType(chip));
  b.EndFor();
  b.Return({Int(0)});
  auto body = b.Body(
      {{"comm_d0", DeviceSet{false, {0}}, {buf}}, {"comm_d1", DeviceSet{false, {1}}, {other}}});
  return Program1("MultiViewAlias", {chip, chip2, HostFunction("host_orch", body)});
}

// Signals: a user-written signal (inherits ALL from its data), a bare allreduce
// with a synthesized signal (inherits {0, 1}), and a lifted `return allreduce(...)`.
ProgramPtr AllReduceSignals(bool m) {
  auto chip = ChipOrch("chip_orch", {{256}});
  TypePtr ret = ChipReturnType(chip);
  HostBuilder b(m, "allreduce_signals.pyir");
  VarPtr dbuf = b.Alloc("dbuf", Mul(Int(256), Int(4)));
  VarPtr data = b.Window("data", dbuf, Shape({256}), DataType::kFP32);
  VarPtr pbuf = b.Alloc("pbuf", Int(512));
  VarPtr part = b.Window("part", pbuf, Shape({128}), DataType::kFP32);
  VarPtr ubuf = b.Alloc("ubuf", Int(64));
  VarPtr usig = b.Window("usig", ubuf, Shape({16}), DataType::kInt32);
  VarPtr r = b.BeginFor("r", Int(0), WorldSize(b));
  b.Dispatch("chip_orch", {data}, r, ret);
  b.EndFor();
  VarPtr i = b.BeginFor("i", Int(0), Int(2));
  b.Dispatch("chip_orch", {part}, i, ret);
  b.EndFor();
  VarPtr red = b.Let("red", b.AllReduce(data, usig));
  VarPtr sig = b.SynthesizedSignal(0);
  b.Eval(Unminted(b.AllReduce(part, sig)));
  b.ReturnAllReduce(1, red);
  std::vector<HostBuilder::ScopeSpec> scopes;
  if (m) {
    const auto& syn = b.synthesized_allocs();
    scopes = {{"comm_d0", DeviceSet::All(), {dbuf, ubuf, syn.at(1)}},
              {"comm_d1", DeviceSet{false, {0, 1}}, {pbuf, syn.at(0)}}};
  }
  TypePtr host_ret = DistTensorTy(Shape({256}), DataType::kFP32);
  return Program1("AllReduceSignals",
                  {chip, HostFunction("host_orch", b.Body(scopes), {host_ret})});
}

// all_to_all_v: its signal and recv_counts inherit the target's coverage (not the
// input's); a barrier's signal gets coverage from its own dispatch only. Input and
// target are [8, 8] (NR = 8 blocks of one row), signal and recv_counts [8, 1],
// send_counts [8].
ProgramPtr AllToAllV(bool m) {
  auto chip = ChipOrch("chip_orch", {{64}});
  TypePtr ret = ChipReturnType(chip);
  HostBuilder b(m, "all_to_all_v.pyir");
  VarPtr ib = b.Alloc("in_buf", Int(256));
  VarPtr in = b.Window("inp", ib, Shape({8, 8}), DataType::kFP32);
  VarPtr tb = b.Alloc("tgt_buf", Int(256));
  VarPtr tgt = b.Window("tgt", tb, Shape({8, 8}), DataType::kFP32);
  VarPtr sb = b.Alloc("sig_buf", Int(32));
  VarPtr sig = b.Window("sig", sb, Shape({8, 1}), DataType::kInt32);
  VarPtr cb = b.Alloc("send_buf", Int(32));
  VarPtr send = b.Window("send", cb, Shape({8}), DataType::kInt32);
  VarPtr rb = b.Alloc("recv_buf", Int(32));
  VarPtr recv = b.Window("recv", rb, Shape({8, 1}), DataType::kInt32);
  VarPtr bb = b.Alloc("bar_buf", Int(16));
  VarPtr bar = b.Window("bar", bb, Shape({4}), DataType::kInt32);
  VarPtr r = b.BeginFor("r", Int(0), WorldSize(b));
  b.Dispatch("chip_orch", {in}, r, ret);
  b.EndFor();
  VarPtr four = b.Let("four", Int(4));
  VarPtr i = b.BeginFor("i", Int(0), four);
  b.Dispatch("chip_orch", {tgt}, i, ret);
  b.Dispatch("chip_orch", {send}, i, ret);
  b.EndFor();
  b.Dispatch("chip_orch", {bar}, Int(5), ret);
  VarPtr out =
      b.Let("out", MakeOpCall(ops::kAllToAllV, {in, tgt, sig, send, recv}, {}, b.NextSpan()));
  b.Dispatch("chip_orch", {out}, Int(0), ret);
  b.Eval(MakeOpCall(ops::kBarrier, {bar}, {}, b.NextSpan()));
  b.Return({Int(0)});
  auto body = b.Body({{"comm_d0", DeviceSet::All(), {ib}},
                      {"comm_d1", DeviceSet{false, {0, 1, 2, 3}}, {tb, sb, cb, rb}},
                      {"comm_d2", DeviceSet{false, {5}}, {bb}}});
  return Program1("AllToAllV", {chip, HostFunction("host_orch", body)});
}

// Nested loops (range inside range, unroll inside range), a constant Var bound,
// an if, allgather whose signal inherits the target's coverage (a row [1, 16] of
// va into the 4 rows of vc, signal vs [4]), reduce_scatter and broadcast whose
// signals inherit their data's.
ProgramPtr NestedLoops(bool m) {
  auto chip = ChipOrch("chip_orch", {{64}});
  TypePtr ret = ChipReturnType(chip);
  HostBuilder b(m, "nested_loops.pyir");
  VarPtr ab = b.Alloc("a", Int(64));
  VarPtr a = b.Window("va", ab, Shape({1, 16}), DataType::kFP32);
  VarPtr bbuf = b.Alloc("b", Int(256));
  VarPtr vb = b.Window("vb", bbuf, Shape({64}), DataType::kFP32);
  VarPtr cb = b.Alloc("c", Int(256));
  VarPtr c = b.Window("vc", cb, Shape({4, 16}), DataType::kFP32);
  VarPtr sb = b.Alloc("s", Int(16));
  VarPtr s = b.Window("vs", sb, Shape({4}), DataType::kInt32);
  VarPtr db = b.Alloc("d", Int(256));
  VarPtr d = b.Window("vd", db, Shape({8, 8}), DataType::kFP32);
  VarPtr eb = b.Alloc("e", Int(16));
  VarPtr e = b.Window("ve", eb, Shape({4}), DataType::kInt32);
  VarPtr i = b.BeginFor("i", Int(0), Int(2));
  b.Dispatch("chip_orch", {a}, i, ret);
  VarPtr j = b.BeginFor("j", Int(2), Int(4), Int(1), ForKind::kUnroll);
  b.Dispatch("chip_orch", {vb}, j, ret);
  b.Dispatch("chip_orch", {d}, i, ret);
  b.EndFor();
  b.EndFor();
  VarPtr three = b.Let("three", Int(3));
  VarPtr k = b.BeginFor("k", Int(1), three);
  b.BeginIf(Bool(true));
  b.Dispatch("chip_orch", {c}, k, ret);
  b.EndIf();
  b.EndFor();
  VarPtr g = b.Let("g", MakeOpCall(ops::kAllGather, {a, c, s}, {}, b.NextSpan()));
  b.Dispatch("chip_orch", {g}, Int(1), ret);
  b.Eval(Unminted(MakeOpCall(ops::kReduceScatter, {d, e}, {{"op", EnumAttr{"pld.ReduceOp.Sum"}}},
                             b.NextSpan())));
  b.Eval(Unminted(MakeOpCall(ops::kBroadcast, {d, e}, {{"root", int64_t{0}}}, b.NextSpan())));
  b.Return({Int(0)});
  auto body = b.Body({{"comm_d0", DeviceSet{false, {0, 1}}, {ab, db, eb}},
                      {"comm_d1", DeviceSet{false, {2, 3}}, {bbuf}},
                      {"comm_d2", DeviceSet{false, {1, 2}}, {cb, sb}}});
  return Program1("NestedLoops", {chip, HostFunction("host_orch", body)});
}

// Two host orchestrators (scope numbering restarts per function), a host
// orchestrator without allocs (left as it is), an InCore function and an opaque
// helper with DistributedTensor parameters that must stay without back-references.
ProgramPtr TwoHosts(bool m) {
  auto chip = ChipOrch("chip_orch", {{32}});
  TypePtr ret = ChipReturnType(chip);
  VarPtr kp = MakeVar("x", DistTensorTy(Shape({32}), DataType::kFP32));
  auto kernel = ir::MakeNode<Function>("kernel", std::vector<VarPtr>{kp},
                                       std::vector<ParamDirection>{ParamDirection::kInOut},
                                       std::vector<TypePtr>{}, Seq({}), FunctionType::kInCore);
  VarPtr hp = MakeVar("h", DistTensorTy(Shape({32}), DataType::kFP32));
  auto helper = ir::MakeNode<Function>(
      "helper", std::vector<VarPtr>{hp}, std::vector<ParamDirection>{ParamDirection::kIn},
      std::vector<TypePtr>{hp->type}, Seq({Return({hp})}), FunctionType::kOpaque);
  std::vector<FunctionPtr> fns{chip, kernel, helper};
  for (const char* name : {"host_a", "host_b"}) {
    HostBuilder b(m, std::string(name) + ".pyir");
    VarPtr buf = b.Alloc("buf", Int(128));
    VarPtr v = b.Window("v", buf, Shape({32}), DataType::kFP32);
    VarPtr t = b.Let(
        "t", MakeOpCall(ops::kTensorCreate, {Tuple(Shape({32}))}, {{"dtype", DataType::kFP32}}));
    (void)t;
    VarPtr r = b.BeginFor("r", Int(0), WorldSize(b));
    b.Dispatch("chip_orch", {v}, r, ret);
    b.EndFor();
    b.Return({Int(0)});
    fns.push_back(HostFunction(name, b.Body({{"comm_d0", DeviceSet::All(), {buf}}})));
  }
  HostBuilder plain(m, "host_plain.pyir");
  VarPtr n = plain.Let("n", WorldSize(plain));
  plain.Return({Int(0)});
  (void)n;
  fns.push_back(HostFunction("host_plain", plain.Body({})));
  return Program1("TwoHosts", std::move(fns));
}

struct Recipe {
  const char* name;
  ProgramPtr (*build)(bool);
};

constexpr Recipe kRecipes[] = {
    {"single_alloc_all", SingleAllocAll},
    {"subsets", Subsets},
    {"multi_view_alias", MultiViewAlias},
    {"allreduce_signals", AllReduceSignals},
    {"all_to_all_v", AllToAllV},
    {"nested_loops", NestedLoops},
    {"two_hosts", TwoHosts},
};

}  // namespace

std::vector<Fixture> AllFixtures() {
  std::vector<Fixture> out;
  for (const auto& r : kRecipes) out.push_back({r.name, r.build(false), r.build(true)});
  return out;
}

}  // namespace cds::verify::testing
