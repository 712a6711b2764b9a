// Properties beyond the happy path (docs/properties.md, "Robustness properties"):
// the pass manager with instrumentation and property bookkeeping, synthesis
// options, reshaped and re-materialized inputs, large programs, the verifier on
// reparsed outputs, on inputs with planted defects and on malformed outputs.

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "fuzz/targets/pipeline_check.h"
#include "ir/error.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "pass/materialize_comm_domain_scopes.h"
#include "pass/pass_manager.h"
#include "pass/synthesize_allreduce_signals.h"
#include "tests/prop/malformed.h"
#include "tests/prop/prop_budget.h"
#include "tests/prop/prop_gen.h"
#include "tests/prop/prop_util.h"
#include "verifier/orchestrators.h"
#include "verifier/verifier.h"

namespace cds::prop {
namespace {

using fuzz::GeneratedProgram;
using pass::IRProperty;
using pass::IRPropertySet;

constexpr int kInstrumentedCases = 150;
constexpr int kPropertyBookkeepingCases = 60;
constexpr int kCoreNumCases = 100;
constexpr int kReparsedCases = 150;
constexpr int kReshapedCases = 150;
constexpr int kLargeCases = 12;
constexpr int kInvalidVerifierCases = 15;
constexpr int kMalformedCases = 80;

bool ScopesAsExpected(const ir::ProgramPtr& out, const GeneratedProgram& p, std::string* why) {
  const auto observed = ObserveScopes(out);
  const auto expected = ExpectedScopes(p.expect);
  bool same = observed.size() == expected.size();
  for (size_t i = 0; same && i < observed.size(); ++i) {
    same = observed[i].name == expected[i].name && observed[i].scopes == expected[i].scopes;
  }
  if (!same)
    *why = "--- expected ---\n" + ToString(expected) + "--- observed ---\n" + ToString(observed);
  return same;
}

// --------------------------------------------------------------------------------
// Pass manager

// Records every hook call as "before:NAME" / "after:NAME" and checks that each
// AfterPass sees the program its BeforePass saw.
class Recorder : public pass::PassInstrumentation {
 public:
  void BeforePass(std::string_view name, const ir::ProgramPtr& program) override {
    log.push_back("before:" + std::string(name));
    last_before = program;
  }
  void AfterPass(std::string_view name, const ir::ProgramPtr& before,
                 const ir::ProgramPtr& after) override {
    log.push_back("after:" + std::string(name));
    if (before != last_before) consistent = false;
    last_after = after;
  }
  std::vector<std::string> log;
  ir::ProgramPtr last_before, last_after;
  bool consistent = true;
};

// Relies on the default (empty) hooks of the base class.
class Silent : public pass::PassInstrumentation {};

// Stops the pipeline before the named pass.
class Stopper : public pass::PassInstrumentation {
 public:
  explicit Stopper(std::string at) : at_(std::move(at)) {}
  void BeforePass(std::string_view name, const ir::ProgramPtr&) override {
    if (name == at_) throw ValueError("stopped before " + at_, ir::Span{});
  }

 private:
  std::string at_;
};

// Any sequence of known passes, added by name, by PassInfo or from a pipeline
// string, runs with instrumentation: the hooks fire in order around each pass,
// AfterPass gets the program BeforePass got, the result is the program the last
// hook saw, it equals the default pipeline's output when the sequence includes
// both passes in order, and properties() is the union of the produced ones.
TEST(PassManagerProperty, InstrumentedPipelines) {
  CheckProperty(kInstrumentedCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr expected = PipelineOrFail(p);
    const auto names = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 2));
    const int how = *rc::gen::inRange(0, 3);
    pass::PassManager pm;
    std::vector<std::string> pass_names;
    for (int n : names)
      pass_names.emplace_back(pass::RegisteredPasses()[static_cast<size_t>(n)].name);
    if (how == 0) {
      for (const auto& n : pass_names) pm.AddPass(n);
    } else if (how == 1) {
      for (const auto& n : pass_names) pm.AddPass(*pass::FindPass(n));
    } else {
      pm = pass::PassManager::FromPipeline(fmt::format("{}", fmt::join(pass_names, ",")));
    }
    RC_ASSERT(pm.passes().size() == pass_names.size());
    auto rec = std::make_shared<Recorder>();
    pm.AddInstrumentation(std::make_shared<Silent>());
    pm.AddInstrumentation(nullptr);  // ignored
    pm.AddInstrumentation(rec);
    RC_ASSERT(pm.instrumentations().size() == 2u);
    ir::ProgramPtr out;
    try {
      out = pm.Run(p.ir);
    } catch (const ValueError& e) {
      RC_FAIL(FailureMessage("instrumented run threw: " + e.Format(), p));
    }
    std::vector<std::string> want;
    IRPropertySet produced;
    for (const auto& n : pass_names) {
      want.push_back("before:" + n);
      want.push_back("after:" + n);
      produced = produced.Union(pass::FindPass(n)->produced);
    }
    RC_ASSERT(rec->log == want);
    RC_ASSERT(rec->consistent);
    if (!pass_names.empty()) RC_ASSERT(rec->last_after == out);
    if (pass_names.empty()) RC_ASSERT(out == p.ir);
    RC_ASSERT(pm.properties() == produced);
    for (IRProperty prop :
         {IRProperty::kAllReduceSignalsSynthesized, IRProperty::kCommDomainScopesMaterialized}) {
      const bool named =
          pm.properties().ToString().find(pass::IRPropertyName(prop)) != std::string::npos;
      RC_ASSERT(named == produced.Contains(prop));
    }
    // SARS then MCDS somewhere in order, MCDS once: the default pipeline's result.
    const auto sars =
        std::find(pass_names.begin(), pass_names.end(), "synthesize-allreduce-signals");
    const auto mcds =
        std::find(pass_names.begin(), pass_names.end(), "materialize-comm-domain-scopes");
    if (sars != pass_names.end() && mcds != pass_names.end() && sars < mcds) {
      if (!ir::StructuralEqual(out, expected)) {
        RC_FAIL(FailureMessage("instrumented pipeline differs from the default pipeline", p));
      }
    }
    // An instrumentation that throws stops the run before the pass it objects to.
    if (!pass_names.empty()) {
      pass::PassManager stopped;
      for (const auto& n : pass_names) stopped.AddPass(n);
      auto rec2 = std::make_shared<Recorder>();
      stopped.AddInstrumentation(rec2);
      stopped.AddInstrumentation(std::make_shared<Stopper>(pass_names.back()));
      bool threw = false;
      try {
        stopped.Run(p.ir);
      } catch (const ValueError& e) {
        threw = std::string(e.message()).find("stopped before") != std::string::npos;
      }
      RC_ASSERT(threw);
      // It stops at the first pass of that name; the recorder (added first) saw its BeforePass.
      const size_t first = static_cast<size_t>(
          std::find(pass_names.begin(), pass_names.end(), pass_names.back()) - pass_names.begin());
      RC_ASSERT(rec2->log.size() == 2 * first + 1);
    }
  });
}

// Required properties are enforced at the point a pass runs (an unmet one is a
// ValueError naming the pass and the property), `initial` satisfies them, and
// invalidated properties are dropped before the produced ones are added.
TEST(PassManagerProperty, RequiredAndInvalidatedProperties) {
  CheckProperty(kPropertyBookkeepingCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const IRProperty need = *rc::gen::element(IRProperty::kAllReduceSignalsSynthesized,
                                              IRProperty::kCommDomainScopesMaterialized);
    pass::PassInfo checker{"needs-" + std::string(pass::IRPropertyName(need)),
                           {need},
                           {},
                           {IRProperty::kAllReduceSignalsSynthesized},
                           [](const ir::ProgramPtr& x) { return x; }};
    // Nothing provides `need` first: the run stops at the checker.
    pass::PassManager bad;
    bad.AddPass(checker);
    bool threw = false;
    try {
      bad.Run(p.ir);
    } catch (const ValueError& e) {
      threw = e.message().find(checker.name) != std::string::npos &&
              e.message().find(pass::IRPropertyName(need)) != std::string::npos;
    }
    RC_ASSERT(threw);
    // The default pipeline provides both; the checker then invalidates signals.
    pass::PassManager good = pass::PassManager::FromPipeline(pass::kDefaultPipeline);
    good.AddPass(checker);
    const ir::ProgramPtr out = good.Run(p.ir);
    RC_ASSERT(good.properties() == IRPropertySet{IRProperty::kCommDomainScopesMaterialized});
    RC_ASSERT(!good.properties().Contains(IRProperty::kAllReduceSignalsSynthesized));
    RC_ASSERT(ir::StructuralEqual(out, PipelineOrFail(p)));
    // Declared up front, the property satisfies the checker on its own.
    pass::PassManager given;
    given.AddPass(checker);
    RC_ASSERT(given.Run(p.ir, {need}) == p.ir);
    RC_ASSERT(given.properties() ==
              IRPropertySet{need}.Minus({IRProperty::kAllReduceSignalsSynthesized}));
    // An unknown name is refused with the list of known passes.
    const std::string unknown =
        *rc::gen::element<std::string>("materialize", "no-such-pass", "sars");
    threw = false;
    try {
      good.AddPass(unknown);
    } catch (const ValueError& e) {
      threw = e.message().find(unknown) != std::string::npos &&
              e.message().find("synthesize-allreduce-signals") != std::string::npos;
    }
    RC_ASSERT(threw);
  });
}

// --------------------------------------------------------------------------------
// Synthesis options

// SynthesizeOptions::default_core_num sizes every signal of a call without
// core_num=: each synthesized alloc is `world_size * K * 4` bytes and its window
// `[world_size, K]`; a non-positive default is refused up front.
TEST(SynthesisProperty, DefaultCoreNumSizesSignals) {
  CheckProperty(kCoreNumCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const int64_t k = *rc::gen::inRange<int64_t>(-2, 6);
    pass::SynthesizeOptions opts;
    opts.default_core_num = k;
    if (k <= 0) {
      bool threw = false;
      try {
        pass::SynthesizeAllReduceSignals(p.ir, opts);
      } catch (const ValueError& e) {
        threw = e.message().find("default core_num") != std::string::npos;
      }
      RC_ASSERT(threw);
      return;
    }
    const ir::ProgramPtr out = pass::SynthesizeAllReduceSignals(p.ir, opts);
    // Expected core_num per synthesized signal, in the model's numbering.
    std::map<std::string, int64_t> want;
    for (const auto& sig : p.expect.signals) {
      const fuzz::StmtModel* s = p.model.FindStmt(sig.stmt);
      RC_ASSERT(s != nullptr);
      const fuzz::CollectiveModel& c = p.model.collectives[static_cast<size_t>(s->ref)];
      want[sig.view] = c.core_num > 0 ? c.core_num : k;
    }
    std::map<std::string, int64_t> got;
    for (const auto& fn : out->functions) {
      if (!verify::IsHostOrchestrator(*fn)) continue;
      ForEachStmtUnder(fn->body, [&](const ir::StmtPtr& s) {
        if (s->kind() != ir::NodeKind::kAssignStmt) return;
        const auto& a = static_cast<const ir::AssignStmt&>(*s);
        if (a.var->name_hint.rfind("__allreduce_signal_", 0) != 0 ||
            a.value->kind() != ir::NodeKind::kCall)
          return;
        const auto& c = static_cast<const ir::Call&>(*a.value);
        if (c.OpName() != "pld.tensor.window") return;
        const auto& dims = static_cast<const ir::MakeTuple&>(*c.args[1]).elements;
        got[a.var->name_hint] = static_cast<const ir::ConstInt&>(*dims[1]).value;
      });
    }
    if (got != want) {
      std::string w, g;
      for (const auto& [n, v] : want) w += fmt::format("{}={} ", n, v);
      for (const auto& [n, v] : got) g += fmt::format("{}={} ", n, v);
      RC_FAIL(FailureMessage(
          fmt::format("default_core_num={}: expected signal widths [{}], got [{}]", k, w, g), p));
    }
  });
}

// --------------------------------------------------------------------------------
// Reparsed, re-materialized, reshaped and large programs

// parse(print(output)) carries separately built types for every annotated
// assignment (not the shared pointers of the builder): the verifier must accept
// it, alone and against the input. Stripping its scopes and running the pass again
// (views still carrying back-references) re-materializes the same program.
TEST(PipelineProperty, ReparsedOutputVerifiesAndRematerializes) {
  CheckProperty(kReparsedCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr out = PipelineOrFail(p);
    ir::ProgramPtr back;
    try {
      back = ir::ParseProgram(ir::PrintProgram(out), {.filename = "reparsed.pyir"});
    } catch (const ValueError& e) {
      RC_FAIL(FailureMessage("the printed output does not parse: " + e.Format(), p));
    }
    auto diags = verify::VerifyProgram(back);
    if (!diags.empty()) RC_FAIL(FailureMessage("VerifyProgram(parse(print(output)))", p, diags));
    diags = verify::VerifyRelational(p.ir, back);
    if (!diags.empty())
      RC_FAIL(FailureMessage("VerifyRelational(input, parse(print(output)))", p, diags));
    ir::ProgramPtr again;
    try {
      again = pass::MaterializeCommDomainScopes(StripScopes(back));
    } catch (const ValueError& e) {
      RC_FAIL(FailureMessage("re-materializing the stripped output throws: " + e.Format(), p));
    }
    const ir::EqualityResult eq = ir::StructuralEqualWhere(again, out);
    if (!eq.equal) {
      RC_FAIL(FailureMessage("re-materialized output differs at " + eq.path + ": " + eq.reason, p));
    }
  });
}

size_t CountTaggedAllReduces(const ir::ProgramPtr& program) {
  size_t n = 0;
  for (const auto& fn : program->functions) {
    if (!verify::IsHostOrchestrator(*fn)) continue;
    ForEachStmtUnder(fn->body, [&](const ir::StmtPtr& s) {
      ir::ExprPtr v;
      if (s->kind() == ir::NodeKind::kEvalStmt) v = static_cast<const ir::EvalStmt&>(*s).expr;
      if (s->kind() == ir::NodeKind::kAssignStmt) v = static_cast<const ir::AssignStmt&>(*s).value;
      if (v && v->kind() == ir::NodeKind::kCall) {
        const auto& c = static_cast<const ir::Call&>(*v);
        if (c.OpName() == "pld.tensor.allreduce" && ir::FindAttr(c.attrs, "tag")) ++n;
      }
    });
  }
  return n;
}

// Wrapping runs of statements in nested SeqStmts and tagging signal-less allreduces with an
// attribute changes nothing: the scopes are the model's, the output verifies (no round trip: the
// printer flattens) against the reshaped input, and every tag survives synthesis.
TEST(PipelineProperty, ReshapedInputsGiveTheSameScopes) {
  CheckProperty(kReshapedCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    const ir::ProgramPtr in = ReshapeInput(p.ir, seed);
    const size_t tagged = CountTaggedAllReduces(in);
    ir::ProgramPtr out;
    try {
      out = RunDefaultPipeline(in);
    } catch (const ValueError& e) {
      RC_FAIL(FailureMessage("the pipeline rejected a reshaped valid program: " + e.Format(), p));
    }
    std::string why;
    if (!ScopesAsExpected(out, p, &why))
      RC_FAIL(FailureMessage("reshaped input: scopes differ\n" + why, p));
    verify::VerifyOptions no_rt;
    no_rt.round_trip = false;
    const auto diags = verify::VerifyAll(in, out, no_rt);
    if (!diags.empty()) RC_FAIL(FailureMessage("VerifyAll(reshaped input, output)", p, diags));
    if (CountTaggedAllReduces(out) != tagged) {
      RC_FAIL(FailureMessage(
          fmt::format("{} tagged allreduces in, {} out", tagged, CountTaggedAllReduces(out)), p));
    }
  });
}

// Programs of ~150 host statements (dozens of views per host, so the pass's
// tables grow several times): scopes as the model says, verifier clean.
TEST(PipelineProperty, LargeProgramsMatchModel) {
  CheckProperty(kLargeCases, [] {
    fuzz::GenOptions opts;
    opts.size = 150;
    opts.fixed_size = true;
    const GeneratedProgram p = *ValidProgram(opts);
    const ir::ProgramPtr out = PipelineOrFail(p);
    std::string why;
    if (!ScopesAsExpected(out, p, &why))
      RC_FAIL(FailureMessage("large program: scopes differ\n" + why, p));
    const auto diags = verify::VerifyAll(p.ir, out);
    if (!diags.empty()) RC_FAIL(FailureMessage("large program: VerifyAll", p, diags));
  });
}

// --------------------------------------------------------------------------------
// The verifier on inputs with planted defects and on malformed outputs

// The verifier finds, on its own, the defects the pass rejects: run on the
// (unmaterialized) input of an invalid program, it reports an unresolvable
// device= (CDS-V021) for every device defect and an alloc without coverage
// (CDS-V020) for the coverage defects, with a message naming the construct.
TEST(VerifierProperty, FlagsThePlantedDefectOfInvalidInputs) {
  struct Case {
    fuzz::InvalidKind kind;
    const char* code;
    const char* says;
  };
  const Case cases[] = {
      {fuzz::InvalidKind::kDeviceStep, "CDS-V021", "step"},
      {fuzz::InvalidKind::kDeviceNotLoopVar, "CDS-V021", "not the induction variable"},
      {fuzz::InvalidKind::kDeviceExpr, "CDS-V021", "expression"},
      {fuzz::InvalidKind::kDeviceNegative, "CDS-V021", "negative"},
      {fuzz::InvalidKind::kDeviceWorldSizeStart, "CDS-V021", "start other than 0"},
      {fuzz::InvalidKind::kDeviceLoopNonconstBounds, "CDS-V021", "neither constants"},
      {fuzz::InvalidKind::kDeviceRangeTooLarge, "CDS-V021", "more devices"},
      {fuzz::InvalidKind::kEmptyCoverage, "CDS-V020", "empty device set"},
      {fuzz::InvalidKind::kUnconsumedAlloc, "CDS-V020", "no dispatch consumes"},
      {fuzz::InvalidKind::kOnlyUnplacedDispatch, "CDS-V020", "without device= cover no device"},
  };
  for (const Case& c : cases) {
    CheckProperty(
        kInvalidVerifierCases,
        [c] {
          const GeneratedProgram p = *InvalidProgram(c.kind);
          verify::VerifyOptions opts;
          opts.round_trip = false;
          const auto diags = verify::VerifyProgram(p.ir, opts);
          for (const auto& d : diags) {
            if (d.code == c.code && d.message.find(c.says) != std::string::npos) return;
          }
          RC_FAIL(FailureMessage(fmt::format("expected {} saying '{}'", c.code, c.says), p, diags));
        },
        std::string(fuzz::InvalidKindName(c.kind)));
  }
}

// Each malformed-output mutator that applies makes the verifier report its code
// (self-check, round trip off, for structural breakage; relational for
// program-level changes). The formatted diagnostics carry the code, and a cap of
// one diagnostic keeps exactly one.
TEST(VerifierProperty, ReportsMalformedOutputs) {
  CheckProperty(kMalformedCases, [] {
    const GeneratedProgram p = *ValidProgram();
    const ir::ProgramPtr out = PipelineOrFail(p);
    verify::VerifyOptions no_rt;
    no_rt.round_trip = false;
    size_t applied = 0;
    for (const MalformedMutator& m : MalformedMutators()) {
      std::optional<ir::ProgramPtr> bad = m.apply(out);
      if (!bad) continue;
      ++applied;
      const auto diags =
          m.structural ? verify::VerifyProgram(*bad, no_rt) : verify::VerifyRelational(out, *bad);
      if (!verify::HasCode(diags, m.code)) {
        RC_FAIL(FailureMessage(fmt::format("mutator {} should give {}", m.name, m.code), p, diags));
      }
      const std::string text = verify::FormatDiagnostics(diags);
      RC_ASSERT(text.find(m.code) != std::string::npos);
      verify::VerifyOptions capped = no_rt;
      capped.max_diagnostics = 1;
      const auto one = m.structural ? verify::VerifyProgram(*bad, capped)
                                    : verify::VerifyRelational(out, *bad, capped);
      RC_ASSERT(one.size() == 1u);
    }
    RC_ASSERT(applied > 0u);
    // Null programs are reported, not dereferenced.
    RC_ASSERT(verify::HasCode(verify::VerifyProgram(nullptr), "CDS-V029"));
    RC_ASSERT(verify::HasCode(verify::VerifyRelational(nullptr, out), "CDS-V029"));
    RC_ASSERT(verify::HasCode(verify::VerifyRelational(p.ir, nullptr), "CDS-V029"));
  });
}

}  // namespace
}  // namespace cds::prop
