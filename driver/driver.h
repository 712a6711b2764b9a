#pragma once

// Builds the pass pipeline every tool and fuzz target runs, so that they all
// instrument it the same way.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pass/pass_manager.h"
#include "verifier/diagnostic.h"

namespace cds::driver {

#ifndef CDS_VERIFY_EACH_DEFAULT
#define CDS_VERIFY_EACH_DEFAULT 0
#endif

// Whether this build runs the verifier after every pass by default: ON in the
// dev/Debug preset (CMake option CDS_VERIFY_EACH), OFF in release.
inline constexpr bool kVerifyEachByDefault = CDS_VERIFY_EACH_DEFAULT != 0;

struct PipelineOptions {
  std::string pipeline = std::string(pass::kDefaultPipeline);  // "a,b" (see pass::ParsePipeline)
  bool verify_each = kVerifyEachByDefault;  // check after every pass (VerifyEachInstrumentations)
};

// Thrown by the verify-each instrumentation: the pipeline stops at the first pass
// whose output the verifier rejects, with every violation it found.
class VerificationError : public std::runtime_error {
 public:
  VerificationError(std::string pass_name, std::vector<verify::Diagnostic> diagnostics);
  const std::string& pass_name() const { return pass_name_; }
  const std::vector<verify::Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::string pass_name_;
  std::vector<verify::Diagnostic> diagnostics_;
};

// The checks `verify_each` adds after every pass, in the order they run. The
// invariant checks run after every pass; the print/parse round trip, which costs
// more than the pass, runs once, after `last_pass` (none when empty).
std::vector<pass::PassInstrumentationPtr> VerifyEachInstrumentations(
    std::string_view last_pass = {});

// The manager for `options`; `extra` instrumentations run after the verify_each
// ones. Throws cds::ValueError for an unknown pass name.
pass::PassManager BuildPassManager(const PipelineOptions& options,
                                   std::vector<pass::PassInstrumentationPtr> extra = {});

// BuildPassManager(options, extra).Run(program).
ir::ProgramPtr RunPipeline(const ir::ProgramPtr& program, const PipelineOptions& options,
                           std::vector<pass::PassInstrumentationPtr> extra = {});

}  // namespace cds::driver
