// Contracts, severities, the unmaterialized-input note, where the round trip runs,
// and messages in the text format.

#include <gtest/gtest.h>

#include "ir/ir.h"
#include "ir/parser.h"
#include "tests/verifier/fixtures.h"
#include "tests/verifier/mutators.h"
#include "verifier/verifier.h"

namespace cds::verify::testing {
namespace {

using namespace cds::ir;

// PyPTO's output right after its MaterializeCommDomainScopes: the window Call of
// 'dv' keeps its parsed type (no back-reference) while the Var carries it, and
// the in-place allreduce result 'red' has no WindowBuffer yet. Everything else
// is as the strict contract wants it.
constexpr std::string_view kPyptoOutput = R"(@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pld.DistributedTensor[[64], pl.FP32]) -> pld.DistributedTensor[[64], pl.FP32]:
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self) -> pl.Scalar[pl.INT64]:
        pl._dump.window_buffer("d_window", base="d", size=64 * 4, load_from_host=False, store_to_host=False)
        pl._dump.window_buffer("s_window", base="s", size=8 * 4, load_from_host=False, store_to_host=False)
        with pl._dump.comm_domain(name="comm_d0", devices="all", slots=["d_window", "s_window"], attrs={}):
            d: pl.Ptr = pld.tensor.alloc_window_buffer(64 * 4)
            s: pl.Ptr = pld.tensor.alloc_window_buffer(8 * 4)
            dv: pld.DistributedTensor[[64], pl.FP32, pl._dump.window_ref("d_window")] = pl._dump.call("pld.tensor.window", [d, [64]], pld.DistributedTensor[[64], pl.FP32], kwargs={"dtype": pl.FP32})
            sv: pld.DistributedTensor[[8], pl.INT32, pl._dump.window_ref("s_window")] = pl._dump.call("pld.tensor.window", [s, [8]], pld.DistributedTensor[[8], pl.INT32, pl._dump.window_ref("s_window")], kwargs={"dtype": pl.INT32})
            for r in pl.range(pld.system.world_size()):
                self.chip_orch(dv, device=r)
            red: pld.DistributedTensor[[64], pl.FP32] = pl._dump.call("pld.tensor.allreduce", [dv, sv], pld.DistributedTensor[[64], pl.FP32], kwargs={"op": pld.ReduceOp.Sum})
            return 0
)";

ProgramPtr Parse(std::string_view text) {
  ParseOptions o;
  o.filename = "pypto_output.pyir";
  return ParseProgram(text, o);
}

VerifyOptions Under(Contract c) {
  VerifyOptions o;
  o.contract = c;
  return o;
}

const Diagnostic* Find(const std::vector<Diagnostic>& diags, std::string_view code) {
  for (const auto& d : diags) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

TEST(VerifierContract, NamesRoundTrip) {
  EXPECT_EQ(ContractFromName("strict"), Contract::kStrict);
  EXPECT_EQ(ContractFromName("pypto"), Contract::kPypto);
  EXPECT_EQ(ContractFromName("PyPTO"), std::nullopt);
  EXPECT_EQ(ContractFromName(""), std::nullopt);
  EXPECT_EQ(ContractName(Contract::kPypto), "pypto");
  EXPECT_EQ(VerifyOptions{}.contract, Contract::kStrict);
}

TEST(VerifierContract, StrictReportsWhatPyptoLeavesForLater) {
  auto diags = VerifyProgram(Parse(kPyptoOutput), Under(Contract::kStrict));
  const Diagnostic* v001 = Find(diags, "CDS-V001");
  ASSERT_NE(v001, nullptr) << FormatDiagnostics(diags);
  EXPECT_EQ(v001->severity, Severity::kError);
  EXPECT_NE(v001->message.find("in-place collective result 'red'"), std::string::npos)
      << v001->message;
  const Diagnostic* v006 = Find(diags, "CDS-V006");
  ASSERT_NE(v006, nullptr) << FormatDiagnostics(diags);
  EXPECT_EQ(v006->severity, Severity::kError);
  EXPECT_NE(v006->message.find("'dv'"), std::string::npos) << v006->message;
  EXPECT_EQ(CountCode(diags, "CDS-V001") + CountCode(diags, "CDS-V006"), diags.size())
      << FormatDiagnostics(diags);
}

TEST(VerifierContract, PyptoAcceptsItWithAWarning) {
  auto diags = VerifyProgram(Parse(kPyptoOutput), Under(Contract::kPypto));
  EXPECT_FALSE(HasCode(diags, "CDS-V001")) << FormatDiagnostics(diags);
  const Diagnostic* v006 = Find(diags, "CDS-V006");
  ASSERT_NE(v006, nullptr) << FormatDiagnostics(diags);
  EXPECT_EQ(v006->severity, Severity::kWarning);
  EXPECT_FALSE(HasErrors(diags)) << FormatDiagnostics(diags);
  EXPECT_EQ(diags.size(), 1u) << FormatDiagnostics(diags);
  EXPECT_NE(FormatDiagnostics(diags).find(": warning: [CDS-V006 assign-type-asymmetry]"),
            std::string::npos)
      << FormatDiagnostics(diags);
}

// Everything else is judged as under the strict contract: an alias of a view that
// lost its back-reference (an upstream fault) stays an error, and so does a window
// Call whose type carries another WindowBuffer than its Var.
TEST(VerifierContract, PyptoKeepsEveryOtherCheckStrict) {
  std::string alias(kPyptoOutput);
  const std::string ret = "            return 0\n";
  alias.replace(alias.find(ret), ret.size(),
                "            w: pld.DistributedTensor[[64], pl.FP32] = dv\n"
                "            for q in pl.range(pld.system.world_size()):\n"
                "                self.chip_orch(w, device=q)\n" +
                    ret);
  auto diags = VerifyProgram(Parse(alias), Under(Contract::kPypto));
  ASSERT_TRUE(HasErrors(diags)) << FormatDiagnostics(diags);
  const Diagnostic* v001 = Find(diags, "CDS-V001");
  ASSERT_NE(v001, nullptr) << FormatDiagnostics(diags);
  EXPECT_NE(v001->message.find("alias 'w'"), std::string::npos) << v001->message;
  bool alias_asymmetry_is_error = false;
  for (const auto& d : diags) {
    alias_asymmetry_is_error |= d.code == "CDS-V006" && d.severity == Severity::kError &&
                                d.message.find("'w'") != std::string::npos;
  }
  EXPECT_TRUE(alias_asymmetry_is_error) << FormatDiagnostics(diags);

  std::string other(kPyptoOutput);
  const std::string untyped = R"([d, [64]], pld.DistributedTensor[[64], pl.FP32], kwargs)";
  other.replace(
      other.find(untyped), untyped.size(),
      R"([d, [64]], pld.DistributedTensor[[64], pl.FP32, pl._dump.window_ref("s_window")], kwargs)");
  auto d2 = VerifyProgram(Parse(other), Under(Contract::kPypto));
  const Diagnostic* v006 = Find(d2, "CDS-V006");
  ASSERT_NE(v006, nullptr) << FormatDiagnostics(d2);
  EXPECT_EQ(v006->severity, Severity::kError) << FormatDiagnostics(d2);
}

TEST(VerifierNotes, UnmaterializedInputGetsOneNote) {
  for (const auto& f : AllFixtures()) {
    VerifyOptions o;
    o.round_trip = false;
    auto diags = VerifyProgram(f.before, o);
    ASSERT_EQ(CountCode(diags, "CDS-V030"), 1u) << f.name << ":\n" << FormatDiagnostics(diags);
    const Diagnostic* note = Find(diags, "CDS-V030");
    EXPECT_EQ(note->severity, Severity::kNote);
    EXPECT_NE(note->message.find("--default-pipeline"), std::string::npos) << note->message;
    EXPECT_NE(FormatDiagnostics(diags).find(": note: [CDS-V030 input-not-materialized]"),
              std::string::npos);
    // Not on a materialized output, nor inside a pipeline after the pass.
    EXPECT_FALSE(HasCode(VerifyProgram(f.after, o), "CDS-V030")) << f.name;
    EXPECT_FALSE(HasCode(VerifyAfterPass("materialize-comm-domain-scopes", f.before, f.before, o),
                         "CDS-V030"))
        << f.name;
  }
}

// A materialized program with one wrong scope is not "unmaterialized".
TEST(VerifierNotes, NoNoteOnAPartlyMaterializedProgram) {
  auto f = AllFixtures()[0];
  for (const auto& m : AllMutators()) {
    if (m.name != "unwrap-scope") continue;
    auto p = m.apply(f.after);
    ASSERT_TRUE(p);
    VerifyOptions o;
    o.round_trip = false;
    auto diags = VerifyProgram(*p, o);
    EXPECT_TRUE(HasCode(diags, "CDS-V008"));
    EXPECT_FALSE(HasCode(diags, "CDS-V030")) << FormatDiagnostics(diags);
  }
}

// The verify-each seam never runs the round trip: a program that only the round
// trip rejects passes VerifyAfterPass and fails VerifyRoundTrip.
TEST(VerifierAfterPass, NoRoundTripAfterAPass) {
  auto f = AllFixtures()[0];
  const Mutator* param = nullptr;
  for (const auto& m : AllMutators()) {
    if (m.name == "chip-param-back-reference") param = &m;
  }
  ASSERT_NE(param, nullptr);
  ProgramPtr p = *param->apply(f.after);
  auto rt = VerifyRoundTrip(p);
  ASSERT_TRUE(HasCode(rt, "CDS-V024") || HasCode(rt, "CDS-V025")) << FormatDiagnostics(rt);
  for (const char* pass :
       {"materialize-comm-domain-scopes", "synthesize-allreduce-signals", "some-other-pass"}) {
    auto diags = VerifyAfterPass(pass, f.after, p);
    EXPECT_FALSE(HasCode(diags, "CDS-V024")) << pass << ":\n" << FormatDiagnostics(diags);
    EXPECT_FALSE(HasCode(diags, "CDS-V025")) << pass << ":\n" << FormatDiagnostics(diags);
  }
}

// Messages print expressions and types as the text format writes them.
TEST(VerifierMessages, ExpressionsAndTypesInTheTextFormat) {
  std::string bad_size(kPyptoOutput);
  const std::string size = R"(base="d", size=64 * 4,)";
  bad_size.replace(bad_size.find(size), size.size(), R"(base="d", size=64 * 4 + 1,)");
  auto diags = VerifyProgram(Parse(bad_size));
  const Diagnostic* v004 = Find(diags, "CDS-V004");
  ASSERT_NE(v004, nullptr) << FormatDiagnostics(diags);
  EXPECT_EQ(v004->message,
            "WindowBuffer of alloc 'd' in 'host_orch' has size 64 * 4 + 1 (257 bytes); the alloc "
            "asks for 64 * 4 (256 bytes)");
  const Diagnostic* v001 = Find(diags, "CDS-V001");
  ASSERT_NE(v001, nullptr) << FormatDiagnostics(diags);
  EXPECT_NE(v001->message.find("has type pld.DistributedTensor[[64], pl.FP32];"), std::string::npos)
      << v001->message;
}

}  // namespace
}  // namespace cds::verify::testing
