// Window buffers (pld.alloc_window_buffer in its four size forms), their window
// views, and the data and signal views collectives take.

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "fuzz/gen/generator.h"
#include "ir/op_registry.h"

namespace cds::fuzz::detail {

int Generator::EmitWorldSizeTemp() {
  StmtModel s = NewStmt(StmtKind::kScalar);
  s.def = NewValue(Fresh("n"), ValueKind::kScalar);
  m_.values[s.def].scalar_dtype = DataType::kIndex;
  s.expr = SExpr::WorldSize();
  const int v = s.def;
  Push(std::move(s));
  return v;
}

int Generator::UsableWorldSizeTemp() {
  ValueList ws = UsableWhere([](const ValueModel& v) {
    return v.kind == ValueKind::kScalar && v.scalar_dtype == DataType::kIndex && v.name[0] == 'n';
  });
  if (!ws.empty() && c_.Chance(3, 4)) return c_.Pick(ws);
  return EmitWorldSizeTemp();
}

int Generator::EmitAlloc(std::optional<SizeForm> force_form, bool dump_form, std::string logical,
                         std::string var_name) {
  absl::InlinedVector<SizeForm, 4> forms;
  if (On(Feature::kSizeLiteral)) forms.push_back(SizeForm::kLiteral);
  if (On(Feature::kSizeBytes)) forms.push_back(SizeForm::kBytes);
  if (On(Feature::kSizeWorldSize)) forms.push_back(SizeForm::kWorldSize);
  if (On(Feature::kSizeShape)) forms.push_back(SizeForm::kShape);
  if (forms.empty()) forms.push_back(SizeForm::kLiteral);
  AllocModel a;
  a.function = host_;
  a.size_form = force_form ? *force_form : c_.Pick(forms);
  static const std::vector<DataType> kData = {DataType::kFP32, DataType::kFP16, DataType::kBF16};
  a.dtype = c_.Chance(1, 3) ? DataType::kInt32 : c_.Pick(kData);
  static constexpr int64_t kElems[] = {256, 1024, 64, 4096};
  const int64_t elems = kElems[c_.Int(0, 3)];
  switch (a.size_form) {
    case SizeForm::kLiteral:
      a.size = SExpr::Const(elems * ir::DataTypeBytes(a.dtype));
      break;
    case SizeForm::kBytes:
      a.size = SExpr::Bin(ir::BinaryOp::kMul, SExpr::Const(elems), SExpr::BytesOf(a.dtype));
      break;
    case SizeForm::kWorldSize: {
      const int n = UsableWorldSizeTemp();
      a.size = SExpr::Bin(ir::BinaryOp::kMul, SExpr::VarRef(n),
                          SExpr::Const(c_.Chance(1, 2) ? 4 : elems));
      break;
    }
    case SizeForm::kShape:
      if (On(Feature::kSizeSymbolic) && c_.Chance(1, 2)) {
        // A world-size dim, or a product of it (`m = n * 2`): the size is linear in
        // the world size, and the pass, the verifier and the model must each keep
        // the dim that does not fold.
        int dim = UsableWorldSizeTemp();
        if (c_.Chance(1, 3)) {
          StmtModel m = NewStmt(StmtKind::kScalar);
          m.def = NewValue(Fresh("m"), ValueKind::kScalar);
          m_.values[m.def].scalar_dtype = DataType::kIndex;
          m.expr = SExpr::Bin(ir::BinaryOp::kMul, SExpr::VarRef(dim), SExpr::Const(c_.Int(2, 4)));
          dim = m.def;
          Push(std::move(m));
        }
        a.shape = {Dim{0, dim}, Dim{c_.Chance(1, 2) ? 16 : 64, -1}};
      } else if (c_.Bool()) {
        a.shape = {Dim{elems, -1}};
      } else {
        a.shape = {Dim{c_.Int(1, 8), -1}, Dim{64, -1}};
      }
      break;
  }
  if (var_name.empty()) var_name = Fresh(a.dtype == DataType::kInt32 ? "sbuf" : "buf");
  a.name = logical.empty() ? var_name : logical;
  a.dump_form = dump_form;
  StmtModel s = NewStmt(StmtKind::kAlloc);
  s.def = NewValue(var_name, ValueKind::kPtr);
  a.var = s.def;
  a.stmt = s.id;
  s.ref = static_cast<int>(m_.allocs.size());
  m_.values[s.def].alloc = s.ref;
  m_.allocs.push_back(std::move(a));
  windows_.push_back(0);
  host_allocs_.push_back(s.ref);
  const int idx = s.ref;
  Push(std::move(s));
  return idx;
}

TensorSig Generator::RandomViewSig(int alloc) {
  if (m_.allocs[alloc].dtype == DataType::kInt32 && c_.Chance(2, 3)) return SignalSig();
  if (c_.Chance(2, 3)) return c_.Pick(palette_);
  static constexpr int64_t kLengths[] = {64, 256, 128};
  return Sig({kLengths[c_.Int(0, 2)]}, m_.allocs[alloc].dtype);
}

TensorSig Generator::SignalSig() {
  if (c_.Chance(1, 4)) {
    // A world-size-shaped signal, as SynthesizeAllReduceSignals builds one.
    TensorSig s;
    s.dims = {Dim{0, UsableWorldSizeTemp()}, Dim{c_.Int(1, 2), -1}};
    s.dtype = DataType::kInt32;
    return s;
  }
  static constexpr int64_t kLengths[] = {8, 16, 4};
  return Sig({kLengths[c_.Int(0, 2)]}, DataType::kInt32);
}

// `name = pld.window(alloc, [shape], dtype=)`; rebinds `rebind`'s name if given.
int Generator::EmitView(int alloc, std::optional<TensorSig> sig, int rebind) {
  TensorSig s = sig ? *sig : RandomViewSig(alloc);
  std::string name =
      rebind >= 0 ? m_.values[rebind].name : Fresh(s.dtype == DataType::kInt32 ? "s" : "x");
  StmtModel st = NewStmt(StmtKind::kView);
  st.ref = alloc;
  ++windows_[alloc];
  st.def = NewValue(std::move(name), ValueKind::kView);
  m_.values[st.def].alloc = alloc;
  m_.values[st.def].sig = std::move(s);
  const int v = st.def;
  Push(std::move(st));
  return v;
}

// Allocs keep to at most three windows while any alloc has room for another.
int Generator::PickAlloc(bool prefer_int32) {
  ValueList room, pref;
  for (int a : host_allocs_) {
    if (windows_[a] < 3) room.push_back(a);
  }
  const std::span<const int> pool =
      room.empty() ? std::span<const int>(host_allocs_) : std::span<const int>(room);
  for (int a : pool) {
    if ((m_.allocs[a].dtype == DataType::kInt32) == prefer_int32) pref.push_back(a);
  }
  if (!pref.empty() && c_.Chance(3, 4)) return c_.Pick(pref);
  return c_.Pick(pool);
}

int Generator::SignalArg() {
  return ViewArg([](const ValueModel& v) { return v.sig.dtype == DataType::kInt32; }, SignalSig(),
                 true);
}

// `dtypes`: the element types the op takes there, when it restricts them (PyPTO's
// deducers: allreduce data FP16 or FP32, an all_to_all target the input's); a new
// view takes the first when the palette's does not fit.
int Generator::DataArg(bool two_d, std::initializer_list<DataType> dtypes, bool constant_dims) {
  TensorSig sig = two_d ? Sig({c_.Int(2, 8), 64}, DataType::kFP32) : c_.Pick(palette_);
  auto fits = [&dtypes](DataType d) {
    return dtypes.size() == 0 ? d != DataType::kInt32
                              : std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
  };
  if (!two_d && !fits(sig.dtype))
    sig.dtype = dtypes.size() == 0 ? DataType::kFP32 : *dtypes.begin();
  return ViewArg(
      [two_d, constant_dims, &fits](const ValueModel& v) {
        if (constant_dims && std::any_of(v.sig.dims.begin(), v.sig.dims.end(),
                                         [](const Dim& d) { return d.var >= 0; }))
          return false;
        return two_d ? v.sig.dims.size() == 2 : fits(v.sig.dtype);
      },
      sig, false);
}

void Generator::GenAlias() {
  ValueList views = UsableWhere([](const ValueModel& v) { return v.kind == ValueKind::kView; });
  const int src = c_.Pick(views);
  StmtModel s = NewStmt(StmtKind::kAlias);
  s.src = src;
  s.def = NewValue(Fresh("w"), ValueKind::kView);
  m_.values[s.def].alloc = m_.values[src].alloc;
  m_.values[s.def].sig = m_.values[src].sig;
  Push(std::move(s));
}

Generator::ValueList Generator::RebindCandidates() const {
  ValueList out;
  for (int v : scopes_.back()) {
    if (Usable(v) && m_.values[v].kind == ValueKind::kView) out.push_back(v);
  }
  return out;
}

// An alloc and, mostly, its first view or views.
void Generator::GenAllocWithViews() {
  const int a = EmitAlloc();
  if (c_.Chance(3, 4)) {
    const int n = On(Feature::kMultiView) && c_.Chance(1, 2) ? static_cast<int>(c_.Int(2, 3)) : 1;
    for (int i = 0; i < n; ++i) EmitView(a);
  }
}

// A new window of some alloc under the name of a view of this block, of the old
// view's type: PyPTO's parser takes no rebinding of a name to another type.
void Generator::GenRebind() {
  const int old = c_.Pick(RebindCandidates());
  const TensorSig sig = m_.values[old].sig;
  EmitView(PickAlloc(sig.dtype == DataType::kInt32), sig, old);
}

}  // namespace cds::fuzz::detail
