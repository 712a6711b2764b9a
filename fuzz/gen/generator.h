#pragma once

// The generator of valid programs, shared by GenerateModel and the invalid planter
// (invalid_kinds.cc), which builds on a valid program with the same primitives.
// Internal to fuzz/gen. Each group of members below is defined in the file of the
// construct it generates; the weights that choose among them are in weights.h.

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>

#include "fuzz/gen/choices.h"
#include "fuzz/gen/model.h"

namespace cds::fuzz::detail {

using ir::DataType;

bool SigEqual(const TensorSig& a, const TensorSig& b);
// INDEX and INT64, the types of integer literals and world sizes: PyPTO's operators
// take operands of one dtype category, and a cast is no form of the text format.
inline bool IsIndexLike(DataType dt) { return dt == DataType::kIndex || dt == DataType::kInt64; }
TensorSig Sig(std::initializer_list<int64_t> dims, DataType dt);

class Generator {
 public:
  Generator(Choices& c, const GenOptions& o, ProgramModel& m) : c_(c), opt_(o), m_(m) {}

  // The candidates a statement draws from: a few values, so kept on the stack
  // (the generator asks for such a list several times per statement).
  using ValueList = absl::InlinedVector<int, 16>;

  // What one Step emits; Step draws one by the weights of weights.h.
  enum class Action : uint8_t {
    kAlloc,
    kDispatch,
    kView,
    kAlias,
    kRebind,
    kFor,
    kWhile,
    kIf,
    kCollective,
    kTensor,
    kScalar,
    kCollision,
    kScope,
    kOpaque,
    kUnpack,
    kSubscriptRead,
    kSubscriptAssign,
    kTuple,
    kConstant,
    kCount
  };
  static constexpr size_t kNumActions = static_cast<size_t>(Action::kCount);

  // --- whole program: functions, hosts, the statement loop (generator_program.cc)
  void Run();
  std::string Fresh(const std::string& prefix);
  int NewValue(std::string name, ValueKind kind);
  StmtModel NewStmt(StmtKind kind);
  void Push(StmtModel s);
  void Define(int v);
  void EnterHost(int h);
  int Step(int remaining, int depth);
  std::array<int, kNumActions> ActionWeights(int remaining, int depth) const;
  int Perform(Action action, int remaining, int depth);
  void GenBlock(int budget, int depth);
  void Finalize();
  void GenHost(int h, int budget, bool first);
  void DrawFeatures();
  TensorSig RandomPaletteSig();
  void MakeFunctions();

  bool On(Feature f) const { return m_.enabled.test(static_cast<size_t>(f)); }
  bool Usable(int v) const { return v < static_cast<int>(live_.size()) && live_[v]; }
  bool InLoop() const { return !loop_stack_.empty() || in_while_; }
  // The chip orchestrators, fixed once MakeFunctions has made the functions.
  const std::vector<int>& ChipTargets() const { return chip_targets_; }
  template <typename P>
  ValueList UsableWhere(P pred) const {
    ValueList out;
    for (const auto& scope : scopes_) {
      for (int v : scope) {
        if (Usable(v) && pred(m_.values[v])) out.push_back(v);
      }
    }
    return out;
  }

  // --- allocs, windows and the views collectives take (generator_allocs.cc)
  int EmitWorldSizeTemp();
  int UsableWorldSizeTemp();
  int EmitAlloc(std::optional<SizeForm> force_form = std::nullopt, bool dump_form = false,
                std::string logical = {}, std::string var_name = {});
  TensorSig RandomViewSig(int alloc);
  TensorSig SignalSig();
  int EmitView(int alloc, std::optional<TensorSig> sig = std::nullopt, int rebind = -1);
  int PickAlloc(bool prefer_int32);
  int SignalArg();
  int ViewOfSig(const TensorSig& sig, int other);
  std::vector<int> CopyCollectiveArgs(CollKind kind);
  int DataArg(bool two_d, std::initializer_list<DataType> dtypes = {}, bool constant_dims = false);
  void GenAllocWithViews();
  void GenRebind();
  void GenAlias();
  ValueList RebindCandidates() const;
  // `signature_shaped`: the value leaves the host (a return), so the signature must
  // name its shape: constant dims only.
  int AllReduceDataArg(bool signature_shaped = false) {
    return DataArg(false, {DataType::kFP32, DataType::kFP16}, signature_shaped);
  }
  // A usable view satisfying `pred`, or a new one of `sig`.
  template <typename P>
  int ViewArg(P pred, const TensorSig& sig, bool prefer_int32) {
    ValueList cands =
        UsableWhere([&](const ValueModel& v) { return v.kind == ValueKind::kView && pred(v); });
    if (!cands.empty() && !c_.Chance(1, 4)) return c_.Pick(cands);
    return EmitView(PickAlloc(prefer_int32), sig);
  }

  // --- dispatches and their device= forms (generator_dispatches.cc)
  std::vector<int> DispatchArgs(int callee, int alloc, bool reuse);
  int EmitDispatch(int callee, std::vector<int> args, DeviceForm form, int64_t constant,
                   int device_var, int loop, bool bind_result);
  void GenDispatch();
  void PatchDispatch(int alloc);

  // --- loops, scopes, while and if (generator_control.cc)
  SExpr Condition();
  int NewLoop(LoopForm form, int64_t start, int64_t stop, int64_t step, int bound_var);
  std::vector<StmtModel>* OpenBlock(std::vector<StmtModel>* body);
  void CloseBlock(std::vector<StmtModel>* saved);
  int GenFor(int remaining, int depth);
  void AddIterArgs(int loop);
  void EmitYield(int loop);
  int FillEmptyLoop(int loop);
  int GenScope(int remaining, int depth);
  int GenWhileOrIf(bool is_while, int remaining, int depth);
  // A for statement whose body `fill` generates; returns the statement's budget use.
  template <typename F>
  void EmitFor(int loop, F&& fill) {
    StmtModel s = NewStmt(StmtKind::kFor);
    s.ref = loop;
    std::vector<StmtModel>* saved = OpenBlock(&s.body);
    Define(m_.loops[loop].var);
    for (int ia : std::vector<int>(m_.loops[loop].iter_args)) Define(ia);
    loop_stack_.push_back(loop);
    fill();
    loop_stack_.pop_back();
    CloseBlock(saved);
    Push(std::move(s));
  }

  // --- collectives, in hosts, chip orchestrators and kernels (generator_collectives.cc)
  int NewCollective(CollKind kind, std::vector<int> args);
  bool CanRebind(int v) const;
  void EmitCollectiveStmt(int coll, int in_place_src);
  void GenCollective();
  FunctionModel MakeCollectiveKernel(std::string name);
  void AddChipCollectives(FunctionModel& f);

  // --- noise the pass must see through: subscripts, tensors, tuples, scalars
  // (generator_noise.cc)
  SExpr ViewSubscript(int view, bool element, const std::vector<int64_t>* lens = nullptr);
  int PickView();
  void GenSubscriptRead();
  void GenSubscriptAssign();
  void GenUnpack();
  void GenNoiseTensor();
  SExpr TupleExpr(int depth);
  bool MentionsBodyVariable(const SExpr& e) const;
  void GenTuple();
  void GenNoiseScalar();
  void GenNameCollision();
  void GenOpaqueCall();
  void GenConstant();

  Choices& c_;
  const GenOptions& opt_;
  ProgramModel& m_;
  absl::flat_hash_map<std::string, int> counters_;
  std::vector<TensorSig> palette_;
  int host_ = -1;
  std::vector<std::vector<int>> scopes_;
  absl::flat_hash_map<std::string, int> latest_;
  std::vector<char> live_;
  std::vector<int> windows_;  // alloc -> pld.window statements so far
  std::vector<int> host_allocs_;
  std::vector<int> chip_targets_;
  absl::flat_hash_set<int> shaped_by_body_;  // tuple values whose type names a body variable
  std::vector<int> loop_stack_;
  bool in_while_ = false;
  bool collision_done_ = false;
  int manual_scopes_ = 0;  // open `with pl.manual_scope():` blocks
  int alloc_cap_ = 1;
  std::vector<StmtModel>* cur_ = nullptr;
};

}  // namespace cds::fuzz::detail
