#include "driver/driver.h"

namespace cds::driver {

pass::PassManager BuildPassManager(const PipelineOptions& options,
                                   std::vector<pass::PassInstrumentationPtr> extra) {
  pass::PassManager pm = pass::PassManager::FromPipeline(options.pipeline);
  if (options.verify_each) {
    std::string last = pm.passes().empty() ? std::string() : pm.passes().back().name;
    for (auto& inst : VerifyEachInstrumentations(last)) pm.AddInstrumentation(std::move(inst));
  }
  for (auto& inst : extra) pm.AddInstrumentation(std::move(inst));
  return pm;
}

ir::ProgramPtr RunPipeline(const ir::ProgramPtr& program, const PipelineOptions& options,
                           std::vector<pass::PassInstrumentationPtr> extra) {
  return BuildPassManager(options, std::move(extra)).Run(program);
}

}  // namespace cds::driver
