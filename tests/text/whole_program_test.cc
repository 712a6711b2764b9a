// Whole PyPTO programs: every corpus/real file meets its `# EXPECT:` header (an ok
// file parses, round-trips, passes the default pipeline with verify-each and yields
// the scopes its header states; an error file fails at the line it names); and the
// IR shapes of each whole-program construct (docs/whole-programs.md).

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unordered_map>

#include <gtest/gtest.h>

#include "driver/driver.h"
#include "ir/builder.h"
#include "ir/op_registry.h"
#include "tests/text/roundtrip_util.h"
#include "verifier/orchestrators.h"

namespace cds::ir {
namespace {

using testing::RoundTrips;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> RealCorpus() {
  std::vector<std::filesystem::path> files;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(CDS_SOURCE_DIR) / "corpus/real")) {
    if (e.path().extension() == ".pyir") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The alloc name (name= kwarg) of every alloc LHS Var, in a body.
void CollectAllocNames(const StmtPtr& s, std::unordered_map<const Var*, std::string>* out) {
  if (!s) return;
  switch (s->kind()) {
    case NodeKind::kSeqStmts:
      for (const auto& c : static_cast<const SeqStmts&>(*s).stmts) CollectAllocNames(c, out);
      return;
    case NodeKind::kAssignStmt: {
      const auto& a = static_cast<const AssignStmt&>(*s);
      if (a.value->kind() != NodeKind::kCall) return;
      const auto& c = static_cast<const Call&>(*a.value);
      if (c.OpName() != ops::kAllocWindowBuffer) return;
      const AttrValue* n = FindKwarg(c.kwargs, "name");
      (*out)[a.var.get()] = n ? std::get<std::string>(*n) : a.var->name_hint;
      return;
    }
    case NodeKind::kForStmt:
      return CollectAllocNames(static_cast<const ForStmt&>(*s).body, out);
    case NodeKind::kWhileStmt:
      return CollectAllocNames(static_cast<const WhileStmt&>(*s).body, out);
    case NodeKind::kIfStmt:
      CollectAllocNames(static_cast<const IfStmt&>(*s).then_body, out);
      return CollectAllocNames(static_cast<const IfStmt&>(*s).else_body, out);
    case NodeKind::kScopeStmt:
      return CollectAllocNames(static_cast<const ScopeStmt&>(*s).body, out);
    case NodeKind::kCommDomainScopeStmt:
      return CollectAllocNames(static_cast<const CommDomainScopeStmt&>(*s).body, out);
    default:
      return;
  }
}

// "<function> comm_dK devices=<d> slots=a,b" per scope, as the corpus headers write them.
std::vector<std::string> ScopeLines(const Program& p) {
  std::vector<std::string> lines;
  for (const auto& f : p.functions) {
    if (!verify::IsHostOrchestrator(*f)) continue;
    std::unordered_map<const Var*, std::string> names;
    CollectAllocNames(f->body, &names);
    StmtPtr s = f->body;
    while (true) {
      auto stmts = Flatten(s);
      if (stmts.size() != 1 || stmts[0]->kind() != NodeKind::kCommDomainScopeStmt) break;
      const auto& c = static_cast<const CommDomainScopeStmt&>(*stmts[0]);
      std::string slots;
      for (const auto& wb : c.slots) {
        if (!slots.empty()) slots += ',';
        slots += names.count(wb->base.get()) ? names[wb->base.get()] : "?";
      }
      lines.push_back(f->name + " " + c.name_hint + " devices=" + c.devices.ToString() +
                      " slots=" + slots);
      s = c.body;
    }
  }
  return lines;
}

std::vector<std::string> ExpectedScopeLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  const std::string key = "# EXPECT-SCOPE: ";
  for (std::string l; std::getline(in, l);) {
    if (l.rfind(key, 0) == 0) lines.push_back(l.substr(key.size()));
  }
  return lines;
}

// A file's `# EXPECT:` header: `ok`, or `error LINE SUBSTRING` (the first error of
// the parse or the pipeline is at LINE and its message contains SUBSTRING).
struct Expectation {
  bool ok = false;
  int line = 0;
  std::string substring;
};

std::optional<Expectation> ReadExpectation(const std::string& text) {
  std::istringstream in(text);
  const std::string key = "# EXPECT: ";
  for (std::string l; std::getline(in, l);) {
    if (l.rfind(key, 0) != 0) continue;
    std::istringstream value(l.substr(key.size()));
    std::string kind;
    value >> kind;
    Expectation e;
    if (kind == "ok") {
      e.ok = true;
      return e;
    }
    if (kind != "error" || !(value >> e.line)) return std::nullopt;
    std::getline(value >> std::ws, e.substring);
    if (e.substring.empty()) return std::nullopt;
    return e;
  }
  return std::nullopt;
}

::testing::AssertionResult IsTheExpectedError(const ValueError& e, const Expectation& want) {
  if (e.span().line == want.line && e.message().find(want.substring) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected an error at line " << want.line << " containing '" << want.substring
         << "', got " << e.Format();
}

// Every file, taken by its header: an `ok` file parses, round-trips, passes the
// pipeline with verify-each and gets the scopes its header states, and its output
// round-trips; an `error` file fails at the line its header names, in the parser or
// in the pipeline (what parses of it must still round-trip).
TEST(TextWholeProgramCorpus, EveryRealProgramMeetsItsHeader) {
  auto files = RealCorpus();
  ASSERT_GE(files.size(), 27u);
  int ok_files = 0, parse_errors = 0, pipeline_errors = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::string text = ReadFile(path);
    const std::optional<Expectation> want = ReadExpectation(text);
    if (!want) {
      ADD_FAILURE() << "no '# EXPECT: ok' or '# EXPECT: error LINE SUBSTRING' header";
      continue;
    }
    ParseOptions opts;
    opts.filename = path.filename().string();
    ProgramPtr p;
    try {
      p = ParseProgram(text, opts);
    } catch (const ValueError& e) {
      if (want->ok) {
        ADD_FAILURE() << e.Format();
      } else {
        EXPECT_TRUE(IsTheExpectedError(e, *want));
        ++parse_errors;
      }
      continue;
    }
    EXPECT_TRUE(RoundTrips(p));
    driver::PipelineOptions po;
    po.verify_each = true;
    ProgramPtr out;
    try {
      out = driver::RunPipeline(p, po);
    } catch (const ValueError& e) {
      if (want->ok) {
        ADD_FAILURE() << "pipeline: " << e.Format();
      } else {
        EXPECT_TRUE(IsTheExpectedError(e, *want));
        ++pipeline_errors;
      }
      continue;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "pipeline: " << e.what();
      continue;
    }
    if (!want->ok) {
      ADD_FAILURE() << "expected an error at line " << want->line << ", but the pipeline succeeded";
      continue;
    }
    ++ok_files;
    EXPECT_TRUE(RoundTrips(out));
    EXPECT_EQ(ScopeLines(*out), ExpectedScopeLines(text));
  }
  std::cout << "[ corpus/real ] " << files.size() << " files: " << ok_files << " ok, "
            << parse_errors + pipeline_errors << " errors as expected (" << parse_errors
            << " in the parser, " << pipeline_errors << " in the pipeline)\n";
}

// ---------------------------------------------------------------------------
// IR shapes

ProgramPtr Parse(std::string_view text) { return ParseProgram(text, ParseOptions{}); }

std::vector<StmtPtr> BodyOf(const ProgramPtr& p, std::string_view fn) {
  auto f = p->FindFunction(fn);
  EXPECT_TRUE(f) << fn;
  return f ? Flatten(f->body) : std::vector<StmtPtr>{};
}

template <typename T>
const T& As(const NodePtr& n, NodeKind k) {
  EXPECT_EQ(n->kind(), k) << NodeKindName(n->kind());
  return static_cast<const T&>(*n);
}

TEST(TextWholeProgramShapes, InitValuesLoopFields) {
  auto p = Parse(R"(@pl.program
class P:
    @pl.function
    def f(self, a: pl.Tensor[[8], pl.FP32], n: pl.Scalar[pl.INDEX]):
        for i, (x, k) in pl.parallel(0, 4, 1, init_values=(a, n)):
            y = pl.add(x, a)
            r, s = pl.yield_(y, k + i)
        return r, s
)");
  auto body = BodyOf(p, "f");
  ASSERT_EQ(body.size(), 2u);
  const auto& loop = As<ForStmt>(body[0], NodeKind::kForStmt);
  EXPECT_EQ(loop.kind, ForKind::kParallel);
  ASSERT_EQ(loop.iter_args.size(), 2u);
  ASSERT_EQ(loop.return_vars.size(), 2u);
  auto f = p->FindFunction("f");
  EXPECT_EQ(loop.iter_args[0]->init_value, f->params[0]);
  EXPECT_EQ(loop.iter_args[1]->init_value, f->params[1]);
  // Return vars are typed like the carried values and used after the loop.
  EXPECT_EQ(loop.return_vars[0]->type, f->params[0]->type);
  EXPECT_EQ(loop.return_vars[1]->type, f->params[1]->type);
  auto inner = Flatten(loop.body);
  ASSERT_EQ(inner.size(), 2u);
  const auto& y = As<YieldStmt>(inner[1], NodeKind::kYieldStmt);
  ASSERT_EQ(y.values.size(), 2u);
  EXPECT_EQ(y.values[0], static_cast<const AssignStmt&>(*inner[0]).var);
  const auto& ret = As<ReturnStmt>(body[1], NodeKind::kReturnStmt);
  EXPECT_EQ(ret.values[0], loop.return_vars[0]);
  EXPECT_EQ(ret.values[1], loop.return_vars[1]);
  // The body's uses of x are the IterArg.
  const auto& add = static_cast<const Call&>(*static_cast<const AssignStmt&>(*inner[0]).value);
  EXPECT_EQ(add.args[0], loop.iter_args[0]);
  EXPECT_TRUE(RoundTrips(p));
}

TEST(TextWholeProgramShapes, OpaqueCallsKeepWhatWasWritten) {
  auto p = Parse(R"(@pl.program
class P:
    @pl.function
    def f(self, a: pl.Tensor[[8], pl.FP32]):
        t: pl.Tile[[8], pl.FP32] = pl.load(a, [0], [8], target_memory=pl.MemorySpace.Vec)
        u = pl.cast(t, pl.INDEX)
        pld.system.wait(signal=a, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        return u
)");
  auto body = BodyOf(p, "f");
  ASSERT_EQ(body.size(), 4u);
  const auto& t = As<AssignStmt>(body[0], NodeKind::kAssignStmt);
  const auto& load = As<Call>(t.value, NodeKind::kCall);
  const auto& op = As<Op>(load.op, NodeKind::kOp);
  EXPECT_EQ(op.name, "pl.load");
  EXPECT_EQ(op.info, nullptr);
  EXPECT_EQ(load.type->kind(), NodeKind::kTileType);  // from the annotation
  EXPECT_EQ(load.args.size(), 3u);
  ASSERT_EQ(load.kwargs.size(), 1u);
  EXPECT_EQ(std::get<EnumAttr>(load.kwargs[0].second).qualified, "pl.MemorySpace.Vec");
  const auto& u = As<AssignStmt>(body[1], NodeKind::kAssignStmt);
  EXPECT_EQ(u.var->type->kind(), NodeKind::kUnknownType);
  const auto& cast = As<Call>(u.value, NodeKind::kCall);
  EXPECT_EQ(As<GlobalVar>(cast.args[1], NodeKind::kGlobalVar).name, "pl.INDEX");
  const auto& wait = As<Call>(As<EvalStmt>(body[2], NodeKind::kEvalStmt).expr, NodeKind::kCall);
  EXPECT_TRUE(wait.args.empty());
  ASSERT_EQ(wait.kwargs.size(), 4u);
  EXPECT_EQ(std::get<ExprPtr>(wait.kwargs[0].second), p->FindFunction("f")->params[0]);
  EXPECT_EQ(std::get<int64_t>(wait.kwargs[2].second), 1);
  EXPECT_TRUE(RoundTrips(p));
}

TEST(TextWholeProgramShapes, SubscriptsSlicesAndAssignments) {
  auto p = Parse(R"(@pl.program
class P:
    @pl.function
    def f(self, a: pl.Tensor[[8, 8], pl.FP32], o: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        x = a[1, 0:4, ::2]
        o[0:8, 0] = x
        return o
)");
  auto body = BodyOf(p, "f");
  const auto& x = As<AssignStmt>(body[0], NodeKind::kAssignStmt);
  const auto& sub = As<Subscript>(x.value, NodeKind::kSubscript);
  ASSERT_EQ(sub.indices.size(), 3u);
  EXPECT_EQ(sub.indices[0]->kind(), NodeKind::kConstInt);
  const auto& s1 = As<Slice>(sub.indices[1], NodeKind::kSlice);
  EXPECT_TRUE(s1.start && s1.stop && !s1.step);
  const auto& s2 = As<Slice>(sub.indices[2], NodeKind::kSlice);
  EXPECT_TRUE(!s2.start && !s2.stop && s2.step);
  const auto& sa = As<SubscriptAssignStmt>(body[1], NodeKind::kSubscriptAssignStmt);
  EXPECT_EQ(sa.value, x.var);
  EXPECT_EQ(sa.target->kind(), NodeKind::kSubscript);
  EXPECT_TRUE(RoundTrips(p));
}

TEST(TextWholeProgramShapes, UnpackScopeAndDynamicDims) {
  auto p = Parse(R"(NR = pl.dynamic("NR")
@pl.program
class P:
    @pl.function
    def g(self, a: pl.Tensor[[NR], pl.FP32]) -> tuple[pl.Tensor[[NR], pl.FP32], pl.Scalar[pl.INDEX]]:
        return a, NR

    @pl.function
    def f(self, a: pl.Tensor[[NR], pl.FP32]):
        x, n = self.g(a)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[n]) as t:
            pl.touch(x)
        return t
)");
  ASSERT_EQ(p->dynamic_dims.size(), 1u);
  const VarPtr& nr = p->dynamic_dims[0];
  const auto& shape = static_cast<const TensorType&>(*p->FindFunction("f")->params[0]->type).shape;
  EXPECT_EQ(shape[0], nr);
  auto body = BodyOf(p, "f");
  const auto& un = As<UnpackAssignStmt>(body[0], NodeKind::kUnpackAssignStmt);
  ASSERT_EQ(un.vars.size(), 2u);
  EXPECT_EQ(un.vars[1]->type->kind(), NodeKind::kScalarType);
  const auto& sc = As<ScopeStmt>(body[1], NodeKind::kScopeStmt);
  EXPECT_EQ(sc.kind_name, "pl.at");
  ASSERT_TRUE(sc.as_var);
  EXPECT_EQ(std::get<EnumAttr>(sc.kwargs[0].second).qualified, "pl.Level.CORE_GROUP");
  const auto& deps = As<MakeTuple>(std::get<ExprPtr>(sc.kwargs[1].second), NodeKind::kMakeTuple);
  EXPECT_EQ(deps.elements[0], un.vars[1]);
  EXPECT_EQ(As<ReturnStmt>(body[2], NodeKind::kReturnStmt).values[0], sc.as_var);
  EXPECT_TRUE(RoundTrips(p));
}

// PyPTO's parser keeps one Var per pl.dynamic name for the whole program: inline
// uses in one function, in another, and a module-level dim of that name are one Var.
TEST(TextWholeProgramShapes, InlineDynamicDimsAreOneVarPerName) {
  auto p = Parse(R"(M = pl.dynamic("M")
@pl.program
class P:
    @pl.function
    def f(self, a: pl.Tensor[[pl.dynamic("NR"), 4], pl.FP32], b: pl.Tensor[[pl.dynamic("NR")], pl.FP32]):
        c: pl.Tensor[[pl.dynamic("NR"), pl.dynamic("M")], pl.FP32] = pl.create_tensor([4, 4], dtype=pl.FP32)
        return c

    @pl.function
    def g(self, a: pl.Tensor[[pl.dynamic("NR")], pl.FP32]):
        return a
)");
  auto dim = [](const VarPtr& v, size_t i) {
    return static_cast<const TensorType&>(*v->type).shape[i];
  };
  auto f = p->FindFunction("f");
  const ExprPtr nr = dim(f->params[0], 0);
  ASSERT_EQ(nr->kind(), NodeKind::kVar);
  EXPECT_EQ(static_cast<const Var&>(*nr).name_hint, "NR");
  EXPECT_EQ(static_cast<const ScalarType&>(*nr->type).dtype, DataType::kIndex);
  EXPECT_EQ(dim(f->params[1], 0), nr);
  EXPECT_EQ(dim(p->FindFunction("g")->params[0], 0), nr);
  const auto& c = As<AssignStmt>(BodyOf(p, "f")[0], NodeKind::kAssignStmt);
  EXPECT_EQ(dim(c.var, 0), nr);
  ASSERT_EQ(p->dynamic_dims.size(), 1u);  // M only: NR is written inline
  EXPECT_EQ(dim(c.var, 1), p->dynamic_dims[0]);
  const std::string text = PrintProgram(p);
  EXPECT_NE(text.find("def g(self, a: pl.Tensor[[pl.dynamic(\"NR\")], pl.FP32])"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pl.Tensor[[pl.dynamic(\"NR\"), M], pl.FP32]"), std::string::npos) << text;
  EXPECT_TRUE(RoundTrips(p));
}

// A host SubWorker's body is text: it takes part in equality and hashing, and the
// function takes no self.
TEST(TextWholeProgramShapes, SubWorkerBodyIsKeptAsText) {
  const std::string text = R"(@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def check(f: pl.Tensor[[8], pl.FP32]):
        # first
        if not torch.allclose(f, f):

            raise AssertionError(f"{f!r}")

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[8], pl.FP32]) -> pl.Tensor[[8], pl.FP32]:
        self.check(a)
        return a
)";
  auto p = Parse(text);
  auto check = p->FindFunction("check");
  ASSERT_TRUE(check->python_body);
  EXPECT_EQ(*check->python_body,
            "# first\nif not torch.allclose(f, f):\n\n    raise AssertionError(f\"{f!r}\")");
  EXPECT_TRUE(Flatten(check->body).empty());
  ASSERT_EQ(check->params.size(), 1u);
  EXPECT_EQ(check->params[0]->name_hint, "f");
  EXPECT_FALSE(p->FindFunction("host_orch")->python_body);
  const auto& call =
      As<Call>(As<EvalStmt>(BodyOf(p, "host_orch")[0], NodeKind::kEvalStmt).expr, NodeKind::kCall);
  EXPECT_EQ(As<GlobalVar>(call.op, NodeKind::kGlobalVar).name, "check");
  EXPECT_TRUE(RoundTrips(p));
  EXPECT_EQ(PrintProgram(p), text);

  std::string other = text;
  other.replace(other.find("# first"), 7, "# other");
  auto q = Parse(other);
  EXPECT_FALSE(StructuralEqual(p, q));
  EXPECT_NE(StructuralHash(p), StructuralHash(q));
}

TEST(TextWholeProgramShapes, ReboundViewNamesInLoopsAreDistinctVars) {
  auto p = Parse(R"(@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def h(self):
        a = pld.alloc_window_buffer(4)
        b = pld.alloc_window_buffer(4)
        for r in pl.range(2):
            s = pld.window(a, [1], dtype=pl.INT32)
        for r in pl.range(1, 3):
            s = pld.window(b, [1], dtype=pl.INT32)
        return 0
)");
  auto body = BodyOf(p, "h");
  auto first = Flatten(As<ForStmt>(body[2], NodeKind::kForStmt).body);
  auto second = Flatten(As<ForStmt>(body[3], NodeKind::kForStmt).body);
  EXPECT_NE(As<AssignStmt>(first[0], NodeKind::kAssignStmt).var,
            As<AssignStmt>(second[0], NodeKind::kAssignStmt).var);
  EXPECT_NE(As<ForStmt>(body[2], NodeKind::kForStmt).loop_var,
            As<ForStmt>(body[3], NodeKind::kForStmt).loop_var);
}

// IR a pass might build: an opaque call typed although nothing annotates it, and
// one whose annotation disagrees, must come back through pl._dump.call.
TEST(TextWholeProgramShapes, TypedOpaqueCallsUseTheDumpForm) {
  VarPtr a = MakeVar("a", TensorTy(Shape({8}), DataType::kFP32));
  auto typed = ir::MakeNode<Call>(OpRegistry::Get().GetOp("pl.load"), std::vector<ExprPtr>{a},
                                  KwargList{}, ExprAttrList{}, a->type);
  auto outer = ir::MakeNode<Call>(OpRegistry::Get().GetOp("pl.touch"), std::vector<ExprPtr>{typed},
                                  KwargList{}, ExprAttrList{}, UnknownType::Get());
  VarPtr v = MakeVar("v", ir::MakeNode<TileType>(Shape({8}), DataType::kFP32));
  auto fn = ir::MakeNode<Function>(
      "f", std::vector<VarPtr>{a}, std::vector<ParamDirection>{ParamDirection::kIn},
      std::vector<TypePtr>{}, Seq({Eval(outer), Assign(v, typed)}), FunctionType::kOpaque);
  auto p = ir::MakeNode<Program>("P", std::vector<VarPtr>{}, std::vector<FunctionPtr>{fn});
  std::string text = PrintProgram(p);
  EXPECT_NE(text.find("pl.touch(pl._dump.call(\"pl.load\", [a], pl.Tensor[[8], pl.FP32]))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("v: pl.Tile[[8], pl.FP32] = pl._dump.call(\"pl.load\""), std::string::npos)
      << text;
  EXPECT_TRUE(RoundTrips(p));
}

// The buffer a caller reserves is room, not text: the window declarations, written
// before a body that is printed first, land in the same place whether the output
// had to grow around them or not.
TEST(TextWholeProgramShapes, ReservedOutputLeavesTheTextAlone) {
  const std::string text = R"(@pl.program
class P:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        pl._dump.window_buffer("buf_window", base="buf", size=256 * 4, load_from_host=False, store_to_host=False)
        buf: pl.Ptr = pld.tensor.alloc_window_buffer(256 * 4)
        data: pld.DistributedTensor[[256], pl.FP32, pl._dump.window_ref("buf_window")] = pl._dump.call("pld.tensor.window", [buf, [256]], pld.DistributedTensor[[256], pl.FP32, pl._dump.window_ref("buf_window")], kwargs={"dtype": pl.FP32})
)";
  auto p = Parse(text);
  for (size_t expected : {size_t{0}, size_t{1}, text.size() / 2, text.size(), 100 * text.size()})
    EXPECT_EQ(PrintProgram(p, expected), text) << "expected_bytes=" << expected;
}

}  // namespace
}  // namespace cds::ir
