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
// see verify::VerifyAfterPass). It stops the pipeline with every violation.
class VerifierCheck final : public pass::PassInstrumentation {
 public:
  void AfterPass(std::string_view pass_name, const ir::ProgramPtr& before,
                 const ir::ProgramPtr& after) override {
    auto diagnostics = verify::VerifyAfterPass(pass_name, before, after);
    if (!diagnostics.empty()) throw VerificationError(std::string(pass_name), std::move(diagnostics));
  }
};

}  // namespace

VerificationError::VerificationError(std::string pass_name, std::vector<verify::Diagnostic> diagnostics)
    : std::runtime_error(fmt::format("the verifier rejected the output of pass '{}' ({} violation{})",
                                     pass_name, diagnostics.size(), diagnostics.size() == 1 ? "" : "s")),
      pass_name_(std::move(pass_name)),
      diagnostics_(std::move(diagnostics)) {}

std::vector<pass::PassInstrumentationPtr> VerifyEachInstrumentations() {
  return {std::make_shared<FunctionSetCheck>(), std::make_shared<VerifierCheck>()};
}

}  // namespace cds::driver
