// What `verify_each` checks after every pass: a checker joins every tool's
// pipeline by being returned from VerifyEachInstrumentations(). The check here
// needs nothing but the IR.

#include <fmt/format.h>

#include "driver/driver.h"
#include "ir/error.h"
#include "verifier/verifier.h"

namespace cds::driver {
namespace {

// A pass must hand back a program that still has every function it was given,
// under the same names, in name order.
class FunctionSetCheck final : public pass::PassInstrumentation {
 public:
  void AfterPass(std::string_view pass_name, const ir::ProgramPtr& before,
                 const ir::ProgramPtr& after) override {
    if (!before) return;
    if (!after)
      throw ValueError(fmt::format("pass '{}' returned no program", pass_name), before->span());
    bool same = before->functions.size() == after->functions.size();
    for (size_t i = 0; same && i < before->functions.size(); ++i) {
      same = before->functions[i]->name == after->functions[i]->name;
    }
    if (!same) {
      throw ValueError(
          fmt::format("pass '{}' changed the set of functions of the program", pass_name),
          after->span());
    }
  }
};

// The independent verifier after every pass (what makes sense after that pass:
// see verify::VerifyAfterPass), plus the print/parse round trip after the last
// one, as mlir-opt --verify-roundtrip does. It stops the pipeline with every
// violation.
class VerifierCheck final : public pass::PassInstrumentation {
 public:
  explicit VerifierCheck(std::string_view last_pass) : last_pass_(last_pass) {}

  void AfterPass(std::string_view pass_name, const ir::ProgramPtr& before,
                 const ir::ProgramPtr& after) override {
    auto diagnostics = verify::VerifyAfterPass(pass_name, before, after);
    if (!last_pass_.empty() && pass_name == last_pass_) {
      auto round_trip = verify::VerifyRoundTrip(after);
      diagnostics.insert(diagnostics.end(), round_trip.begin(), round_trip.end());
    }
    if (verify::HasErrors(diagnostics))
      throw VerificationError(std::string(pass_name), std::move(diagnostics));
  }

 private:
  std::string last_pass_;
};

}  // namespace

VerificationError::VerificationError(std::string pass_name,
                                     std::vector<verify::Diagnostic> diagnostics)
    : std::runtime_error(
          fmt::format("the verifier rejected the output of pass '{}' ({} violation{})", pass_name,
                      diagnostics.size(), diagnostics.size() == 1 ? "" : "s")),
      pass_name_(std::move(pass_name)),
      diagnostics_(std::move(diagnostics)) {}

std::vector<pass::PassInstrumentationPtr> VerifyEachInstrumentations(std::string_view last_pass) {
  return {std::make_shared<FunctionSetCheck>(), std::make_shared<VerifierCheck>(last_pass)};
}

}  // namespace cds::driver
