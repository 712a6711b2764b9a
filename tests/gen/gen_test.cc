#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/gen/compare.h"
#include "fuzz/gen/generate.h"
#include "fuzz/gen/rc_gen.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "tests/gen/wellformed.h"
#ifdef CDS_HAVE_PARSER
#include "ir/parser.h"
#endif

namespace cds::fuzz {
namespace {

GenOptions Sized(int size) {
  GenOptions o;
  o.size = size;
  o.fixed_size = true;
  return o;
}

std::vector<InvalidKind> AllInvalidKinds() {
  std::vector<InvalidKind> out;
  for (size_t k = 0; k < kNumInvalidKinds; ++k) out.push_back(static_cast<InvalidKind>(k));
  return out;
}

std::string LineOf(const std::string& text, int line) {
  std::istringstream in(text);
  std::string s;
  for (int i = 1; std::getline(in, s); ++i) {
    if (i == line) return s;
  }
  return {};
}

// Internal consistency of an expectation (independent of any pass).
std::vector<std::string> ConsistencyProblems(const GeneratedProgram& p) {
  std::vector<std::string> out = p.expect.problems;
  const ProgramModel& m = p.model;
  std::map<std::string, size_t> synthesized;
  for (const auto& s : p.expect.signals) synthesized[s.function]++;
  if (p.expect.functions.size() != m.HostFunctions().size())
    out.push_back("not one entry per host orchestrator");
  for (size_t i = 1; i < p.expect.functions.size(); ++i) {
    if (!(p.expect.functions[i - 1].name < p.expect.functions[i].name))
      out.push_back("hosts not in name order");
  }
  for (const FunctionExpect& f : p.expect.functions) {
    const int h = m.FindFunction(f.name);
    size_t allocs = 0;
    for (const AllocModel& a : m.allocs) allocs += a.function == h;
    if (f.allocs.size() != allocs + synthesized[f.name]) {
      out.push_back(fmt::format("{}: {} allocs expected, model has {} + {}", f.name,
                                f.allocs.size(), allocs, synthesized[f.name]));
    }
    std::map<std::string, int> seen;
    for (size_t s = 0; s < f.scopes.size(); ++s) {
      const ScopeExpect& scope = f.scopes[s];
      if (scope.name != fmt::format("comm_d{}", s))
        out.push_back(f.name + ": scope misnamed " + scope.name);
      if (scope.slots.empty()) out.push_back(f.name + ": empty scope " + scope.name);
      if (scope.devices.Empty()) out.push_back(f.name + ": scope with no devices " + scope.name);
      for (size_t t = 0; t < s; ++t) {
        if (f.scopes[t].devices == scope.devices)
          out.push_back(f.name + ": two scopes with equal devices");
      }
      for (const auto& slot : scope.slots) seen[slot]++;
    }
    int last_scope = -1;
    for (const AllocExpect& a : f.allocs) {
      if (seen[a.name] != 1)
        out.push_back(fmt::format("{}: alloc {} in {} scopes", f.name, a.name, seen[a.name]));
      if (a.scope < 0 || a.scope >= static_cast<int>(f.scopes.size())) {
        out.push_back(f.name + ": alloc without scope " + a.name);
        continue;
      }
      if (!(f.scopes[a.scope].devices == a.coverage.ToDeviceSet()))
        out.push_back(f.name + ": scope devices != coverage of " + a.name);
      // Scopes open in source order of their first alloc.
      if (a.scope > last_scope + 1)
        out.push_back(f.name + ": scope order does not follow source order");
      last_scope = std::max(last_scope, a.scope);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Determinism

TEST(GenDeterminism, SameSeedSameProgram) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    GeneratedProgram a = Generate(seed, Sized(30));
    GeneratedProgram b = Generate(seed, Sized(30));
    ASSERT_EQ(a.text, b.text) << "seed " << seed;
    EXPECT_TRUE(ir::StructuralEqual(a.ir, b.ir)) << "seed " << seed;
    EXPECT_EQ(ir::StructuralHash(a.ir), ir::StructuralHash(b.ir)) << "seed " << seed;
    EXPECT_EQ(ToJson(a.expect), ToJson(b.expect)) << "seed " << seed;
  }
}

TEST(GenDeterminism, SeedsGiveDifferentPrograms) {
  std::set<std::string> texts;
  for (uint64_t seed = 1; seed <= 30; ++seed) texts.insert(Generate(seed, Sized(20)).text);
  EXPECT_GE(texts.size(), 28u);
}

TEST(GenDeterminism, PrngRunEqualsReplayedDraws) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::vector<std::optional<InvalidKind>> kinds = {std::nullopt};
    kinds.push_back(static_cast<InvalidKind>(seed % kNumInvalidKinds));
    for (const auto& kind : kinds) {
      PrngChoices prng(seed);
      RecordingChoices rec(prng);
      GeneratedProgram a = GenerateFromChoices(rec, Sized(25), kind);
      GeneratedProgram b = GenerateFromDraws(rec.draws(), Sized(25), kind);
      ASSERT_EQ(a.text, b.text) << "seed " << seed;
      EXPECT_TRUE(ir::StructuralEqual(a.ir, b.ir)) << "seed " << seed;
    }
  }
}

TEST(GenDeterminism, ByteStream) {
  std::vector<uint8_t> bytes(512);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  GeneratedProgram a = GenerateFromBytes(bytes.data(), bytes.size());
  GeneratedProgram b = GenerateFromBytes(bytes.data(), bytes.size());
  EXPECT_EQ(a.text, b.text);
  // Exhausted input means "the simplest choice" everywhere: still a valid program.
  GeneratedProgram empty = GenerateFromBytes(nullptr, 0);
  EXPECT_TRUE(empty.valid());
  EXPECT_TRUE(ConsistencyProblems(empty).empty()) << Describe(empty);
  EXPECT_FALSE(empty.model.allocs.empty());
  for (size_t len = 0; len < 300; len += 7) {
    GeneratedProgram p = GenerateFromBytes(bytes.data(), len, {}, true);
    if (p.valid()) {
      EXPECT_TRUE(ConsistencyProblems(p).empty()) << Describe(p);
    } else {
      EXPECT_GT(p.invalid->line, 0);
    }
  }
}

// ---------------------------------------------------------------------------
// Valid programs

TEST(GenValid, RenderIRIsWellFormed) {
  for (int size : {6, 24, 80}) {
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      GeneratedProgram p = Generate(seed, Sized(size));
      std::vector<std::string> problems = testing::WellFormedProblems(p.ir);
      ASSERT_TRUE(problems.empty())
          << fmt::format("seed {} size {}: {}\n", seed, size, fmt::join(problems, "\n")) << p.text;
    }
  }
}

// The checker itself: a loop variable used after its loop, an iter arg used after
// its loop, and a value used in its own definition are all reported.
TEST(GenValid, WellFormedReportsUsesOutsideTheirBlock) {
  using namespace ir;
  auto host = [](std::vector<StmtPtr> body) {
    auto f = MakeNode<Function>("h", NodeList<VarPtr>{}, NodeList<ParamDirection>{},
                                NodeList<TypePtr>{}, Seq(std::move(body)), FunctionType::kOpaque,
                                Level::kHost, Role::kOrchestrator);
    return MakeNode<Program>("P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{f});
  };
  VarPtr r = MakeVar("r", ScalarTy(DataType::kIndex));
  VarPtr k = MakeVar("k", ScalarTy(DataType::kInt64));
  VarPtr res = MakeVar("res", ScalarTy(DataType::kInt64));
  auto acc = MakeNode<IterArg>("acc", ScalarTy(DataType::kInt64), Int(0));
  auto loop_with_acc = [&](std::vector<StmtPtr> after) {
    auto loop =
        MakeNode<ForStmt>(r, Int(0), Int(4), Int(1),
                          Seq({Assign(k, Add(r, acc)),
                               StmtPtr(MakeNode<YieldStmt>(NodeList<ExprPtr>{Add(acc, Int(1))}))}));
    loop->iter_args = {IterArgPtr(acc)};
    loop->return_vars = {res};
    std::vector<StmtPtr> body{StmtPtr(loop)};
    body.insert(body.end(), after.begin(), after.end());
    body.push_back(Return({Int(0)}));
    return host(std::move(body));
  };
  EXPECT_TRUE(testing::WellFormedProblems(
                  loop_with_acc({Assign(MakeVar("u", ScalarTy(DataType::kInt64)), res)}))
                  .empty());
  EXPECT_FALSE(testing::WellFormedProblems(
                   loop_with_acc({Assign(MakeVar("u", ScalarTy(DataType::kIndex)), r)}))
                   .empty());
  EXPECT_FALSE(testing::WellFormedProblems(
                   loop_with_acc({Assign(MakeVar("u", ScalarTy(DataType::kInt64)), acc)}))
                   .empty());
  EXPECT_FALSE(testing::WellFormedProblems(
                   loop_with_acc({Assign(MakeVar("u", ScalarTy(DataType::kInt64)), k)}))
                   .empty());
  VarPtr x = MakeVar("x", ScalarTy(DataType::kInt64));
  EXPECT_FALSE(
      testing::WellFormedProblems(host({Assign(x, Add(x, Int(1))), Return({Int(0)})})).empty());
}

TEST(GenValid, ExpectationIsConsistent) {
  for (int size : {6, 24, 80}) {
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      GeneratedProgram p = Generate(seed, Sized(size));
      std::vector<std::string> problems = ConsistencyProblems(p);
      ASSERT_TRUE(problems.empty())
          << fmt::format("seed {} size {}: {}\n", seed, size, fmt::join(problems, "\n"))
          << Describe(p);
    }
  }
}

TEST(GenValid, LinesPointAtStatements) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    GeneratedProgram p = Generate(seed, Sized(30));
    for (const AllocModel& a : p.model.allocs) {
      const std::string line = LineOf(p.text, p.model.stmt_lines[a.stmt]);
      EXPECT_NE(line.find(p.model.values[a.var].name + " = "), std::string::npos) << line;
      EXPECT_NE(line.find("alloc_window_buffer"), std::string::npos) << line;
    }
    for (const DispatchModel& d : p.model.dispatches) {
      const std::string line = LineOf(p.text, p.model.stmt_lines[d.stmt]);
      EXPECT_NE(line.find("self." + p.model.functions[d.callee].name + "("), std::string::npos)
          << line;
    }
    for (const FunctionModel& f : p.model.functions) {
      EXPECT_NE(LineOf(p.text, f.line).find("def " + f.name + "("), std::string::npos);
    }
  }
}

// Swarm testing only helps if every feature shows up often enough.
void ExpectEveryFeatureInFivePercent(const GenOptions& options) {
  const int n = 400;
  std::vector<int> used(kNumFeatures, 0);
  for (int seed = 1; seed <= n; ++seed) {
    FeatureSet u = Generate(static_cast<uint64_t>(seed), options).model.UsedFeatures();
    EXPECT_TRUE((u & ~options.features).none())
        << "seed " << seed << " uses a feature it was not given";
    for (size_t f = 0; f < kNumFeatures; ++f) used[f] += u.test(f);
  }
  for (size_t f = 0; f < kNumFeatures; ++f) {
    if (!options.features.test(f)) continue;
    EXPECT_GE(used[f] * 20, n) << FeatureName(static_cast<Feature>(f)) << ": " << used[f] << "/"
                               << n;
  }
}

TEST(GenValid, EveryFeatureAppearsInFivePercent) { ExpectEveryFeatureInFivePercent(Sized(24)); }

// Tuple values and collectives in kernels are drawn by default: the model, the IR
// and the expectation agree, and the IR is well formed (the registry deduces a
// kernel collective's type from its local input).
TEST(GenValid, TupleValuesAndKernelCollectivesByDefault) {
  const GenOptions all = Sized(24);
  EXPECT_TRUE(all.features.test(static_cast<size_t>(Feature::kTupleValue)));
  EXPECT_TRUE(all.features.test(static_cast<size_t>(Feature::kKernelCollective)));
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    GeneratedProgram p = Generate(seed, all);
    EXPECT_TRUE(ConsistencyProblems(p).empty()) << Describe(p);
    const std::vector<std::string> problems = testing::WellFormedProblems(p.ir);
    EXPECT_TRUE(problems.empty()) << fmt::format("seed {}: {}\n", seed, fmt::join(problems, "\n"))
                                  << p.text;
  }
  // nested_allreduce then also plants `tupN = (pld.tensor.allreduce(...),)`.
  int in_tuple = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    GeneratedProgram p = Generate(seed, all, InvalidKind::kNestedAllReduce);
    const std::string line = LineOf(p.text, p.invalid->line);
    if (line.find(" = (pld.tensor.allreduce(") == std::string::npos) continue;
    ++in_tuple;
    EXPECT_NE(line.find("),)"), std::string::npos) << line;
    EXPECT_EQ(p.invalid->message_any_of,
              std::vector<std::string>{"cannot be nested inside another expression"});
    EXPECT_EQ(p.invalid->text_stage, Stage::kSynthesize);
  }
  EXPECT_GT(in_tuple, 3);
}

// What the two features write, line by line: tuple values of every length and
// nesting, a tuple argument, a tuple returned; collectives in an InCore kernel
// with a local input and the window as their destination.
TEST(GenValid, TupleValuesAndKernelCollectivesText) {
  const GenOptions all = Sized(30);
  std::map<std::string, int> seen;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const GeneratedProgram p = Generate(seed, all);
    std::istringstream in(p.text);
    std::string function, line;
    while (std::getline(in, line)) {
      if (line.find("    def ") == 0) function = line;
      const bool kernel = function.find("def kernel_xchg(") != std::string::npos ||
                          function.find("def kernel_sync(") != std::string::npos;
      if (line.find(" = ()") != std::string::npos) seen["empty tuple"]++;
      if (line.find(",)") != std::string::npos && line.find(" = (") != std::string::npos)
        seen["one-tuple"]++;
      if (line.find(" = ((") != std::string::npos || line.find(", (") != std::string::npos)
        seen["nested tuple"]++;
      if (line.find("pl.touch(") != std::string::npos &&
          line.find("(", line.find("pl.touch(") + 9) != std::string::npos)
        seen["tuple argument"]++;
      if (line.find("return tup") != std::string::npos) seen["tuple returned"]++;
      if (kernel &&
          line.find("data = pld.tensor.all_to_all(inp, data, signal)") != std::string::npos)
        seen["a2a"]++;
      if (kernel &&
          line.find("data = pld.tensor.all_to_all_v(inp, data, signal, counts, recv_counts)") !=
              std::string::npos)
        seen["a2av"]++;
      if (kernel && line.find("signal = pld.tensor.barrier(signal)") != std::string::npos)
        seen["barrier"]++;
      if (kernel && line.find("inp: pl.Tensor[[") != std::string::npos &&
          line.find("data: pl.InOut[pld.DistributedTensor[[") != std::string::npos)
        seen["kernel signature"]++;
    }
  }
  for (const char* form : {"empty tuple", "one-tuple", "nested tuple", "tuple argument",
                           "tuple returned", "a2a", "a2av", "barrier", "kernel signature"}) {
    EXPECT_GT(seen[form], 0) << form;
  }
}

// size_symbolic writes a shape whose first dim is a world-size temp, as PyPTO's
// programs size a buffer per device.
TEST(GenValid, SymbolicShapeSizeIsWritten) {
  GenOptions o = Sized(24);
  o.features.reset();
  o.features.set(static_cast<size_t>(Feature::kSizeShape));
  o.features.set(static_cast<size_t>(Feature::kSizeSymbolic));
  o.swarm = false;
  const std::regex alloc(R"(pld\.alloc_window_buffer\(\[(n[0-9]+), (16|64)\], dtype=pl\.)");
  size_t symbolic = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    GeneratedProgram p = Generate(seed, o);
    EXPECT_TRUE(ConsistencyProblems(p).empty()) << Describe(p);
    for (auto it = std::sregex_iterator(p.text.begin(), p.text.end(), alloc);
         it != std::sregex_iterator(); ++it) {
      EXPECT_NE(p.text.find((*it)[1].str() + " = pld.world_size()"), std::string::npos) << p.text;
      ++symbolic;
    }
    EXPECT_EQ(p.model.UsedFeatures().test(static_cast<size_t>(Feature::kSizeSymbolic)),
              p.text.find("alloc_window_buffer([n") != std::string::npos)
        << p.text;
  }
  EXPECT_GT(symbolic, 5u);
}

TEST(GenValid, FeatureRestrictionIsHonoured) {
  GenOptions o = Sized(40);
  o.features.reset();
  o.features.set(static_cast<size_t>(Feature::kLoopWorldSize));
  o.swarm = false;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    GeneratedProgram p = Generate(seed, o);
    EXPECT_TRUE(p.model.collectives.empty());
    EXPECT_TRUE(ConsistencyProblems(p).empty()) << Describe(p);
    for (const LoopModel& l : p.model.loops) {
      EXPECT_TRUE(l.form == LoopForm::kWorldSize || l.form == LoopForm::kWorldSizeExplicit);
    }
  }
}

// Campaigns against PyPTO switch host_by_type off (PyPTO's parser takes type=Orchestration as
// chip level): every host is then spelled with its role, and nothing else in the program moves.
TEST(GenValid, HostByTypeOffChangesOnlyTheHostSpelling) {
  constexpr std::string_view kByType = "type=pl.FunctionType.Orchestration, level=pl.Level.HOST";
  constexpr std::string_view kByRole = "level=pl.Level.HOST, role=pl.Role.Orchestrator";
  GenOptions off = Sized(24);
  off.features.reset(static_cast<size_t>(Feature::kHostByType));
  int respelled_hosts = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const GeneratedProgram with = Generate(seed, Sized(24));
    const GeneratedProgram without = Generate(seed, off);
    std::string respelled = with.text;
    for (size_t at; (at = respelled.find(kByType)) != std::string::npos; ++respelled_hosts) {
      respelled.replace(at, kByType.size(), kByRole);
    }
    EXPECT_EQ(without.text, respelled) << "seed " << seed;
    EXPECT_FALSE(without.model.UsedFeatures().test(static_cast<size_t>(Feature::kHostByType)));
    EXPECT_TRUE(ConsistencyProblems(without).empty()) << Describe(without);
  }
  EXPECT_GT(respelled_hosts, 0);
}

RC_GTEST_PROP(GenProp, ValidProgramsAreConsistentAndWellFormed, ()) {
  const GeneratedProgram p = *rcgen::ValidProgram();
  const std::vector<std::string> problems = ConsistencyProblems(p);
  RC_ASSERT(problems.empty());
  RC_ASSERT(testing::WellFormedProblems(p.ir).empty());
}

// ---------------------------------------------------------------------------
// The expectation's own rules

std::vector<int64_t> IdsOf(const Coverage& c) { return c.ToDeviceSet().ids; }

TEST(GenExpect, CoverageAllAbsorbsAndSubsetsUnite) {
  Coverage c = Coverage::Interval(2, 4);
  c.Absorb(Coverage::Device(7));
  c.Absorb(Coverage::Interval(3, 6));
  EXPECT_FALSE(c.all());
  EXPECT_EQ(IdsOf(c), (std::vector<int64_t>{2, 3, 4, 5, 7}));
  // Touching intervals coalesce, so a set has one spelling whatever its history.
  Coverage d = Coverage::Device(7);
  d.Absorb(Coverage::Interval(2, 6));
  EXPECT_EQ(c, d);

  Coverage all = Coverage::All();
  all.Absorb(Coverage::Interval(0, 3));
  EXPECT_TRUE(all.all());
  Coverage sub = Coverage::Interval(0, 3);
  sub.Absorb(Coverage::All());
  EXPECT_TRUE(sub.all());
  EXPECT_TRUE(sub.ToDeviceSet().ids.empty());
  EXPECT_EQ(sub.Text(), "all");
  EXPECT_EQ(d.Text(), "[2, 3, 4, 5, 7]");

  // The empty subset is a subset: absorbing it changes nothing, and it is not ALL.
  Coverage empty = Coverage::Interval(4, 4);
  EXPECT_TRUE(empty.Empty());
  EXPECT_FALSE(empty.all());
  Coverage e2 = Coverage::Device(1);
  e2.Absorb(empty);
  EXPECT_EQ(IdsOf(e2), (std::vector<int64_t>{1}));
}

// PyPTO's byte widths of the dtypes the generator uses, written out here.
int64_t Width(ir::DataType dt) {
  switch (dt) {
    case ir::DataType::kFP16:
    case ir::DataType::kBF16:
      return 2;
    case ir::DataType::kFP32:
    case ir::DataType::kInt32:
      return 4;
    default:
      ADD_FAILURE() << "unexpected dtype";
      return 0;
  }
}

TEST(GenExpect, AllocSizesFollowTheirForms) {
  size_t shape = 0, symbolic = 0, world = 0, synthesized = 0;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    GeneratedProgram p = Generate(seed, Sized(24));
    const ProgramModel& m = p.model;
    for (const FunctionExpect& f : p.expect.functions) {
      for (const AllocExpect& a : f.allocs) {
        if (a.synthesized) {
          // world_size * core_num * 4 bytes, core_num 1 unless written.
          int64_t core_num = 1;
          for (const SynthesizedSignal& sig : p.expect.signals) {
            if (sig.buffer != a.name) continue;
            const StmtModel* st = m.FindStmt(sig.stmt);
            ASSERT_NE(st, nullptr);
            if (m.collectives[st->ref].core_num > 0) core_num = m.collectives[st->ref].core_num;
          }
          EXPECT_EQ(a.size, (SizeExpect{0, 4 * core_num})) << a.name;
          ++synthesized;
          continue;
        }
        const AllocModel* model = nullptr;
        for (const AllocModel& am : m.allocs) {
          if (am.name == a.name) model = &am;
        }
        ASSERT_NE(model, nullptr) << a.name;
        if (model->size_form == SizeForm::kShape) {
          // The constant dims multiply; a world-size dim (size_symbolic: an
          // `n = pld.world_size()` temp, or `m = n * K`) makes the product a size
          // per device count, K times as large for the product.
          int64_t n = 1;
          bool per_world_size = false;
          for (const Dim& d : model->shape) {
            if (d.var >= 0) {
              per_world_size = true;
              for (int h : m.HostFunctions()) {
                ForEachStmt(m.functions[h].body, [&](const StmtModel& st) {
                  if (st.def == d.var && st.expr.kind == SExpr::Kind::kBinary)
                    n *= st.expr.operands[1].constant;
                });
              }
            } else {
              n *= d.constant;
            }
          }
          const int64_t bytes = n * Width(model->dtype);
          EXPECT_EQ(a.size, per_world_size ? (SizeExpect{0, bytes}) : (SizeExpect{bytes, 0}))
              << a.name;
          ++(per_world_size ? symbolic : shape);
        } else if (model->size_form == SizeForm::kWorldSize) {
          // `n * K` with n = pld.world_size().
          EXPECT_EQ(a.size, (SizeExpect{0, model->size.operands[1].constant})) << a.name;
          ++world;
        }
      }
    }
  }
  EXPECT_GT(shape, 10u);
  EXPECT_GT(symbolic, 5u);
  EXPECT_GT(world, 10u);
  EXPECT_GT(synthesized, 10u);
}

// A hand-made output: `buf = alloc(n * 16)` with `n = world_size()`, wrapped in
// comm_d0 over devices [0, 1].
ir::ProgramPtr OneScopeProgram(std::string scope_name, std::vector<int64_t> ids, int64_t factor) {
  using namespace ir;
  VarPtr n = MakeVar("n", ScalarTy(DataType::kIndex));
  VarPtr buf = MakeVar("buf", PtrType::Get());
  ExprPtr size = Mul(n, Int(factor));
  StmtPtr alloc =
      Assign(buf, MakeOpCall(ops::kAllocWindowBuffer, {size}, {{"name", std::string("buf")}}));
  DeviceSet devices;
  devices.ids = std::move(ids);
  auto wb = MakeNode<WindowBuffer>(buf, size, false, false);
  StmtPtr scope = MakeNode<CommDomainScopeStmt>(
      std::move(scope_name), std::move(devices), NodeList<WindowBufferPtr>{WindowBufferPtr(wb)},
      KwargList{}, Seq({Assign(n, MakeOpCall(ops::kWorldSize, {})), alloc, Return({Int(0)})}));
  auto host = MakeNode<Function>("host_orch", NodeList<VarPtr>{}, NodeList<ParamDirection>{},
                                 NodeList<TypePtr>{}, Seq({scope}), FunctionType::kOpaque,
                                 Level::kHost, Role::kOrchestrator);
  return MakeNode<Program>("P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{host});
}

TEST(GenExpect, ModelMismatchReadsScopesDevicesAndSizes) {
  Expectation e;
  FunctionExpect f;
  f.name = "host_orch";
  ScopeExpect scope;
  scope.name = "comm_d0";
  scope.devices.ids = {0, 1};
  scope.slots = {"buf"};
  scope.slot_vars = {"buf"};
  scope.sizes = {SizeExpect{0, 16}};
  f.scopes.push_back(scope);
  e.functions.push_back(f);
  EXPECT_EQ(ModelMismatch(e, *OneScopeProgram("comm_d0", {0, 1}, 16)), "");
  EXPECT_NE(ModelMismatch(e, *OneScopeProgram("comm_d1", {0, 1}, 16)), "");
  EXPECT_NE(ModelMismatch(e, *OneScopeProgram("comm_d0", {1, 0}, 16)), "");
  EXPECT_NE(ModelMismatch(e, *OneScopeProgram("comm_d0", {0, 1, 1}, 16)), "");
  EXPECT_NE(ModelMismatch(e, *OneScopeProgram("comm_d0", {0, 1}, 4)), "");
  // A scope in a function the model did not make a host is reported too.
  Expectation none;
  EXPECT_NE(ModelMismatch(none, *OneScopeProgram("comm_d0", {0, 1}, 16)), "");
}

// ---------------------------------------------------------------------------
// Invalid programs

// A token the planted line must hold, per kind.
std::vector<std::string> PlantedTokens(const GeneratedProgram& p) {
  switch (p.invalid->kind) {
    case InvalidKind::kDeadAlloc:
    case InvalidKind::kUnconsumedAlloc:
    case InvalidKind::kEmptyCoverage:
    case InvalidKind::kOnlyUnplacedDispatch:
      return {"pld.alloc_window_buffer(", p.invalid->message_any_of[0] + " = "};
    case InvalidKind::kDuplicateName:
      return {"pl._dump.alloc_window_buffer(", "name=\""};
    case InvalidKind::kDeviceStep:
    case InvalidKind::kDeviceNotLoopVar:
    case InvalidKind::kDeviceExpr:
    case InvalidKind::kDeviceNegative:
    case InvalidKind::kDeviceWorldSizeStart:
    case InvalidKind::kDeviceLoopNonconstBounds:
    case InvalidKind::kDeviceRangeNegativeStart:
    case InvalidKind::kDeviceRangeTooLarge:
      return {"self.", "device="};
    case InvalidKind::kBarrierUncovered:
      return {"pld.tensor.barrier("};
    case InvalidKind::kAllToAllVInFor:
    case InvalidKind::kAllToAllVInWhile:
      return {"pld.tensor.all_to_all_v("};
    case InvalidKind::kNestedAllReduce:
      return {"(pld.tensor.allreduce("};
    case InvalidKind::kCarriedView:
      return {"for ", "init_values=("};
    // An allreduce, or a broadcast where the data is not FP16 or FP32; the message
    // names the op.
    case InvalidKind::kCollectiveNotView:
    case InvalidKind::kNoTransitiveCoverage:
      return {"pld.tensor." + p.invalid->message_any_of[0] + "("};
    default:
      return {"pld.tensor.allreduce("};
  }
}

TEST(GenInvalid, PlantedLineHoldsTheConstruct) {
  for (InvalidKind kind : AllInvalidKinds()) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      GeneratedProgram p = Generate(seed, Sized(20), kind);
      ASSERT_TRUE(p.invalid);
      ASSERT_GT(p.invalid->line, 0);
      const std::string line = LineOf(p.text, p.invalid->line);
      for (const std::string& tok : PlantedTokens(p)) {
        EXPECT_NE(line.find(tok), std::string::npos)
            << InvalidKindName(kind) << " seed " << seed << ": line " << p.invalid->line << " '"
            << line << "' lacks '" << tok << "'";
      }
      EXPECT_FALSE(p.invalid->message_any_of.empty());
      EXPECT_NE(p.model.FindFunction(p.invalid->function), -1);
    }
  }
}

TEST(GenInvalid, ExpectationSeesTheDefect) {
  for (InvalidKind kind : AllInvalidKinds()) {
    for (uint64_t seed = 1; seed <= 25; ++seed) {
      GeneratedProgram p = Generate(seed, Sized(20), kind);
      EXPECT_FALSE(p.expect.problems.empty()) << InvalidKindName(kind) << " seed " << seed << "\n"
                                              << p.text;
    }
  }
}

TEST(GenInvalid, OnlyTheParseStageDefectsEscapeTheRegistry) {
  for (InvalidKind kind : AllInvalidKinds()) {
    GeneratedProgram p = Generate(7, Sized(20), kind);
    std::vector<std::string> problems = testing::WellFormedProblems(p.ir);
    if (p.invalid->text_stage == Stage::kParse) {
      EXPECT_FALSE(problems.empty());
    } else {
      EXPECT_TRUE(problems.empty())
          << InvalidKindName(kind) << ": " << fmt::format("{}", fmt::join(problems, "\n"));
    }
  }
}

#ifdef CDS_HAVE_PARSER
// ---------------------------------------------------------------------------
// The parser against the independent renderers

void ExpectParsesToRenderIR(const GeneratedProgram& p, const std::string& what) {
  ir::ProgramPtr parsed;
  try {
    parsed = ir::ParseProgram(p.text, {.filename = "gen.pyir"});
  } catch (const ValueError& e) {
    FAIL() << what << ": parse error: " << e.Format() << "\n" << p.text;
  }
  ir::EqualityResult r = ir::StructuralEqualWhere(parsed, p.ir);
  EXPECT_TRUE(r.equal) << what << ": parse(RenderText) != RenderIR at " << r.path << ": "
                       << r.reason << "\n"
                       << p.text;
  if (r.equal) EXPECT_EQ(ir::StructuralHash(parsed), ir::StructuralHash(p.ir)) << what;
}

TEST(GenParser, ParseOfTextEqualsRenderIR) {
  for (int size : {6, 24, 60}) {
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      ExpectParsesToRenderIR(Generate(seed, Sized(size)),
                             fmt::format("seed {} size {}", seed, size));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(GenParser, InvalidProgramsParseExceptTheParseStageOnes) {
  for (InvalidKind kind : AllInvalidKinds()) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      GeneratedProgram p = Generate(seed, Sized(16), kind);
      const std::string what = fmt::format("{} seed {}", InvalidKindName(kind), seed);
      if (p.invalid->text_stage != Stage::kParse) {
        ExpectParsesToRenderIR(p, what);
        continue;
      }
      try {
        ir::ParseProgram(p.text);
        ADD_FAILURE() << what << ": parsed a program the registry should reject\n" << p.text;
      } catch (const ValueError& e) {
        EXPECT_EQ(e.span().line, p.invalid->line) << what << ": " << e.Format();
        EXPECT_NE(std::string(e.what()).find("allreduce"), std::string::npos) << e.what();
      }
    }
  }
}

RC_GTEST_PROP(GenProp, ParseOfTextEqualsRenderIR, ()) {
  const GeneratedProgram p = *rcgen::ValidProgram();
  ir::ProgramPtr parsed = ir::ParseProgram(p.text);
  const ir::EqualityResult r = ir::StructuralEqualWhere(parsed, p.ir);
  RC_LOG() << r.path << ": " << r.reason << "\n";
  RC_ASSERT(r.equal);
}
#endif

}  // namespace
}  // namespace cds::fuzz
